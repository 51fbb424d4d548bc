package pre2026

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/redis/go-redis/v9"

	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
	"github.com/mcp-gateway/gateway/mcphttp"
)

// droppingNotices publishes like its store, except the first notice of kind, which it
// publishes in one transaction with CLIENT KILL TYPE pubsub, the kill first: Redis drops every
// subscriber's connection (a failover, a network blip) at exactly that publish, so the notice
// reaches nobody while go-redis makes the subscriptions again.
type droppingNotices struct {
	store.Notices
	raw     *redis.Client
	channel func(topic string) string
	kind    string
	// topic, when set, makes the first notice on it the one dropped, whatever its kind.
	topic   string
	dropped atomic.Bool
}

// Publish publishes msg, in the transaction that drops the subscriptions when it is the first
// of d.kind.
func (d *droppingNotices) Publish(ctx context.Context, topic string, msg []byte) error {
	var n replyNotice
	match := topic == d.topic
	if d.topic == "" {
		match = json.Unmarshal(msg, &n) == nil && n.Type == d.kind
	}
	if !match || !d.dropped.CompareAndSwap(false, true) {
		return d.Notices.Publish(ctx, topic, msg)
	}
	_, err := d.raw.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.ClientKillByFilter(ctx, "TYPE", "pubsub")
		p.Publish(ctx, d.channel(topic), msg)
		return nil
	})
	return err
}

// answerStatus passes a client's requests on and reports the status of every POST to host.
type answerStatus struct {
	base   http.RoundTripper
	host   string
	status chan int
}

func (s *answerStatus) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := s.base.RoundTrip(r)
	if err == nil && r.Method == http.MethodPost && r.URL.Host == s.host {
		s.status <- res.StatusCode
	}
	return res, err
}

// TestAnswerSurvivesDroppedSubscriptions: two replicas share a real Redis; a go-sdk client at
// 2025-11-25 calls a 2025-11-25 backend's tool through replica A, the backend elicits, and the
// client POSTs its answer to replica B, which hands it to A over Redis pub/sub. Redis drops
// every pub/sub connection (CLIENT KILL TYPE pubsub) exactly as B publishes the answer, or as A
// publishes its acknowledgement: that notice reaches nobody. The client's answer must still
// reach the backend, and B must tell the client it was taken. Before, the answer's notice was
// lost: B waited out its wait, refused the answer and took A for gone, and the call waited for
// an answer that never came.
func TestAnswerSurvivesDroppedSubscriptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		kind string
	}{{"answer dropped", noticeAnswer}, {"acknowledgement dropped", noticeAck}} {
		t.Run(tc.name, func(t *testing.T) { testAnswerSurvivesDrop(t, tc.kind) })
	}
}

func testAnswerSurvivesDrop(t *testing.T, kind string) {
	tool := &mcp.Tool{Name: "ask", InputSchema: &jsonschema.Schema{Type: "object"}}
	be := mcptest.StartLegacyServer(t, "old", mcptest.WithoutDefaults(),
		mcptest.WithTool(tool, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "Name?", RequestedSchema: &jsonschema.Schema{
				Type: "object", Properties: map[string]*jsonschema.Schema{"name": {Type: "string"}}}})
			if err != nil {
				return nil, err
			}
			name, _ := res.Content["name"].(string)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "got " + name}}}, nil
		}))
	srv := testredis.Start(t)
	a, b, sa, sb := twoReplicasOn(t, srv, be, mcphttp.Config{})
	raw := rawRedis(t, srv)
	prefix := store.RedisConfig{}.KeyPrefixOrDefault() + "notice:"
	for _, e := range []*Edge{sa, sb} {
		waitSubscribed(t, raw, prefix+e.asks.topic, 1)
	}
	// The answer goes from B to A; the acknowledgement from A to B.
	from := sb
	if kind == noticeAck {
		from = sa
	}
	drop := &droppingNotices{Notices: from.asks.notices, raw: raw, kind: kind,
		channel: func(topic string) string { return prefix + topic }}
	from.asks.notices = drop

	rt := newRouteTransport(t, a.URL)
	answered := &answerStatus{base: rt.base, host: b.srv.Listener.Addr().String(), status: make(chan int, 4)}
	rt.base = answered
	cs := mcptest.Connect(t, a.URL, mcptest.WithProtocolVersion("2025-11-25"), mcptest.WithRoundTripper(rt),
		mcptest.WithElicitation(func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			rt.post.Store(&b.URL) // the answer goes to the other replica
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Grace"}}, nil
		}))
	ctx, cancel := context.WithTimeout(t.Context(), asksHang)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "be__ask", Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("call: %v", err)
	}
	if got := mcptest.ResultText(res); res.IsError || got != "got Grace" {
		t.Fatalf("call: %q (error %v), want the backend to have got the answer", got, res.IsError)
	}
	if !drop.dropped.Load() {
		t.Fatal("no notice was dropped: the test tested nothing")
	}
	// The client hears from B that its answer was taken (B heard it from A), not a refusal.
	select {
	case status := <-answered.status:
		if status != http.StatusAccepted {
			t.Errorf("the answer's POST to B: status %d, want %d", status, http.StatusAccepted)
		}
	case <-ctx.Done():
		t.Fatal("the answer's POST to B never ended")
	}
	rt.post.Store(&a.URL) // the session ends where its GET stream is
}

// TestCancelSurvivesDroppedSubscriptions: two replicas share a real Redis; a pre-2026 client's
// slow call runs on replica A and its notifications/cancelled goes to replica B, which hands it
// to A over Redis pub/sub. Redis drops every pub/sub connection (CLIENT KILL TYPE pubsub)
// exactly as B publishes the cancellation: that notice reaches nobody. The backend must still
// see its call cancelled, and the client get the call's end. Before, the notice went once and
// was lost: the call ran on to its end.
func TestCancelSurvivesDroppedSubscriptions(t *testing.T) {
	be := mcptest.StartServer(t, "be")
	srv := testredis.Start(t)
	a, b, sa, sb := twoReplicasOn(t, srv, be, mcphttp.Config{})
	raw := rawRedis(t, srv)
	prefix := store.RedisConfig{}.KeyPrefixOrDefault() + "notice:"
	waitSubscribed(t, raw, prefix+cancelTopic, 2)
	for _, e := range []*Edge{sa, sb} {
		waitSubscribed(t, raw, prefix+e.asks.topic, 1)
	}
	drop := &droppingNotices{Notices: sb.asks.notices, raw: raw, topic: cancelTopic,
		channel: func(topic string) string { return prefix + topic }}
	sb.asks.notices = drop

	sid, _ := legacyInit(t, a.URL, "2025-11-25", `{}`)
	done := make(chan *response, 1)
	go func() {
		done <- do(t, "POST", a.URL, legacyHeaders("2025-11-25", sid),
			`{"jsonrpc":"2.0","id":"slow-1","method":"tools/call","params":{"name":"be__slow","arguments":{"ms":20000}}}`)
	}()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second) // fail-safe, well short of the call
	defer cancel()
	if err := be.WaitSlow(ctx, func(s mcptest.SlowStats) bool { return s.Started == 1 }); err != nil {
		t.Fatal(err)
	}
	r := do(t, "POST", b.URL, legacyHeaders("2025-11-25", sid),
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow-1"}}`)
	if r.Status != http.StatusAccepted {
		t.Fatalf("cancel on B: %d", r.Status)
	}
	if !drop.dropped.Load() {
		t.Fatal("no notice was dropped: the test tested nothing")
	}
	if err := be.WaitSlow(ctx, func(s mcptest.SlowStats) bool { return s.Cancelled == 1 }); err != nil {
		t.Fatalf("the backend call was not cancelled: %v", err)
	}
	select {
	case r := <-done:
		if r.Status != 200 || !strings.Contains(string(r.Body), "Request cancelled by the client") {
			t.Fatalf("the cancelled call ended with %d %s", r.Status, r.Body)
		}
	case <-ctx.Done():
		t.Fatal("the cancelled call's response did not end")
	}
}
