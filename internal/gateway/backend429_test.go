package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/testsupport/legacyclient"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/mcphttp"
)

// backendSecret is what a throttling backend writes in its 429's body: no client sees it.
const backendSecret = "quota of tenant 42 exhausted"

// throttleOn makes a backend answer 429 to a request whose body holds "429:<mode>", as a
// backend throttling the gateway does, and 503 with Retry-After to one holding
// "overloaded-503"; anything else reaches the real server. The modes:
// plain (a text body, no Retry-After), rpc (a JSON-RPC -32023 body with retryAfterMs 1200, and
// a Retry-After of 60 the body overrides), secs (Retry-After: 2), date (an HTTP-date 2 s on),
// garbage (a Retry-After no one can read), long (Retry-After: 8), day (Retry-After: 86400).
// Each wait the tests wait out is as short as tells it from the 1 s taken when none can be
// read (wire.MinRetryAfter). answered counts the 429s.
func throttleOn(answered *atomic.Int64) mcptest.Option {
	return mcptest.WithMiddleware(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			if bytes.Contains(body, []byte("overloaded-503")) {
				w.Header().Set("Retry-After", "5")
				http.Error(w, backendSecret, http.StatusServiceUnavailable)
				return
			}
			i := bytes.Index(body, []byte("429:"))
			if i < 0 {
				r.Body = io.NopCloser(bytes.NewReader(body))
				next.ServeHTTP(w, r)
				return
			}
			mode, _, _ := strings.Cut(string(body[i+4:]), `"`)
			answered.Add(1)
			switch mode {
			case "rpc":
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Retry-After", "60")
				w.WriteHeader(http.StatusTooManyRequests)
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32023,"message":%q,"data":{"retryAfterMs":1200}}}`, backendSecret)
				return
			case "secs":
				w.Header().Set("Retry-After", "2")
			case "date":
				w.Header().Set("Retry-After", time.Now().Add(2*time.Second).UTC().Format(http.TimeFormat))
			case "long":
				w.Header().Set("Retry-After", "8")
			case "garbage":
				w.Header().Set("Retry-After", "soon-ish")
			case "day":
				w.Header().Set("Retry-After", "86400")
			}
			http.Error(w, backendSecret, http.StatusTooManyRequests)
		})
	})
}

// throttleCase is one 429 of throttleOn and the wait the client must be told: Retry-After in
// whole seconds, between lo and hi (an HTTP-date counts from when it was written).
type throttleCase struct {
	mode   string
	lo, hi int
}

// throttleCases are the 429s whose waits pass within seconds; "day" (capped at 10 minutes) is
// checked last, since the backend is then waited for that long.
var throttleCases = []throttleCase{
	{"plain", 1, 1}, {"rpc", 2, 2}, {"secs", 2, 2}, {"date", 1, 2}, {"garbage", 1, 1},
}

// waitOut polls a harmless call to tool until it is served: the wait the backend's last 429
// asked for has passed (until then the call is answered 429 without being sent).
func waitOut(t *testing.T, url, tool string) {
	t.Helper()
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":98,"method":"tools/call","params":{%s,"name":%q,"arguments":{"text":"fine"}}}`, testMeta, tool)
	deadline := time.Now().Add(30 * time.Second)
	for {
		status, _, got := post(t, url, modernHeaders("tools/call", tool), body)
		switch {
		case status == http.StatusOK:
			return
		case status != http.StatusTooManyRequests || time.Now().After(deadline):
			t.Fatalf("waiting out a 429: status %d: %s", status, got)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// checkThrottled checks one answer to a throttled call: its Retry-After (hdr, when the answer
// kept its status) and the JSON-RPC error e, -32012 naming the backend, or with draft -32023
// whose retryAfterMs agrees with the header.
func checkThrottled(t *testing.T, c throttleCase, backend string, draft bool, hdr http.Header, raw string) {
	t.Helper()
	if strings.Contains(raw, backendSecret) || strings.Contains(raw, "tenant") {
		t.Errorf("%s: the backend's own text reached the client: %s", c.mode, raw)
	}
	var m struct {
		Error *struct {
			Code    int
			Message string
			Data    *struct{ RetryAfterMs *int64 }
		}
	}
	if err := json.Unmarshal([]byte(raw), &m); err != nil || m.Error == nil {
		t.Fatalf("%s: not a JSON-RPC error: %v %s", c.mode, err, raw)
	}
	secs := -1
	if hdr != nil {
		secs, _ = strconv.Atoi(hdr.Get("Retry-After"))
		if secs < c.lo || secs > c.hi {
			t.Errorf("%s: Retry-After %q, want %d to %d", c.mode, hdr.Get("Retry-After"), c.lo, c.hi)
		}
	}
	wantPrefix := "Backend " + backend + " is rate limiting; retry after "
	// A call refused while the tools list the name is checked against is fetched again (a
	// listen told that the lists may have changed dropped it) says so.
	msg := strings.TrimSuffix(m.Error.Message, " (its tools/list, which the gateway reads to check the name); the call was not forwarded")
	if !strings.HasPrefix(msg, wantPrefix) {
		t.Errorf("%s: message %q, want %q...", c.mode, m.Error.Message, wantPrefix)
	} else if n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(msg, wantPrefix), "s")); err != nil ||
		n < c.lo || n > c.hi || (secs >= 0 && n != secs) {
		t.Errorf("%s: message %q, want a wait of %d to %d s (the header's %d)", c.mode, m.Error.Message, c.lo, c.hi, secs)
	}
	switch {
	case !draft && (m.Error.Code != -32012 || m.Error.Data != nil):
		t.Errorf("%s: error %d with data %v, want -32012 without data", c.mode, m.Error.Code, m.Error.Data)
	case draft && (m.Error.Code != -32023 || m.Error.Data == nil || m.Error.Data.RetryAfterMs == nil):
		t.Errorf("%s: error %d %s, want -32023 with data.retryAfterMs", c.mode, m.Error.Code, raw)
	case draft:
		ms := *m.Error.Data.RetryAfterMs
		if ms < int64(c.lo-1)*1000 || ms > int64(c.hi)*1000 || (c.mode == "rpc" && ms != 1200) {
			t.Errorf("%s: retryAfterMs %d, want within (%d, %d] s", c.mode, ms, c.lo-1, c.hi)
		}
	}
}

// TestBackendRateLimited: a backend answering 429 (it throttles the gateway), whatever its body
// and Retry-After, is answered as the gateway answers its own limits, through a real gateway in
// front of real Go SDK backends: 429 with Retry-After and -32012 naming the backend (SEP-3304's
// -32023 with data.retryAfterMs when server.draftErrors has rateLimited), the wait from the
// body's retryAfterMs, else the header (seconds or HTTP-date), else 1 s, clamped to 10 minutes,
// and never the backend's own words; to a 2026-07-28 client, a 2025-11-25 client (the Go SDK and
// by hand) and a 2025-03-26 batch item (in-band), from a 2026-07-28 and a pre-2026 backend. The
// backend is up all along (a 503 with Retry-After stays 502 "Backend unavailable"): 20 calls in
// a row while it is rate limiting open no circuit (whose threshold is 2); the first is sent
// once, never retried, and the other 19 are answered 429 unsent for the wait it named; /readyz
// stays ready, they are counted as rate_limited, and once the wait passes the next call is
// served. A day's Retry-After is cut to 10 minutes, and the call after it is told what is left.
func TestBackendRateLimited(t *testing.T) {
	t.Parallel()
	for _, draft := range []bool{false, true} {
		t.Run(fmt.Sprintf("draft=%v", draft), func(t *testing.T) {
			t.Parallel() // a gateway and backends of its own
			throttled := map[string]*atomic.Int64{"alpha": new(atomic.Int64), "old": new(atomic.Int64)}
			alpha := mcptest.StartServer(t, "alpha", throttleOn(throttled["alpha"]))
			old := mcptest.StartLegacyServer(t, "old", throttleOn(throttled["old"]))
			gw := startTestGateway(t, func(c *Config) {
				for i := range c.Upstreams {
					c.Upstreams[i].Breaker.Failures, c.Upstreams[i].Breaker.Cooldown = 2, time.Hour
				}
				if draft {
					c.Server.DraftErrors = []string{mcphttp.DraftRateLimited}
				}
			}, alpha, old)
			url := "http://" + gw.MCP + "/mcp"
			for _, be := range []*mcptest.Server{alpha, old} {
				tool := be.Name() + "__echo"
				t.Run(be.Name(), func(t *testing.T) {
					t.Parallel()
					callBody := func(id int, text string, meta bool) string {
						m := ""
						if meta {
							m = testMeta + ","
						}
						return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{%s"name":%q,"arguments":{"text":%q}}}`, id, m, tool, text)
					}
					t.Run("2026-07-28", func(t *testing.T) {
						for _, c := range throttleCases {
							waitOut(t, url, tool)
							status, hdr, body := post(t, url, modernHeaders("tools/call", tool), callBody(1, "429:"+c.mode, true))
							if status != http.StatusTooManyRequests {
								t.Fatalf("%s: status %d, want 429: %s", c.mode, status, body)
							}
							checkThrottled(t, c, be.Name(), draft, hdr, body)
						}
						// A 503, even with Retry-After, is the backend unavailable, as before.
						waitOut(t, url, tool)
						status, hdr, body := post(t, url, modernHeaders("tools/call", tool), callBody(1, "overloaded-503", true))
						if status != http.StatusBadGateway || hdr.Get("Retry-After") != "" || !strings.Contains(body, `"Backend unavailable"`) {
							t.Errorf("a 503 with Retry-After: status %d, Retry-After %q: %s", status, hdr.Get("Retry-After"), body)
						}
					})
					t.Run("2025-11-25", func(t *testing.T) {
						raw := &legacyclient.Raw{}
						sid := raw.Initialize(t, url)
						for _, c := range throttleCases {
							waitOut(t, url, tool)
							r := raw.Post(t, url, sid, callBody(2, "429:"+c.mode, false))
							if r.Status != http.StatusTooManyRequests || len(r.Msgs) != 1 {
								t.Fatalf("%s: %s, want 429 with the error", c.mode, r)
							}
							checkThrottled(t, c, be.Name(), draft, r.Header, string(r.Msgs[0]))
						}
						waitOut(t, url, tool) // the Go SDK client opens its GET stream at once
						cs := connectEra(t, gw, "2025-11-25")
						_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"text": "429:plain"}})
						if err == nil || !strings.Contains(err.Error(), "Too Many Requests") {
							t.Errorf("the Go SDK client's throttled call: %v, want Too Many Requests", err)
						}
						waitOut(t, url, tool)
						res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"text": "fine"}})
						if err != nil || mcptest.ResultText(res) != "fine" {
							t.Errorf("the Go SDK client's next call: %v %+v", err, res)
						}
					})
					t.Run("2025-03-26-batch", func(t *testing.T) {
						raw := &legacyclient.Raw{Protocol: legacyclient.Protocol20250326}
						sid := raw.Initialize(t, url)
						waitOut(t, url, tool)
						r := raw.Post(t, url, sid, "["+callBody(1, "429:secs", false)+","+callBody(2, "fine", false)+"]")
						if r.Status != http.StatusOK || len(r.Msgs) != 2 {
							t.Fatalf("batch: %s", r)
						}
						for _, m := range r.Msgs {
							var a struct {
								ID     int
								Result json.RawMessage
							}
							_ = json.Unmarshal(m, &a)
							switch a.ID {
							case 1:
								checkThrottled(t, throttleCase{"secs", 2, 2}, be.Name(), draft, nil, string(m))
							case 2:
								// Served, or, once the first item's 429 came back, answered with
								// the wait it left, unsent.
								if !strings.Contains(string(a.Result), `"fine"`) {
									checkThrottled(t, throttleCase{"secs", 1, 2}, be.Name(), draft, nil, string(m))
								}
							}
						}
					})
					t.Run("not-a-failure", func(t *testing.T) {
						waitOut(t, url, tool)
						before := throttled[be.Name()].Load()
						for i := range 20 {
							status, _, body := post(t, url, modernHeaders("tools/call", tool), callBody(i, "429:plain", true))
							if status != http.StatusTooManyRequests {
								t.Fatalf("throttled call %d: status %d: %s", i, status, body)
							}
						}
						if n := throttled[be.Name()].Load() - before; n != 1 {
							t.Errorf("the backend got %d throttled calls, want 1: the first sent once, never retried, the rest held back for its wait", n)
						}
						waitOut(t, url, tool)
						status, _, body := post(t, url, modernHeaders("tools/call", tool), callBody(99, "after", true))
						if status != http.StatusOK || !strings.Contains(body, `"after"`) {
							t.Fatalf("the call after the 429s: status %d: %s", status, body)
						}
						if ready := get(t, "http://"+gw.Admin+"/readyz"); !strings.Contains(ready, `"ready":true`) {
							t.Errorf("/readyz after 20 429s: %s", ready)
						}
						scrape := scrapeAdmin(t, gw)
						for _, want := range []string{
							`mcp_gateway_upstream_circuit_state{upstream="` + be.Name() + `"} 0`,
							`mcp_gateway_upstream_up{upstream="` + be.Name() + `"} 1`,
							`mcp_gateway_upstream_requests_total{method="tools/call",outcome="rate_limited",upstream="` + be.Name() + `"}`,
							`mcp_gateway_upstream_rate_limit_waits_total{upstream="` + be.Name() + `"}`,
						} {
							if !scrape.Has(want) {
								t.Errorf("/metrics lacks %s", want)
							}
						}
						if scrape.Has(`outcome="bad_response",upstream="` + be.Name() + `"`) {
							t.Errorf("a 429 was counted as a bad response")
						}
					})
					// Last: a day's Retry-After is cut to 10 minutes, which the next call is told
					// is left, unsent.
					t.Run("capped", func(t *testing.T) {
						waitOut(t, url, tool)
						before := throttled[be.Name()].Load()
						status, hdr, body := post(t, url, modernHeaders("tools/call", tool), callBody(1, "429:day", true))
						if status != http.StatusTooManyRequests {
							t.Fatalf("day: status %d, want 429: %s", status, body)
						}
						checkThrottled(t, throttleCase{"day", 600, 600}, be.Name(), draft, hdr, body)
						status, hdr, body = post(t, url, modernHeaders("tools/call", tool), callBody(2, "fine", true))
						if status != http.StatusTooManyRequests {
							t.Fatalf("the call after: status %d, want 429: %s", status, body)
						}
						checkThrottled(t, throttleCase{"day", 599, 600}, be.Name(), draft, hdr, body)
						if n := throttled[be.Name()].Load() - before; n != 1 {
							t.Errorf("the backend got %d throttled calls, want 1", n)
						}
					})
				})
			}
		})
	}
}

// TestGetStreamThroughRateLimitWaits: a pre-2026 client whose GET stream opens while every
// backend is in a 429's wait keeps its stream and its session. The Go SDK client (at 2025-11-25,
// reconnecting nothing: a stream the gateway ended would close its session) connects while a
// 2026-07-28 and a pre-2026 backend both wait; its stream stays open through the waits, each
// backend's listen is opened once its wait has passed, and the client is then told the tools
// may have changed (the lists it read meanwhile left both out), lists them again with both, and
// its calls reach both.
func TestGetStreamThroughRateLimitWaits(t *testing.T) {
	t.Parallel()
	alpha := mcptest.StartServer(t, "alpha", throttleOn(new(atomic.Int64)))
	old := mcptest.StartLegacyServer(t, "old", throttleOn(new(atomic.Int64)))
	gw := startTestGateway(t, nil, alpha, old)
	url := "http://" + gw.MCP + "/mcp"
	call := func(tool, text string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{%s,"name":%q,"arguments":{"text":%q}}}`, testMeta, tool, text)
	}
	for _, tool := range []string{"alpha__echo", "old__echo"} {
		waitOut(t, url, tool) // the gateway has discovered and listed it
		if status, _, body := post(t, url, modernHeaders("tools/call", tool), call(tool, "429:long")); status != http.StatusTooManyRequests {
			t.Fatalf("%s: status %d, want 429: %s", tool, status, body)
		}
	}
	var changed atomic.Int64
	cs := connectEra(t, gw, "2025-11-25",
		mcptest.WithToolListChanged(func(context.Context, *mcp.ToolListChangedRequest) { changed.Add(1) }))
	for _, tool := range []string{"alpha__echo", "old__echo"} {
		// The client connected (and opened its GET stream) during the waits.
		if status, _, body := post(t, url, modernHeaders("tools/call", tool), call(tool, "fine")); status != http.StatusTooManyRequests {
			t.Fatalf("%s after the client connected: status %d, want 429 (still waiting): %s", tool, status, body)
		}
	}
	// Each backend's stream starts once its own wait has passed, and tells the client then: it
	// lists again on each notice until the list has both (a second notice written while the
	// first is still queued is one).
	for seen := int64(0); ; {
		mcptest.WaitFor(t, "the client told the tools may have changed", func() bool { return changed.Load() > seen })
		seen = changed.Load()
		res, err := cs.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatalf("the client's list after a notice: %v", err)
		}
		var listed []string
		for _, tl := range res.Tools {
			listed = append(listed, tl.Name)
		}
		if slices.Contains(listed, "alpha__echo") && slices.Contains(listed, "old__echo") {
			break
		}
	}
	for _, tool := range []string{"alpha__echo", "old__echo"} {
		r, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"text": "after"}})
		if err != nil || mcptest.ResultText(r) != "after" {
			t.Errorf("%s after the waits: %v %+v", tool, err, r)
		}
	}
}
