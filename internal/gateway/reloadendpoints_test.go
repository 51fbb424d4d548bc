package gateway

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestReloadEndsStreamsTheirEndpointRefuses: a pre-2026 client's GET stream is judged at a
// reload as its opening request would be now, and that request is a path as well as a token.
// Before, only the token was verified again, against the new issuers' settings: a stream opened
// on a tool set's endpoint ran on after the set was removed (the new configuration answers its
// path with nothing), also when the reload, without authentication, judged nothing at all; and a
// stream on the default endpoint whose token's audience a new tool set claimed (the endpoint now
// refuses it as a token for another endpoint) ran on too. Now each of those ends at the reload,
// and a stream the new configuration still serves runs on and still delivers.
func TestReloadEndsStreamsTheirEndpointRefuses(t *testing.T) {
	sets := func(names ...string) string {
		y := "toolsets:\n"
		for _, n := range names {
			y += "  - {name: " + n + ", include: [{upstream: alpha}]}\n"
		}
		return y
	}
	t.Run("a tool set removed", func(t *testing.T) {
		iss := newIssuer(t)
		alpha := mcptest.StartServer(t, "alpha", mcptest.WithSubscriptions())
		config := func(names ...string) string { return authYAML(iss.URL(), `["echo"]`, "", alpha) + sets(names...) }
		f := startReloadGateway(t, "1h", config("ro", "rw"))
		tok := mintFor(t, iss, "alice")
		kept := openLegacyStream(t, f.url()+"/rw", tok)
		waitBackendAcknowledgesListen(t, alpha)
		removed := openLegacyStream(t, f.url()+"/ro", tok)
		if err := f.reload(t, "1h", config("rw")); err != nil {
			t.Fatalf("reload: %v", err)
		}
		removed.wantEnded(t, "the stream of a removed tool set outlived the reload")
		wantDelivers(t, alpha, kept)
	})
	t.Run("a tool set removed, without authentication", func(t *testing.T) {
		alpha := mcptest.StartServer(t, "alpha", mcptest.WithSubscriptions())
		config := func(names ...string) string {
			return "auth: {disabled: true}\nupstreams:\n" + upstreamYAML(alpha) + sets(names...)
		}
		f := startReloadGateway(t, "1h", config("ro"))
		kept := openLegacyStream(t, f.url(), "")
		waitBackendAcknowledgesListen(t, alpha)
		removed := openLegacyStream(t, f.url()+"/ro", "")
		if err := f.reload(t, "1h", config()); err != nil {
			t.Fatalf("reload: %v", err)
		}
		removed.wantEnded(t, "the anonymous stream of a removed tool set outlived the reload")
		wantDelivers(t, alpha, kept)
	})
	t.Run("the endpoint narrowed below the token's audience", func(t *testing.T) {
		iss := newIssuer(t)
		alpha := mcptest.StartServer(t, "alpha", mcptest.WithSubscriptions())
		// The issuer's audiences are the operator's own: the gateway's and the set's to come.
		ro := testResource + "/ro"
		config := func(names ...string) string {
			return strings.Replace(authYAML(iss.URL(), `["echo"]`, "", alpha),
				`{issuer: "`+iss.URL()+`"}`, `{issuer: "`+iss.URL()+`", audiences: ["`+testResource+`", "`+ro+`"]}`, 1) +
				sets(names...)
		}
		f := startReloadGateway(t, "1h", config("rw"))
		narrow := mint(t, iss, devissuer.Claims{"sub": "alice", "scope": "tools:use", "aud": ro})
		kept := openLegacyStream(t, f.url()+"/rw", mintFor(t, iss, "bob"))
		waitBackendAcknowledgesListen(t, alpha)
		refused := openLegacyStream(t, f.url(), narrow)
		if err := f.reload(t, "1h", config("rw", "ro")); err != nil {
			t.Fatalf("reload: %v", err)
		}
		refused.wantEnded(t, "the default endpoint's stream of a token for the new tool set outlived the reload")
		wantStreamRefused(t, f.url(), narrow, http.StatusUnauthorized)
		wantDelivers(t, alpha, kept)
	})
	t.Run("an origin no longer allowed", func(t *testing.T) {
		alpha := mcptest.StartServer(t, "alpha", mcptest.WithSubscriptions())
		body := "auth: {disabled: true}\nupstreams:\n" + upstreamYAML(alpha)
		const app = "https://app.example"
		f := startReloadGateway(t, "1h", body)
		allowing := func(origins string) {
			conf := strings.Replace(fmt.Sprintf(reloadBase, "1h"), `publicURL:`, `allowedOrigins: [`+origins+`], publicURL:`, 1) + body
			if err := os.WriteFile(f.file, []byte(conf), 0o600); err != nil {
				t.Fatal(err)
			}
			f.hup <- syscall.SIGHUP
			if err := <-f.results; err != nil {
				t.Fatalf("reload: %v", err)
			}
		}
		allowing(`"` + app + `", "https://other.example"`)
		kept := openLegacyStream(t, f.url(), "")
		waitBackendAcknowledgesListen(t, alpha)
		s := openLegacyStreamFrom(t, f.url(), "", app)
		allowing(`"https://other.example"`)
		s.wantEnded(t, "the stream of an origin no longer allowed outlived the reload")
		wantDelivers(t, alpha, kept)
	})
	t.Run("the session's version no longer served", func(t *testing.T) {
		// Every request of the session is 404 once legacy.versions stops naming its version:
		// its stream must not go on relaying to a session the gateway no longer knows.
		alpha := mcptest.StartServer(t, "alpha", mcptest.WithSubscriptions())
		config := "auth: {disabled: true}\nupstreams:\n" + upstreamYAML(alpha)
		f := startReloadGateway(t, "1h", config)
		kept := openLegacyStreamAt(t, f.url(), "", "", "2025-06-18")
		waitBackendAcknowledgesListen(t, alpha)
		removed := openLegacyStream(t, f.url(), "")
		if err := f.reload(t, "1h", config+"legacy: {versions: [\"2025-06-18\"]}\n"); err != nil {
			t.Fatalf("reload: %v", err)
		}
		removed.wantEnded(t, "the stream of a session at a version no longer served outlived the reload")
		wantDelivers(t, alpha, kept)
	})
	t.Run("the pre-2026 stream turned off", func(t *testing.T) {
		alpha := mcptest.StartServer(t, "alpha")
		config := "auth: {disabled: true}\nupstreams:\n" + upstreamYAML(alpha)
		f := startReloadGateway(t, "1h", config)
		s := openLegacyStream(t, f.url(), "")
		if err := f.reload(t, "1h", config+"legacy: {getStream: false}\n"); err != nil {
			t.Fatalf("reload: %v", err)
		}
		s.wantEnded(t, "the stream outlived the reload that turned the pre-2026 stream off")
	})
}

// wantDelivers wants s, a stream whose listen backend has acknowledged, still to deliver: a
// change the backend announces reaches it.
func wantDelivers(t *testing.T, backend *mcptest.Server, s *legacyStream) {
	t.Helper()
	backend.MCP().AddTool(&mcp.Tool{Name: "fresh", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	s.wantLine(t, "notifications/tools/list_changed")
}

// TestReloadJudgesAStreamRegisteredAfterIt: a GET stream admitted to a component set just before
// a reload replaces the set, and registered there only after the reload judged the set's
// streams, is judged as they were when it registers: refused, it ends at once; accepted, it runs
// on and delivers. The reload runs in the window itself (runOptions.streamAdmitted), which
// otherwise lasts a few instructions: without that judgement such a stream ran on under the
// replaced authentication until the set's server.shutdownTimeout.
func TestReloadJudgesAStreamRegisteredAfterIt(t *testing.T) {
	const other = "https://other.example/mcp"
	for _, tc := range []struct {
		name    string
		refused bool
	}{{"refused", true}, {"accepted", false}} {
		t.Run(tc.name, func(t *testing.T) {
			iss := newIssuer(t)
			alpha := mcptest.StartServer(t, "alpha", mcptest.WithSubscriptions())
			config := func(audiences string) string {
				return strings.Replace(authYAML(iss.URL(), `["echo"]`, "", alpha),
					`{issuer: "`+iss.URL()+`"}`, `{issuer: "`+iss.URL()+`", audiences: [`+audiences+`]}`, 1)
			}
			reloaded := make(chan error, 1)
			var once sync.Once
			f := startReloadGatewayAdmitting(t, "1h", config(`"`+testResource+`", "`+other+`"`),
				func(f *reloadGateway, _ *http.Request) {
					// The stream is admitted to the running set: the reload replaces that set
					// and judges its streams before this one registers.
					once.Do(func() {
						f.hup <- syscall.SIGHUP
						reloaded <- <-f.results
					})
				})
			aud := testResource
			if tc.refused {
				aud = other
			}
			tok := mint(t, iss, devissuer.Claims{"sub": "alice", "scope": "tools:use", "aud": aud})
			f.write(t, "1h", config(`"`+testResource+`"`)) // read by the reload the stream's admission starts
			if tc.refused {
				// Answered with the stream's start or an error, the GET ends either way.
				ctx, cancel := context.WithTimeout(context.Background(), reloadWait)
				defer cancel()
				res := legacyGet(t, ctx, f.url(), tok, legacySession(t, f.url(), tok), "")
				wantReloaded(t, reloaded)
				_, err := io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if ctx.Err() != nil {
					t.Fatalf("the stream registered after the reload that refuses its token outlived it (%d, %v)", res.StatusCode, err)
				}
				return
			}
			s := openLegacyStream(t, f.url(), tok)
			wantReloaded(t, reloaded)
			waitBackendAcknowledgesListen(t, alpha)
			wantDelivers(t, alpha, s)
		})
	}
}

// wantReloaded wants the reload a stream's admission started to have ended, and applied.
func wantReloaded(t *testing.T, reloaded <-chan error) {
	t.Helper()
	select {
	case err := <-reloaded:
		if err != nil {
			t.Fatalf("reload: %v", err)
		}
	default:
		t.Fatal("the stream was answered before the reload its admission started ended")
	}
}
