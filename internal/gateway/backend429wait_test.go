package gateway

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/testsupport/legacyclient"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// throttleAll makes a backend answer every request with 429 and Retry-After: after (seconds)
// while on is set, as a backend whose quota for the gateway ran out, counting in got the POSTs
// (the requests it is asked; a pre-2026 session's DELETE only lets the session go).
func throttleAll(on *atomic.Bool, got *atomic.Int64, after string) mcptest.Option {
	return mcptest.WithMiddleware(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !on.Load() {
				next.ServeHTTP(w, r)
				return
			}
			if r.Method == http.MethodPost {
				got.Add(1)
			}
			w.Header().Set("Retry-After", after)
			http.Error(w, backendSecret, http.StatusTooManyRequests)
		})
	})
}

// TestBackendRetryAfterHonoured: once an optional backend answers 429 with Retry-After, the
// gateway sends it nothing until the wait passes, through a real gateway in front of real Go SDK
// backends (one of each era), to 2026-07-28 and 2025-11-25 clients (the Go SDK's and by hand):
// lists leave it out without asking it (partial, its tools absent) with a ttlMs within the wait
// and the other backend's ttl, and calls to it are answered at once with 429 and the wait left;
// the health probe waits too and the backend stays up; the warning is logged once per wait, and
// mcp_gateway_upstream_rate_limit_waits_total counts the wait. Without the wait every list
// asked the throttled backend again and logged a warning each time.
func TestBackendRetryAfterHonoured(t *testing.T) {
	for _, legacyBackend := range []bool{false, true} {
		t.Run(fmt.Sprintf("legacyBackend=%v", legacyBackend), func(t *testing.T) {
			t.Parallel()
			var on atomic.Bool
			var got atomic.Int64
			alpha := mcptest.StartServer(t, "alpha", mcptest.WithCacheHints(60000, "public"))
			start := mcptest.StartServer
			if legacyBackend {
				start = mcptest.StartLegacyServer
			}
			slow := start(t, "slow", throttleAll(&on, &got, "30"))
			gw, logs, stop := startLoggedGateway(t, func(c *Config) {
				c.Auth.Disabled = true
				c.Log.Level = "warn"
			}, alpha, slow)
			url := "http://" + gw.MCP + "/mcp"
			// The start-up health probe runs beside the test: one still on its way when slow
			// starts throttling was sent before any wait, and would be counted as one sent after.
			mcptest.WaitFor(t, "slow to get the start-up probe's last request", func() bool {
				return startupProbeSeen(slow, legacyBackend)
			})
			if names := listToolNames(t, gw); !hasPrefixed(names, "slow__") {
				t.Fatalf("before throttling, tools/list lacks slow's tools: %v", names)
			}
			on.Store(true)

			listBody := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + testMeta + `}}`
			// What the first list finds slow answering: its requests already under way (a
			// session's handshake, a probe's ping) are answered 429 too; none may follow.
			first := int64(-1)
			for i := range 5 {
				status, _, body := post(t, url, modernHeaders("tools/list", ""), listBody)
				var res struct {
					Result struct {
						Tools []struct{ Name string }
						TTLMs *int64
					}
				}
				if status != http.StatusOK || json.Unmarshal([]byte(body), &res) != nil || res.Result.TTLMs == nil {
					t.Fatalf("list %d: %d %s", i, status, body)
				}
				names := make([]string, 0, len(res.Result.Tools))
				for _, tl := range res.Result.Tools {
					names = append(names, tl.Name)
				}
				if hasPrefixed(names, "slow__") || !hasPrefixed(names, "alpha__") {
					t.Errorf("list %d while slow is rate limiting: %v, want alpha's tools only", i, names)
				}
				if ttl := *res.Result.TTLMs; ttl <= 0 || ttl > 30000 {
					t.Errorf("list %d: ttlMs %d, want within the wait (0, 30000]", i, ttl)
				}
				if i == 0 {
					first = got.Load()
				}
			}
			if n := got.Load(); first < 1 || n != first {
				t.Errorf("slow got %d requests by the first list and %d by the fifth: the lists after its 429 must not ask it", first, n)
			}

			// A call to it is answered at once with the wait left, and not sent.
			callBody := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{` + testMeta + `,"name":"slow__echo","arguments":{"text":"hi"}}}`
			status, hdr, body := post(t, url, modernHeaders("tools/call", "slow__echo"), callBody)
			secs, _ := strconv.Atoi(hdr.Get("Retry-After"))
			if status != http.StatusTooManyRequests || secs < 1 || secs > 30 || !strings.Contains(body, "Backend slow is rate limiting") ||
				strings.Contains(body, backendSecret) {
				t.Errorf("call while waiting: %d, Retry-After %q: %s", status, hdr.Get("Retry-After"), body)
			}
			raw := &legacyclient.Raw{}
			sid := raw.Initialize(t, url)
			r := raw.Post(t, url, sid, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow__echo","arguments":{"text":"hi"}}}`)
			if r.Status != http.StatusTooManyRequests || r.Header.Get("Retry-After") == "" {
				t.Errorf("2025-11-25 call while waiting: %s", r)
			}
			cs := connectEra(t, gw, "2025-11-25")
			res, err := cs.ListTools(t.Context(), &mcp.ListToolsParams{})
			if err != nil {
				t.Fatalf("2025-11-25 tools/list: %v", err)
			}
			names := make([]string, 0, len(res.Tools))
			for _, tl := range res.Tools {
				names = append(names, tl.Name)
			}
			if hasPrefixed(names, "slow__") || !hasPrefixed(names, "alpha__") {
				t.Errorf("2025-11-25 list while slow is rate limiting: %v", names)
			}
			if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "slow__echo", Arguments: map[string]any{"text": "hi"}}); err == nil ||
				!strings.Contains(err.Error(), "Too Many Requests") {
				t.Errorf("the Go SDK 2025-11-25 client's call while waiting: %v, want Too Many Requests", err)
			}
			if n := got.Load(); n != first {
				t.Errorf("slow got %d requests, want the first list's %d: calls and lists of both eras must wait", n, first)
			}

			// The health probe waits too, the backend stays up, and the wait is counted once.
			if ready := get(t, "http://"+gw.Admin+"/readyz"); !strings.Contains(ready, `"ready":true`) {
				t.Errorf("/readyz while slow is rate limiting: %s", ready)
			}
			scrape := scrapeAdmin(t, gw)
			for _, want := range []string{
				`mcp_gateway_upstream_up{upstream="slow"} 1`,
				`mcp_gateway_upstream_rate_limit_waits_total{upstream="slow"} 1`,
				`mcp_gateway_upstream_circuit_state{upstream="slow"} 0`,
			} {
				if !scrape.Has(want) {
					t.Errorf("/metrics lacks %s", want)
				}
			}
			// The log is written behind the requests (a queue drained in batches): stopping the
			// gateway writes out every line, so what is counted is all that was logged.
			stop()
			text := logs.String()
			if n := strings.Count(text, "upstream rate limiting"); n != 1 {
				t.Errorf("%d rate-limit warnings, want one for the one wait:\n%s", n, text)
			}
			if strings.Contains(text, "upstream left out of list") || strings.Contains(text, "health probe failed") ||
				strings.Contains(text, "server/discover failed") {
				t.Errorf("a warning per list or probe while waiting:\n%s", text)
			}
			if strings.Contains(text, backendSecret) {
				t.Errorf("the backend's words reached the log:\n%s", text)
			}
		})
	}
}

// startupProbeSeen reports whether s, a backend the gateway has sent nothing else, received the
// last request of the gateway's start-up health probe: a pre-2026 backend's ping, which
// follows its server/discover and initialize; a 2026-07-28 backend's server/discover, its
// only one.
func startupProbeSeen(s *mcptest.Server, legacy bool) bool {
	last := "server/discover"
	if legacy {
		last = "ping"
	}
	for _, e := range s.Requests() {
		var m struct{ Method string }
		if e.Method == http.MethodPost && json.Unmarshal(e.Body, &m) == nil && m.Method == last {
			return true
		}
	}
	return false
}

// hasPrefixed reports whether a name of names starts with prefix.
func hasPrefixed(names []string, prefix string) bool {
	for _, n := range names {
		if strings.HasPrefix(n, prefix) {
			return true
		}
	}
	return false
}
