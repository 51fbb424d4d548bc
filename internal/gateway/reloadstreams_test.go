package gateway

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestReloadEndsStreamsItsAuthenticationRefuses: a pre-2026 client's GET stream runs on the
// configuration it was opened on until that one's server.shutdownTimeout (here an hour). A
// reload that changed authentication left it running: an anonymous stream after authentication
// was turned on, a stream whose token the new issuer settings refuse, kept receiving
// notifications. Now each is judged at the reload as its opening request would be: refused ones
// end cleanly (and a new GET with the same credentials is refused), accepted ones run on and
// still deliver.
func TestReloadEndsStreamsItsAuthenticationRefuses(t *testing.T) {
	const other = "https://other.example/mcp"
	t.Run("authentication turned on", func(t *testing.T) {
		iss := newIssuer(t)
		alpha := mcptest.StartServer(t, "alpha")
		f := startReloadGateway(t, "1h", "auth: {disabled: true}\nupstreams:\n"+upstreamYAML(alpha))
		s := openLegacyStream(t, f.url(), "")
		if err := f.reload(t, "1h", authYAML(iss.URL(), `["echo"]`, "", alpha)); err != nil {
			t.Fatalf("reload: %v", err)
		}
		s.wantEnded(t, "the anonymous stream outlived the reload that turned authentication on")
		wantStreamRefused(t, f.url(), "", http.StatusUnauthorized)
	})
	t.Run("authentication turned off", func(t *testing.T) {
		iss := newIssuer(t)
		alpha := mcptest.StartServer(t, "alpha")
		f := startReloadGateway(t, "1h", authYAML(iss.URL(), `["echo"]`, "", alpha))
		s := openLegacyStream(t, f.url(), mintFor(t, iss, "alice"))
		if err := f.reload(t, "1h", "auth: {disabled: true}\nupstreams:\n"+upstreamYAML(alpha)); err != nil {
			t.Fatalf("reload: %v", err)
		}
		s.wantEnded(t, "the stream of alice's token outlived the reload that turned authentication off")
	})
	t.Run("an audience taken away", func(t *testing.T) {
		iss := newIssuer(t)
		alpha := mcptest.StartServer(t, "alpha", mcptest.WithSubscriptions())
		config := func(audiences string) string {
			return strings.Replace(authYAML(iss.URL(), `["echo"]`, "", alpha),
				`{issuer: "`+iss.URL()+`"}`, `{issuer: "`+iss.URL()+`", audiences: [`+audiences+`]}`, 1)
		}
		f := startReloadGateway(t, "1h", config(`"`+testResource+`", "`+other+`"`))
		alice := mint(t, iss, devissuer.Claims{"sub": "alice", "scope": "tools:use", "aud": other})
		// bob's stream first, its listen acknowledged by the backend before alice's opens: the
		// acknowledgement waited for below is then surely its own.
		kept := openLegacyStream(t, f.url(), mintFor(t, iss, "bob"))
		waitBackendAcknowledgesListen(t, alpha)
		refused := openLegacyStream(t, f.url(), alice)
		if err := f.reload(t, "1h", config(`"`+testResource+`"`)); err != nil {
			t.Fatalf("reload: %v", err)
		}
		refused.wantEnded(t, "the stream of a token of the audience taken away outlived the reload")
		wantStreamRefused(t, f.url(), alice, http.StatusUnauthorized)
		// bob's stream still delivers: a change the backend announces now reaches it.
		alpha.MCP().AddTool(&mcp.Tool{Name: "fresh", InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
		kept.wantLine(t, "notifications/tools/list_changed")
	})
}

// legacyStream is a pre-2026 client's GET stream read line by line.
type legacyStream struct {
	ctx   context.Context
	lines <-chan string // closed when the stream ends
}

// openLegacyStream initializes a pre-2026 session (with a bearer token unless tok is empty) and
// opens its GET stream.
func openLegacyStream(t *testing.T, url, tok string) *legacyStream {
	t.Helper()
	return openLegacyStreamFrom(t, url, tok, "")
}

// openLegacyStreamFrom is openLegacyStream by a page of origin (no Origin header when empty).
func openLegacyStreamFrom(t *testing.T, url, tok, origin string) *legacyStream {
	t.Helper()
	return openLegacyStreamAt(t, url, tok, origin, "2025-11-25")
}

// openLegacyStreamAt is openLegacyStreamFrom with a session initialized at version.
func openLegacyStreamAt(t *testing.T, url, tok, origin, version string) *legacyStream {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), reloadWait)
	t.Cleanup(cancel)
	h := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
	if tok != "" {
		h.Set("Authorization", "Bearer "+tok)
	}
	if origin != "" {
		h.Set("Origin", origin)
	}
	res := legacyGetAt(t, ctx, url, tok, legacySessionAt(t, url, h, version), origin, version)
	return readLegacyStream(t, ctx, res)
}

// readLegacyStream reads the GET stream res, which must be 200, line by line until it ends or
// ctx is done.
func readLegacyStream(t *testing.T, ctx context.Context, res *http.Response) *legacyStream {
	t.Helper()
	if res.StatusCode != http.StatusOK {
		res.Body.Close()
		t.Fatalf("GET stream: %d", res.StatusCode)
	}
	lines := make(chan string, 16)
	go func() {
		defer close(lines)
		defer res.Body.Close()
		for sc := bufio.NewScanner(res.Body); sc.Scan(); {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
	}()
	return &legacyStream{ctx: ctx, lines: lines}
}

// legacySession initializes a pre-2026 session (with a bearer token unless tok is empty) and
// returns its id.
func legacySession(t *testing.T, url, tok string) string {
	t.Helper()
	h := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
	if tok != "" {
		h.Set("Authorization", "Bearer "+tok)
	}
	return legacySessionWith(t, url, h)
}

// legacySessionWith initializes a pre-2026 session with the request headers h and returns its id.
func legacySessionWith(t *testing.T, url string, h http.Header) string {
	t.Helper()
	return legacySessionAt(t, url, h, "2025-11-25")
}

// legacySessionAt is legacySessionWith negotiating version, which the gateway must serve.
func legacySessionAt(t *testing.T, url string, h http.Header, version string) string {
	t.Helper()
	_, rh, body := post(t, url, h,
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+version+`","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	sid := rh.Get("Mcp-Session-Id")
	if sid == "" || !strings.Contains(body, `"protocolVersion":"`+version+`"`) {
		t.Fatalf("initialize: %s", body)
	}
	return sid
}

// legacyGet sends a pre-2026 GET stream request for session sid, by a page of origin unless it
// is empty.
func legacyGet(t *testing.T, ctx context.Context, url, tok, sid, origin string) *http.Response {
	t.Helper()
	return legacyGetAt(t, ctx, url, tok, sid, origin, "2025-11-25")
}

// legacyGetAt is legacyGet for a session negotiated at version.
func legacyGetAt(t *testing.T, ctx context.Context, url, tok, sid, origin, version string) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header = http.Header{"Accept": {"text/event-stream"}, "Mcp-Protocol-Version": {version}}
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// wantEnded reads the stream to its end and wants the gateway, not the test's deadline, to
// have ended it.
func (s *legacyStream) wantEnded(t *testing.T, outlived string) {
	t.Helper()
	for range s.lines {
	}
	if s.ctx.Err() != nil {
		t.Fatal(outlived)
	}
}

// wantLine reads the stream until a line holds want.
func (s *legacyStream) wantLine(t *testing.T, want string) {
	t.Helper()
	for line := range s.lines {
		if strings.Contains(line, want) {
			return
		}
	}
	t.Fatalf("the stream ended (deadline passed: %v) without %s: the reload ended a stream it still accepts", s.ctx.Err() != nil, want)
}

// wantStreamRefused wants a new pre-2026 session with the same credentials (tok, or none)
// refused with status: the client that reconnects is authenticated under the new rules.
func wantStreamRefused(t *testing.T, url, tok string, status int) {
	t.Helper()
	h := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
	if tok != "" {
		h.Set("Authorization", "Bearer "+tok)
	}
	got, _, body := post(t, url, h,
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	if got != status {
		t.Fatalf("a new session with the same credentials: %d %s, want %d", got, body, status)
	}
}
