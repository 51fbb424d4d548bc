package upstreams

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams/internal/upstreamstest"
)

// budgetListen is one client's listen through ls as caller key. A stalled one writes its
// acknowledgement and then stops reading: its next write waits until gate is closed, as a
// client's does once it stops reading and the connection's buffers are full.
type budgetListen struct {
	*upstreamstest.Client
	dropped atomic.Int64 // notifications dropped as overflow
}

func startBudgetListen(ls *Listens, key, id, notifications string, gate <-chan struct{}) *budgetListen {
	ctx, cancel := context.WithCancel(context.Background())
	l := &budgetListen{Client: &upstreamstest.Client{Msgs: make(chan string, 1024), Cancel: cancel, Done: make(chan error, 1)}}
	c := ListenCaller{Key: key, Dropped: func(cause string, n int) {
		if cause == DropOverflow {
			l.dropped.Add(int64(n))
		}
	}}
	params := `{"_meta":` + upstreamstest.Meta + `,"notifications":` + notifications + `}`
	var written int
	go func() {
		l.Done <- ls.ListenFor(ctx, json.RawMessage(id), json.RawMessage(params), nil, c, func(m []byte) error {
			if written++; written == 2 && gate != nil {
				<-gate
			}
			l.Msgs <- string(m)
			return nil
		})
	}()
	return l
}

// budgetURIs are n resource URIs of about 120 bytes: queued, each costs about 500 bytes, so n =
// 300 of them fit a listen's own queue (256 KiB) but not a caller's share of a 1 MiB budget of
// result bytes (64 KiB).
func budgetURIs(n int) []string {
	pad := strings.Repeat("p", 100)
	uris := make([]string, n)
	for i := range uris {
		uris[i] = fmt.Sprintf("mem://r/%03d/%s", i, pad)
	}
	return uris
}

const listenBudget = 1 << 20

// checkListenBudget runs the scenario both eras share, on a registry of one backend named
// upstream whose notifications notify sends: caller A holds two listens subscribed to every
// URI and stops reading them; caller B listens to the first URI and reads. The backend updates
// every URI. A's listens hold at most A's share of the budget of result bytes; the one that
// does not fit ends, once A reads again, with OverBudget, not with everything delivered; B hears
// its update, and the budget has room for calls meanwhile. The budget is back to zero once
// every listen has ended.
func checkListenBudget(t *testing.T, r *Registry, upstream string, uris []string, subscribed func(n int), notify func(uris []string)) {
	ls := NewListens(r)
	subs := make([]string, len(uris))
	for i, u := range uris {
		subs[i] = jsonQuote(upstream + "+" + u)
	}
	gate := make(chan struct{})
	var once sync.Once
	open := func() { once.Do(func() { close(gate) }) }
	t.Cleanup(open)
	all := `{"resourceSubscriptions":[` + strings.Join(subs, ",") + `]}`
	a1 := startBudgetListen(ls, "idp#a", `"a1"`, all, gate)
	a2 := startBudgetListen(ls, "idp#a", `"a2"`, all, gate)
	b := startBudgetListen(ls, "idp#b", `"b"`, `{"resourceSubscriptions":[`+subs[0]+`]}`, nil)
	for _, l := range []*budgetListen{a1, a2, b} {
		if ack := l.Next(t); !strings.Contains(ack, "notifications/subscriptions/acknowledged") {
			t.Fatalf("acknowledgement %.200s", ack)
		}
	}
	subscribed(len(uris) + 1) // A's two identical listens share one backend stream
	notify(uris)

	if got := b.Next(t); !strings.Contains(got, jsonQuote(upstream+"+"+uris[0])) {
		t.Fatalf("caller B got %.200s, want its update", got)
	}
	mcptest.WaitFor(t, "caller A's listens past its share", func() bool { return a1.dropped.Load()+a2.dropped.Load() > 0 })
	share := int64(listenBudget / 16)
	// Measured on A's share itself: the replica's total also holds B's update and what the
	// backend streams' readers have charged for the event they are reading (together about a
	// kilobyte, which an allowance on the total once missed by 37 bytes).
	if held := ls.Held("idp#a"); held > share {
		t.Errorf("caller A's stalled listens hold %d bytes of result budget, more than its share %d", held, share)
	}
	// What calls need of the budget is there: listens together take at most half of it.
	if r.TakeResultBytes("", listenBudget/2) != nil {
		t.Errorf("a call's %d bytes do not fit while A's listens are stalled (%d held)", listenBudget/2, r.ResultBytesInFlight())
	} else {
		r.ReturnResultBytes("", listenBudget/2)
	}

	open()
	ended := 0
	for _, l := range []*budgetListen{a1, a2} {
		if l.dropped.Load() == 0 {
			l.Cancel()
			continue
		}
		var last string
		for !strings.Contains(last, `"error"`) {
			last = l.Next(t)
		}
		if !strings.Contains(last, `"code":-32015`) || !strings.Contains(last, "memory bound") {
			t.Errorf("a listen past its caller's share ended with %.300s, want OverBudget", last)
		}
		ended++
	}
	if ended == 0 {
		t.Error("no listen of caller A ended")
	}
	for _, l := range []*budgetListen{a1, a2, b} {
		l.Cancel()
		if err := <-l.Done; err != nil {
			t.Errorf("Listen = %v", err)
		}
	}
	if held := r.ResultBytesInFlight(); held != 0 {
		t.Errorf("%d bytes of result budget still held once every listen has ended", held)
	}
}

func jsonQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestListenQueuesCharged: the notifications waiting for a 2026-07-28 client's listens count
// against server.maxResultBytesInFlight, within a share per caller (a sixteenth) and for every
// listen together (a half). Before, they counted against nothing: a caller with many listens
// it stopped reading held 256 KiB a listen outside the budget.
func TestListenQueuesCharged(t *testing.T) {
	lb, url := upstreamstest.StartListenBackend(t)
	r := listenCacheRegistry(t, url, Options{MaxResultBytesInFlight: listenBudget})
	checkListenBudget(t, r, "fake", budgetURIs(300), func(int) {
		mcptest.WaitFor(t, "the listens joined the backend streams", func() bool { open, _ := lb.Counts(); return open == 2 })
	}, func(uris []string) {
		for _, u := range uris {
			lb.Notify(`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":` + jsonQuote(u) + `}}`)
		}
	})
}

// legacyBudgetRegistry starts a pre-2026 go-sdk backend "beta" with subscriptions, counting the
// subscribes it accepted, behind a registry with the listen tests' budget of result bytes.
func legacyBudgetRegistry(t *testing.T) (*mcptest.Server, *atomic.Int64, *Registry) {
	beta := mcptest.StartLegacyServer(t, "beta", mcptest.WithSubscriptions())
	subscribes := new(atomic.Int64)
	beta.MCP().AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if _, ok := req.(*mcp.SubscribeRequest); ok && err == nil {
				subscribes.Add(1)
			}
			return res, err
		}
	})
	r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "beta", URL: beta.URL()}}},
		Options{MaxResultBytesInFlight: listenBudget})
	return beta, subscribes, r
}

// TestLegacyListenQueuesCharged is TestListenQueuesCharged through a pre-2026 go-sdk backend's
// GET streams.
func TestLegacyListenQueuesCharged(t *testing.T) {
	beta, subscribes, r := legacyBudgetRegistry(t)
	checkListenBudget(t, r, "beta", budgetURIs(300), func(n int) {
		mcptest.WaitFor(t, "the backend sessions subscribed", func() bool { return subscribes.Load() >= int64(n) })
	}, func(uris []string) {
		for _, u := range uris {
			_ = beta.MCP().ResourceUpdated(context.Background(), &mcp.ResourceUpdatedNotificationParams{URI: u})
		}
	})
}

// checkStreamCharged: what a backend listen stream's buffers hold of an event counts against
// the budget of result bytes while the stream is open, and not once its listen has ended. The
// backend updates a resource with a 1 KiB URI the listen subscribed to.
func checkStreamCharged(t *testing.T, r *Registry, upstream string, subscribed func(), notify func(uri string)) {
	ls := NewListens(r)
	uri := "mem://big/" + strings.Repeat(strings.Repeat("b", 63)+"/", 16) // 1 KiB, in segments a URI may have
	l := startBudgetListen(ls, "idp#a", `"s"`, `{"resourceSubscriptions":[`+jsonQuote(upstream+"+"+uri)+`]}`, nil)
	if ack := l.Next(t); !strings.Contains(ack, "mem://big/") {
		t.Fatalf("acknowledgement %.200s", ack)
	}
	subscribed()
	notify(uri)
	if got := l.Next(t); !strings.Contains(got, "notifications/resources/updated") {
		t.Fatalf("got %.200s, want the update", got)
	}
	if held := r.ResultBytesInFlight(); held < int64(len(uri)) {
		t.Errorf("the open backend stream that read an event of a %d-byte URI holds %d bytes of result budget, want at least that", len(uri), held)
	}
	l.Cancel()
	if err := <-l.Done; err != nil {
		t.Fatalf("Listen = %v", err)
	}
	if held := r.ResultBytesInFlight(); held != 0 {
		t.Errorf("%d bytes of result budget still held once the listen has ended", held)
	}
}

// TestListenStreamCharged: a 2026-07-28 backend's listen stream's buffers count against
// server.maxResultBytesInFlight (checkStreamCharged).
func TestListenStreamCharged(t *testing.T) {
	lb, url := upstreamstest.StartListenBackend(t)
	r := listenCacheRegistry(t, url, Options{MaxResultBytesInFlight: listenBudget})
	checkStreamCharged(t, r, "fake", func() {
		mcptest.WaitFor(t, "the listen joined the backend stream", func() bool { open, _ := lb.Counts(); return open == 1 })
	}, func(u string) {
		lb.Notify(`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":` + jsonQuote(u) + `}}`)
	})
}

// TestLegacyListenStreamCharged: so do a pre-2026 backend's GET stream's.
func TestLegacyListenStreamCharged(t *testing.T) {
	beta, subscribes, r := legacyBudgetRegistry(t)
	checkStreamCharged(t, r, "beta", func() {
		mcptest.WaitFor(t, "the backend session subscribed", func() bool { return subscribes.Load() >= 1 })
	}, func(u string) {
		_ = beta.MCP().ResourceUpdated(context.Background(), &mcp.ResourceUpdatedNotificationParams{URI: u})
	})
}
