//lint:file-ignore SA1019 pre-2026 clients and backends still use logging, sampling and roots, deprecated in 2026-07-28 (SEP-2577); the gateway serves them on purpose

package pre2026

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
	"github.com/mcp-gateway/gateway/mcphttp"
	"github.com/mcp-gateway/gateway/upstreams"
)

// chattyTool logs one message at each of debug, info and error, tagged with its tag argument,
// during the call: a 2026-07-28 backend sends those at or above the request's logLevel _meta.
func chattyTool() mcptest.Option {
	return mcptest.WithTool(&mcp.Tool{Name: "chatty", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args struct{ Tag string }
			_ = json.Unmarshal(req.Params.Arguments, &args)
			for _, l := range []mcp.LoggingLevel{"debug", "info", "error"} {
				_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: l, Logger: "chatty", Data: string(l) + "/" + args.Tag})
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
		})
}

// logSink collects the log messages a client receives, as "level/data".
type logSink struct {
	mu  sync.Mutex
	got []string
	new chan struct{}
}

func newLogSink() *logSink { return &logSink{new: make(chan struct{}, 64)} }

func (l *logSink) handler(_ context.Context, r *mcp.LoggingMessageRequest) {
	l.mu.Lock()
	l.got = append(l.got, fmt.Sprintf("%s/%v", r.Params.Level, r.Params.Data))
	l.mu.Unlock()
	select {
	case l.new <- struct{}{}:
	default:
	}
}

// take waits (bounded) until n messages have arrived and returns them, clearing the sink.
func (l *logSink) take(t *testing.T, n int) []string {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		l.mu.Lock()
		if len(l.got) >= n {
			got := l.got
			l.got = nil
			l.mu.Unlock()
			return got
		}
		l.mu.Unlock()
		select {
		case <-l.new:
		case <-deadline:
			l.mu.Lock()
			defer l.mu.Unlock()
			t.Fatalf("got %q, want %d log messages", l.got, n)
		}
	}
}

func callChatty(t *testing.T, cs *mcp.ClientSession, tag string) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "be__chatty", Arguments: map[string]any{"tag": tag}})
	if err != nil || res.IsError || mcptest.ResultText(res) != "done" {
		t.Fatalf("tools/call: %v %+v", err, res)
	}
}

// TestLegacyLogging: a go-sdk client pinned to each pre-2026 version gets no log messages
// before logging/setLevel, then the backend's messages at or above its level during each call,
// and none below it; the backend saw the level as the request's logLevel _meta.
func TestLegacyLogging(t *testing.T) {
	for _, v := range legacyVersions {
		t.Run(v, func(t *testing.T) {
			be := mcptest.StartServer(t, "be", chattyTool())
			gw, _ := startLegacyGateway(t, gwSpec{}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
			logs := newLogSink()
			cs := mcptest.Connect(t, gw.URL, mcptest.WithProtocolVersion(v), mcptest.WithLogging(logs.handler))
			if cs.InitializeResult().Capabilities.Logging == nil {
				t.Fatal("initialize does not advertise logging")
			}
			callChatty(t, cs, "before")
			if err := cs.SetLoggingLevel(t.Context(), &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
				t.Fatal(err)
			}
			callChatty(t, cs, "after")
			// Messages of the first call would have come first, on its own stream.
			if got := logs.take(t, 2); strings.Join(got, " ") != "info/info/after error/error/after" {
				t.Fatalf("log messages %q", got)
			}
			if err := cs.SetLoggingLevel(t.Context(), &mcp.SetLoggingLevelParams{Level: "error"}); err != nil {
				t.Fatal(err)
			}
			callChatty(t, cs, "error")
			if got := logs.take(t, 1); strings.Join(got, " ") != "error/error/error" {
				t.Fatalf("log messages %q", got)
			}
			calls := be.RequestsOf("tools/call")
			if len(calls) != 3 || strings.Contains(string(calls[0].Body), "logLevel") ||
				!strings.Contains(string(calls[1].Body), `"io.modelcontextprotocol/logLevel":"info"`) {
				t.Fatalf("the backend's calls do not carry the session's level: %d", len(calls))
			}
		})
	}
}

// TestLegacyLoggingBelowLevelDropped: a backend that sends a message below the requested level
// anyway (here: an error rewritten to debug on its way out) does not reach the client.
func TestLegacyLoggingBelowLevelDropped(t *testing.T) {
	be := mcptest.StartServer(t, "be", chattyTool())
	be.MCP().AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if p, ok := req.GetParams().(*mcp.LoggingMessageParams); ok && p.Level == "error" {
				p.Level = "debug"
			}
			return next(ctx, method, req)
		}
	})
	gw, _ := startLegacyGateway(t, gwSpec{}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	logs := newLogSink()
	cs := mcptest.Connect(t, gw.URL, mcptest.WithProtocolVersion("2025-11-25"), mcptest.WithLogging(logs.handler))
	if err := cs.SetLoggingLevel(t.Context(), &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	callChatty(t, cs, "x")
	// The info message is sent before the rewritten one, and the call's response after both.
	callChatty(t, cs, "y")
	if got := logs.take(t, 2); strings.Join(got, " ") != "info/info/x info/info/y" {
		t.Fatalf("log messages %q", got)
	}
}

// routeTransport sends a client's requests to one of two gateways: GET to get, POST to the
// one post names at the time.
type routeTransport struct {
	get  string
	post atomic.Pointer[string]
	base http.RoundTripper
}

func (rt *routeTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	target := rt.get
	if r.Method != http.MethodGet {
		target = *rt.post.Load()
	}
	r = r.Clone(r.Context())
	r.URL.Host = strings.SplitN(target, "/", 4)[2] // http://host:port/path
	r.Host = r.URL.Host
	return rt.base.RoundTrip(r)
}

// newRouteTransport is a routeTransport with GET and POST to get, its connections closed with
// the test.
func newRouteTransport(t *testing.T, get string) *routeTransport {
	base := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(base.CloseIdleConnections)
	rt := &routeTransport{get: get, base: base}
	rt.post.Store(&get)
	return rt
}

// twoReplicas starts two gateways in front of be that share a real Redis (session state and
// notices) and the session key ring, as replicas behind a load balancer do.
func twoReplicas(t *testing.T, be *mcptest.Server) (a, b *testGateway, sa, sb *Edge) {
	t.Helper()
	return twoReplicasOn(t, testredis.Start(t), be, mcphttp.Config{})
}

// twoReplicasOn is twoReplicas sharing redis, which the test may act on, each replica's endpoint
// configured by server.
func twoReplicasOn(t *testing.T, redis *testredis.Server, be *mcptest.Server, server mcphttp.Config) (a, b *testGateway, sa, sb *Edge) {
	t.Helper()
	stores := make([]*store.Redis, 2)
	for i := range stores {
		r, err := store.NewRedis(store.RedisConfig{URL: redis.URL()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = r.Close() })
		stores[i] = r
	}
	up := upstreams.UpstreamConfig{Name: "be", URL: be.URL()}
	a, sa = startLegacyGateway(t, gwSpec{Server: server, EdgeDeps: Deps{State: stores[0], Notices: stores[0]}}, up)
	b, sb = startLegacyGateway(t, gwSpec{Server: server, EdgeDeps: Deps{State: stores[1], Notices: stores[1]}}, up)
	sa.Start(t.Context())
	sb.Start(t.Context())
	// Each replica's subscription is made in the background: wait until each hears the other.
	for _, p := range [][2]*Edge{{sa, sb}, {sb, sa}} {
		for i := 0; p[1].state.received.Load() == 0; i++ {
			if i == 500 {
				t.Fatal("the replicas' notice subscriptions never came up")
			}
			p[0].state.publish(stateNotice{Kind: "subs", Session: "probe"})
			time.Sleep(10 * time.Millisecond)
		}
	}
	return a, b, sa, sb
}

// TestLegacyLoggingAcrossReplicas: logging/setLevel on one replica applies to a call on the
// other, read from the shared store when that replica has no copy, and by the notice when it
// has one cached (its cache here outlives the test, so only the notice can change it).
func TestLegacyLoggingAcrossReplicas(t *testing.T) {
	be := mcptest.StartServer(t, "be", chattyTool())
	a, b, _, sb := twoReplicas(t, be)
	sb.state.levelTTL = time.Hour
	rt := newRouteTransport(t, a.URL)
	logs := newLogSink()
	cs := mcptest.Connect(t, a.URL, mcptest.WithProtocolVersion("2025-11-25"),
		mcptest.WithLogging(logs.handler), mcptest.WithRoundTripper(rt))
	if err := cs.SetLoggingLevel(t.Context(), &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	rt.post.Store(&b.URL)
	callChatty(t, cs, "b")
	if got := logs.take(t, 2); strings.Join(got, " ") != "info/info/b error/error/b" {
		t.Fatalf("log messages on the other replica %q", got)
	}
	rt.post.Store(&a.URL)
	if err := cs.SetLoggingLevel(t.Context(), &mcp.SetLoggingLevelParams{Level: "error"}); err != nil {
		t.Fatal(err)
	}
	rt.post.Store(&b.URL)
	// The notice is delivered asynchronously: call until the other replica applies it.
	for i := 0; ; i++ {
		if i == 200 {
			t.Fatal("the other replica never applied the new level")
		}
		callChatty(t, cs, "n")
		got := logs.take(t, 1)
		if got[0] == "error/error/n" {
			if len(got) != 1 {
				t.Fatalf("log messages %q", got)
			}
			break
		}
		if len(got) < 2 {
			logs.take(t, 1) // the error message of a call still at info
		}
		time.Sleep(10 * time.Millisecond)
	}
}
