package pre2026

import (
	"context"
	"encoding/json"
	"net/http"
	"sync/atomic"
	"testing"

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
	dropped atomic.Bool
}

// Publish publishes msg, in the transaction that drops the subscriptions when it is the first
// of d.kind.
func (d *droppingNotices) Publish(ctx context.Context, topic string, msg []byte) error {
	var n replyNotice
	if json.Unmarshal(msg, &n) != nil || n.Type != d.kind || !d.dropped.CompareAndSwap(false, true) {
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
