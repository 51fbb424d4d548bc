package gateway

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestListenTokenExchangeCallers: through the gateway, listens of two callers subscribed to the
// same resource of a backend configured for token exchange, of either era, reach the backend
// as each caller, with that caller's exchanged token, on a stream (a 2025-11-25 backend: a
// session, its resources/subscribe and its GET stream) of its own: never as the gateway, whose
// client credentials would have the backend tell a caller of changes to resources it refuses
// that caller, and never on a stream another caller opened. A caller of an issuer the backend's
// auth.subjectIssuers does not list reaches it not at all.
func TestListenTokenExchangeCallers(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		t.Run(map[bool]string{false: "2026-07-28", true: "2025-11-25"}[legacy], func(t *testing.T) {
			iss, partner := newExchangeIssuer(t), newIssuer(t)
			mallory := mintFor(t, partner, "mallory")
			// The token endpoint, behind a proxy that notes whether mallory's token reached it.
			var leaked atomic.Bool
			target, _ := url.Parse(iss.URL())
			proxy := httputil.NewSingleHostReverseProxy(target)
			tokenSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				r.Body = io.NopCloser(bytes.NewReader(body))
				if f, _ := url.ParseQuery(string(body)); f.Get("subject_token") == mallory {
					leaked.Store(true)
				}
				proxy.ServeHTTP(w, r)
			}))
			t.Cleanup(tokenSrv.Close)
			start := mcptest.StartServer
			if legacy {
				start = mcptest.StartLegacyServer
			}
			alpha := start(t, "alpha", mcptest.WithSubscriptions())
			gw, logs, stop := startLoggedGateway(t, func(c *Config) {
				trustIssuers(c, iss, partner)
				c.MRTR.Keys = testKeys
				c.Auth.Policy.Rules = []authz.RuleConfig{{ID: "all", Upstream: "*", Tools: []string{"*"},
					Resources: []string{"*"}, AnyScope: []string{"tools:use"}, Issuers: []string{iss.URL(), partner.URL()}}}
				u := exchangeUpstream("alpha", alpha.URL(), iss)
				u.Auth.SubjectIssuers = []string{iss.URL()}
				u.Auth.TokenURL = tokenSrv.URL + strings.TrimPrefix(iss.TokenURL(), iss.URL())
				c.Upstreams = []UpstreamConfig{u}
			})
			defer stop()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			// mallory's listen first: its stream, were it sent, would be the first the backend gets.
			<-listen(t, ctx, gw, `{"resourceSubscriptions":["alpha+`+mcptest.ResourceReadme+`"]}`, mintFor(t, partner, "mallory"))
			for _, who := range []string{"alice", "bob"} {
				events := listen(t, ctx, gw, `{"resourceSubscriptions":["alpha+`+mcptest.ResourceReadme+`"]}`, mintFor(t, iss, who))
				if ack := <-events; !strings.Contains(ack, "notifications/subscriptions/acknowledged") {
					t.Fatalf("%s: first event %s\n%s", who, ack, logs.String())
				}
			}
			// The acknowledgement comes once the streams are joined, not once the backend has
			// them: wait for both (bounded), then judge every listen request it received.
			var seen map[string]int
			for deadline := time.Now().Add(10 * time.Second); ; {
				seen = listensBySubject(t, alpha, legacy)
				if seen["alice"]+seen["bob"]+seen[""]+seen["mcp-gateway"] >= 2 || time.Now().After(deadline) {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			if leaked.Load() {
				t.Error("the token of a caller whose issuer the backend does not list reached its token endpoint")
			}
			if seen["alice"] != 1 || seen["bob"] != 1 || len(seen) != 2 {
				t.Fatalf("backend listens by the subject of their token %v, want one each for alice and bob\n%s", seen, logs.String())
			}
		})
	}
}

// listensBySubject counts the listen requests s received (a 2025-11-25 backend's
// resources/subscribe, whose GET stream must go as the same subject) by the subject of
// their bearer token.
func listensBySubject(t *testing.T, s *mcptest.Server, legacy bool) map[string]int {
	t.Helper()
	seen := map[string]int{}
	if !legacy {
		for _, ex := range s.RequestsOf("subscriptions/listen") {
			seen[subOf(t, ex)]++
		}
		return seen
	}
	owners := map[string]string{} // session id: the subject that subscribed on it
	for _, ex := range s.Requests() {
		if ex.Method == http.MethodPost && strings.Contains(string(ex.Body), `"method":"resources/subscribe"`) {
			owners[ex.Header.Get("Mcp-Session-Id")] = subOf(t, ex)
			seen[subOf(t, ex)]++
		}
	}
	for _, ex := range s.Requests() {
		if owner, ok := owners[ex.Header.Get("Mcp-Session-Id")]; ok && ex.Method == http.MethodGet && subOf(t, ex) != owner {
			t.Fatalf("the GET stream of %q's session came as %q", owner, subOf(t, ex))
		}
	}
	return seen
}
