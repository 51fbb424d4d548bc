package gateway

import (
	"context"
	"net/http"
	"strings"
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
// that caller, and never on a stream another caller opened.
func TestListenTokenExchangeCallers(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		t.Run(map[bool]string{false: "2026-07-28", true: "2025-11-25"}[legacy], func(t *testing.T) {
			iss := newExchangeIssuer(t)
			start := mcptest.StartServer
			if legacy {
				start = mcptest.StartLegacyServer
			}
			alpha := start(t, "alpha", mcptest.WithSubscriptions())
			gw, logs, stop := startLoggedGateway(t, func(c *Config) {
				trustIssuers(c, iss)
				c.MRTR.Keys = testKeys
				c.Auth.Policy.Rules = []authz.RuleConfig{{ID: "all", Upstream: "*", Tools: []string{"*"},
					Resources: []string{"*"}, AnyScope: []string{"tools:use"}}}
				c.Upstreams = []UpstreamConfig{exchangeUpstream("alpha", alpha.URL(), iss)}
			})
			defer stop()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
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
