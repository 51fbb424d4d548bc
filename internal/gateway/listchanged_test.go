package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcp-gateway/gateway/internal/eventstream"
	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
	"github.com/mcp-gateway/gateway/metrics"
)

// listToolNames lists tools through a gateway and returns the namespaced names. It posts by
// hand: a go-sdk client session could answer from its own cache (ttlMs), and the test is about
// the gateway's.
func listToolNames(t *testing.T, gw Listeners) []string {
	t.Helper()
	status, _, body := post(t, "http://"+gw.MCP+"/mcp", modernHeaders("tools/list", ""),
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+testMeta+`}}`)
	var res struct {
		Result struct {
			Tools []struct{ Name string }
		}
	}
	if status != http.StatusOK || json.Unmarshal([]byte(body), &res) != nil {
		t.Fatalf("tools/list: %d %s", status, body)
	}
	names := make([]string, 0, len(res.Result.Tools))
	for _, tl := range res.Result.Tools {
		names = append(names, tl.Name)
	}
	return names
}

// TestListChangedReachesEveryReplica: two replicas sharing a real Redis both cache a backend's
// tools/list for the ten minutes it allows. A client listening through replica A hears
// tools/list_changed when the backend gains a tool; listing again through A right away, and
// through B once A's notice has reached it, shows the new tool, where both used to serve the
// cached list until its ttlMs ran out.
func TestListChangedReachesEveryReplica(t *testing.T) {
	redis := testredis.Start(t)
	alpha := mcptest.StartServer(t, "alpha", mcptest.WithCacheHints(600000, "public"))
	withRedis := func(c *Config) { c.Redis.URL = redis.URL() }
	a := startTestGateway(t, withRedis, alpha)
	b := startTestGateway(t, withRedis, alpha)

	for _, gw := range []Listeners{a, b, a, b} {
		if names := listToolNames(t, gw); slices.Contains(names, "alpha__fresh") {
			t.Fatalf("fresh listed before it exists: %v", names)
		}
	}
	if n := len(alpha.RequestsOf("tools/list")); n != 2 {
		t.Fatalf("%d backend lists, want 2: one per replica, then their caches", n)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events := listen(t, ctx, a, `{"toolsListChanged":true}`, "")
	if ack := <-events; !strings.Contains(ack, "notifications/subscriptions/acknowledged") {
		t.Fatalf("first event %s", ack)
	}
	// The gateway acknowledges before the backend has (the spec's guidance for gateways), so
	// the backend's own acknowledgement says when a change will reach the stream.
	waitBackendAcknowledgesListen(t, alpha)
	alpha.MCP().AddTool(&mcp.Tool{Name: "fresh", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	})
	select {
	case ev := <-events:
		if !strings.Contains(ev, "notifications/tools/list_changed") {
			t.Fatalf("event %s, want tools/list_changed", ev)
		}
	case <-time.After(30 * time.Second): // fail-safe
		t.Fatal("no list_changed through replica A")
	}
	if names := listToolNames(t, a); !slices.Contains(names, "alpha__fresh") {
		t.Fatalf("replica A lists %v after the notification, want alpha__fresh", names)
	}
	mcptest.WaitFor(t, "replica B lists the new tool", func() bool { return slices.Contains(listToolNames(t, b), "alpha__fresh") })
}

// waitBackendAcknowledgesListen waits until backend s has acknowledged a subscriptions/listen:
// the gateway acknowledges before the backend has (the spec's guidance for gateways), so the
// backend's own acknowledgement says when a change it announces will reach the stream.
func waitBackendAcknowledgesListen(t *testing.T, s *mcptest.Server) {
	t.Helper()
	mcptest.WaitFor(t, "the backend acknowledges the listen", func() bool {
		for _, ex := range s.RequestsOf("subscriptions/listen") {
			if bytes.Contains(ex.ResponseBody, []byte("notifications/subscriptions/acknowledged")) {
				return true
			}
		}
		return false
	})
}

// listen opens a subscriptions/listen through gw, with a bearer token unless tok is empty, and
// returns its events' data; the stream ends with ctx.
func listen(t *testing.T, ctx context.Context, gw Listeners, notifications, tok string) <-chan string {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":"L","method":"subscriptions/listen","params":{` + testMeta +
		`,"notifications":` + notifications + `}}`
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+gw.MCP+"/mcp", strings.NewReader(body))
	req.Header = modernHeaders("subscriptions/listen", "")
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		res.Body.Close()
		t.Fatalf("listen: status %d", res.StatusCode)
	}
	events := make(chan string, 16)
	go func() {
		defer close(events) // a stream that ends reads as "" from then on
		defer res.Body.Close()
		e := eventstream.NewReader(res.Body, 4<<10, 1<<20)
		for {
			ev, err := e.Next()
			if err != nil {
				return
			}
			if len(ev.Data) > 0 {
				events <- string(ev.Data)
			}
		}
	}()
	return events
}

func TestListChangedRelayReceive(t *testing.T) {
	var applied []string
	l := newListChangedRelay(nil, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	l.apply = func(upstream, method string) int { applied = append(applied, upstream+" "+method); return 1 }
	for _, msg := range []string{
		`not json`,
		`{"upstream":"alpha","method":"notifications/tools/list_changed"}`,                            // no replica
		`{"replica":"` + l.self + `","upstream":"alpha","method":"notifications/tools/list_changed"}`, // our own
		`{"replica":"other","upstream":"alpha","method":"notifications/prompts/list_changed"}`,
	} {
		l.receive([]byte(msg))
	}
	if len(applied) != 1 || applied[0] != "alpha notifications/prompts/list_changed" {
		t.Fatalf("applied %q, want only the other replica's prompts notice", applied)
	}
}

// TestListChangedRelayPublishFailure: with Redis gone, passing a notice on gives up within its
// timeout and is counted as a Redis error.
func TestListChangedRelayPublishFailure(t *testing.T) {
	srv := testredis.Start(t)
	r, err := store.NewRedis(store.RedisConfig{URL: srv.URL(), DialTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	reg := prometheus.NewRegistry()
	rec, err := metrics.New(reg, metrics.Options{})
	if err != nil {
		t.Fatal(err)
	}
	l := newListChangedRelay(r, rec, slog.New(slog.NewTextHandler(io.Discard, nil)))
	l.publish("alpha", "notifications/tools/list_changed")
	if got := noticeErrors(t, reg); got != 0 {
		t.Fatalf("%v notice errors with Redis up", got)
	}
	srv.Stop()
	l.publish("alpha", "notifications/tools/list_changed")
	if got := noticeErrors(t, reg); got != 1 {
		t.Fatalf("%v notice errors with Redis down, want 1", got)
	}
}

// noticeErrors reads mcp_gateway_redis_errors_total{op="notice"} from reg.
func noticeErrors(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != metrics.NameRedisErrors {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetName() == "op" && lp.GetValue() == metrics.RedisOpNotice {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}
