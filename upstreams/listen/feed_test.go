package listen

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams/backend"
	"github.com/mcp-gateway/gateway/upstreams/internal/upstreamstest"
	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
	"github.com/mcp-gateway/gateway/upstreams/names"
)

func (ls *Listens) subscribers() (feeds, subs int) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	for _, f := range ls.feeds {
		f.mu.Lock()
		subs += len(f.subs)
		f.mu.Unlock()
	}
	return len(ls.feeds), subs
}

func TestListensShareOneBackendStream(t *testing.T) {
	lb, url := upstreamstest.StartListenBackend(t)
	ls := New(singleSource(t, url))
	const tools = `{"toolsListChanged":true}`
	clients := map[string]*upstreamstest.Client{}
	for _, id := range []string{`"A"`, `"B"`, `7`} {
		clients[id] = upstreamstest.ListenVia(ls, id, tools, nil)
		if ack := clients[id].Next(t); !strings.Contains(ack, "subscriptions/acknowledged") {
			t.Fatalf("first message %s", ack)
		}
	}
	mcptest.WaitFor(t, "three subscribers share one stream", func() bool {
		open, _ := lb.Counts()
		feeds, subs := ls.subscribers()
		return open == 1 && feeds == 1 && subs == 3
	})

	lb.Notify(upstreamstest.ToolsChanged)
	for id, c := range clients {
		upstreamstest.WantChanged(t, c.Next(t), id) // each gets its own copy, tagged with its own id
	}

	clients[`"B"`].Stop(t) // a departing subscriber does not end the stream for the others
	lb.Notify(upstreamstest.ToolsChanged)
	upstreamstest.WantChanged(t, clients[`"A"`].Next(t), `"A"`)
	upstreamstest.WantChanged(t, clients[`7`].Next(t), `7`)
	if open, listens := lb.Counts(); open != 1 || listens != 1 {
		t.Fatalf("backend has %d streams open of %d listens, want 1 of 1", open, listens)
	}

	clients[`"A"`].Stop(t)
	clients[`7`].Stop(t) // the last subscriber ends the backend stream
	if feeds, _ := ls.subscribers(); feeds != 0 {
		t.Fatalf("%d shared streams left after every client left", feeds)
	}
	mcptest.WaitFor(t, "the backend stream is closed", func() bool { open, _ := lb.Counts(); return open == 0 })
}

func TestListensShareOnlyIdenticalListens(t *testing.T) {
	lb, url := upstreamstest.StartListenBackend(t)
	ls := New(singleSource(t, url))
	tools := upstreamstest.ListenVia(ls, `1`, `{"toolsListChanged":true}`, nil)
	resources := upstreamstest.ListenVia(ls, `2`, `{"resourcesListChanged":true}`, nil)
	tools.Next(t)
	resources.Next(t)
	mcptest.WaitFor(t, "two backend streams", func() bool { open, _ := lb.Counts(); return open == 2 })
	bodies := strings.Join(lb.Bodies(), "\n")
	if !strings.Contains(bodies, `"notifications":{"toolsListChanged":true}`) ||
		!strings.Contains(bodies, `"notifications":{"resourcesListChanged":true}`) {
		t.Fatalf("backend listens:\n%s\nwant one per share", bodies)
	}
	tools.Stop(t)
	resources.Stop(t)
}

func TestFeedKey(t *testing.T) {
	b := namedBackend(t, "fault")
	tools := &share{ToolsListChanged: true}
	base := feedSpec{b: b, share: tools, meta: json.RawMessage(upstreamstest.Meta), id: json.RawMessage(`1`),
		pass: http.Header{"Traceparent": {"00-a-b-01"}, "X-Request-Id": {"r1"}}}
	same := base
	same.id = json.RawMessage(`"other"`)
	same.pass = http.Header{"Traceparent": {"00-c-d-01"}, "X-Request-Id": {"r2"}}
	if base.key() != same.key() {
		t.Error("listens that differ only in id, trace context and request id do not share")
	}
	for name, mod := range map[string]func(*feedSpec){
		"backend": func(s *feedSpec) { s.b = namedBackend(t, "other") },
		"share":   func(s *feedSpec) { s.share = &share{ResourceSubscriptions: []string{"mem://x"}} },
		"meta": func(s *feedSpec) {
			s.meta = json.RawMessage(`{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`)
		},
		"params": func(s *feedSpec) { s.pass = http.Header{"Mcp-Param-Region": {"eu"}} },
	} {
		other := base
		mod(&other)
		if other.key() == base.key() {
			t.Errorf("listens with a different %s share a backend stream", name)
		}
	}
}

func TestListensBackendEndEndsEverySubscriber(t *testing.T) {
	lb, url := upstreamstest.StartListenBackend(t)
	ls := New(singleSource(t, url))
	a := upstreamstest.ListenVia(ls, `"A"`, `{"toolsListChanged":true}`, nil)
	b := upstreamstest.ListenVia(ls, `"B"`, `{"toolsListChanged":true}`, nil)
	a.Next(t)
	b.Next(t)
	mcptest.WaitFor(t, "both share the open stream", func() bool {
		open, _ := lb.Counts()
		_, subs := ls.subscribers()
		return open == 1 && subs == 2
	})
	lb.Notify("")
	for id, c := range map[string]*upstreamstest.Client{`"A"`: a, `"B"`: b} {
		want := `{"jsonrpc":"2.0","id":` + id + `,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":` + id + `}}}`
		if got := c.Next(t); got != want {
			t.Fatalf("got %s, want the end result %s", got, want)
		}
		if err := <-c.Done; err != nil {
			t.Fatal(err)
		}
	}
	// A listen after the end opens a new stream.
	c := upstreamstest.ListenVia(ls, `"C"`, `{"toolsListChanged":true}`, nil)
	c.Next(t)
	mcptest.WaitFor(t, "a new backend stream", func() bool { open, listens := lb.Counts(); return open == 1 && listens == 2 })
	c.Stop(t)
}

func TestListensSlowSubscriberHoldsUpNoOther(t *testing.T) {
	lb, url := upstreamstest.StartListenBackend(t)
	ls := New(singleSource(t, url))
	fast := upstreamstest.ListenVia(ls, `"fast"`, `{"toolsListChanged":true}`, nil)
	fast.Next(t)
	gate := make(chan struct{})
	errGone := errors.New("client gone")
	var slowMsgs []string
	slow := upstreamstest.ListenVia(ls, `"slow"`, `{"toolsListChanged":true}`, func(m string) error {
		slowMsgs = append(slowMsgs, m)
		if len(slowMsgs) == 2 {
			<-gate // stuck writing its first notification
			return errGone
		}
		return nil
	})
	mcptest.WaitFor(t, "both share the open stream", func() bool {
		open, _ := lb.Counts()
		_, subs := ls.subscribers()
		return open == 1 && subs == 2
	})
	for range 5 {
		lb.Notify(upstreamstest.ToolsChanged)
		upstreamstest.WantChanged(t, fast.Next(t), `"fast"`)
	}
	close(gate)
	if err := <-slow.Done; !errors.Is(err, errGone) {
		t.Fatalf("slow Listen = %v, want its emit error", err)
	}
	if len(slowMsgs) != 2 {
		t.Fatalf("slow client got %d messages after its emit failed, want 2", len(slowMsgs))
	}
	lb.Notify(upstreamstest.ToolsChanged) // the failed subscriber's departure left the stream to the other
	upstreamstest.WantChanged(t, fast.Next(t), `"fast"`)
	fast.Stop(t)
}

func TestSubscriberQueueCoalesces(t *testing.T) {
	s := newSubscriber(nil, defaultQueueLimits, Caller{})
	for range 10 {
		s.push(listenEvent{method: wire.NotifToolsListChanged})
		s.push(listenEvent{method: wire.NotifResourcesUpdated, uri: "a+mem://x"})
		s.push(listenEvent{method: wire.NotifResourcesUpdated, uri: "a+mem://y"})
	}
	if q, _, _ := s.take(); len(q) != 3 {
		t.Fatalf("queue %v, want one of each pending notification", q)
	}
	if q, _, _ := s.take(); q != nil {
		t.Fatalf("queue %v after take, want none", q)
	}
}

// A listen's resource subscriptions follow the caller's policy: a URI the caller may not read is
// neither acknowledged nor sent to the backend, so the caller cannot learn when it changes.
func TestListenResourceSubscriptionsFollowPolicy(t *testing.T) {
	lb, url := upstreamstest.StartListenBackend(t)
	r := newTestSource(t, backend.Config{Name: "fan", URL: url})
	visible := func(k names.Kind, tg names.Target) bool { return k == names.KindResource && tg.Name != "mem://secret" }
	msgs := make(chan string, 16)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	params := `{"_meta":` + upstreamstest.Meta + `,"notifications":{"resourceSubscriptions":["fan+mem://public","fan+mem://secret"]}}`
	go func() {
		done <- r.Listen(ctx, json.RawMessage(`"L1"`), json.RawMessage(params), nil, visible, func(m []byte) error {
			msgs <- string(m)
			return nil
		})
	}()
	var ack string
	select {
	case ack = <-msgs:
	case <-time.After(30 * time.Second): // a fail-safe, not a timing assertion
		t.Fatal("no acknowledgement")
	}
	if !strings.Contains(ack, `"resourceSubscriptions":["fan+mem://public"]`) || strings.Contains(ack, "secret") {
		t.Fatalf("acknowledgement %s, want fan+mem://public only", ack)
	}
	mcptest.WaitFor(t, "the backend has the listen", func() bool { _, n := lb.Counts(); return n == 1 })
	body := lb.Bodies()[0]
	if !strings.Contains(body, "mem://public") || strings.Contains(body, "secret") {
		t.Fatalf("the backend was asked for %s, want mem://public only", body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Listen = %v after the client left", err)
	}
}

// namedBackend returns a Backend named name that is never sent a request.
func namedBackend(t *testing.T, name string) *backend.Backend {
	t.Helper()
	bs, _ := upstreamstest.Backends(t, backend.Config{Name: name, URL: "http://127.0.0.1:1/mcp"})
	return bs[0]
}
