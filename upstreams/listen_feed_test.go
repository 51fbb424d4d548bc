package upstreams

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams/backend"
	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
)

// listenBackend is a modern backend whose listen streams stay open until the test ends them.
// Every notification the test sends goes to every open stream.
type listenBackend struct {
	mu      sync.Mutex
	streams map[chan string]struct{}
	listens int      // listen requests received
	bodies  []string // their bodies
	// version names the one tool tools/list returns (with a ttlMs of a minute), as it is when
	// the request arrives; lists counts tools/list requests; hold, when set, is called with
	// each one's number (from 1) before it is answered.
	version, lists atomic.Int64
	hold           func(n int64)
}

const listenDiscover = `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete",` +
	`"capabilities":{"tools":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true}},` +
	`"serverInfo":{"name":"fake","version":"1"}}}`

func startListenBackend(t *testing.T) (*listenBackend, string) {
	t.Helper()
	lb := &listenBackend{streams: map[chan string]struct{}{}}
	url := loopbackServer(t, http.HandlerFunc(lb.serve))
	return lb, url + "/mcp"
}

func (lb *listenBackend) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	switch r.Header.Get("Mcp-Method") {
	case "server/discover":
		writeJSONBody(w, listenDiscover)
		return
	case MethodListen:
	case MethodToolsList:
		v, n := lb.version.Load(), lb.lists.Add(1)
		if lb.hold != nil {
			lb.hold(n)
		}
		writeJSONBody(w, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete",`+
			`"tools":[{"name":"v%d","inputSchema":{"type":"object"}}],"ttlMs":60000,"cacheScope":"public"}}`,
			requestID(body), v))
		return
	default:
		http.Error(w, "unexpected", http.StatusBadRequest)
		return
	}
	ch := make(chan string, 16)
	lb.mu.Lock()
	lb.listens++
	lb.bodies = append(lb.bodies, string(body))
	lb.streams[ch] = struct{}{}
	lb.mu.Unlock()
	defer func() {
		lb.mu.Lock()
		delete(lb.streams, ch)
		lb.mu.Unlock()
	}()
	w.Header().Set("Content-Type", "text/event-stream")
	sseEvent(w, `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"notifications":{}}}`)
	for {
		select {
		case <-r.Context().Done():
			return
		case msg := <-ch:
			if msg == "" {
				return // the stream ends without a result
			}
			sseEvent(w, msg)
		}
	}
}

// notify sends msg to every open stream; "" ends them.
func (lb *listenBackend) notify(msg string) {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	for ch := range lb.streams {
		ch <- msg
	}
}

func (lb *listenBackend) counts() (open, listens int) {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	return len(lb.streams), lb.listens
}

// client is one listen through Listens.
type client struct {
	msgs   chan string
	cancel context.CancelFunc
	done   chan error
}

func listenVia(ls *Listens, id, notifications string, emit func(string) error) *client {
	ctx, cancel := context.WithCancel(context.Background())
	c := &client{msgs: make(chan string, 64), cancel: cancel, done: make(chan error, 1)}
	if emit == nil {
		emit = func(m string) error { c.msgs <- m; return nil }
	}
	params := `{"_meta":` + testMeta + `,"notifications":` + notifications + `}`
	go func() {
		c.done <- ls.Listen(ctx, json.RawMessage(id), json.RawMessage(params), nil, nil, func(m []byte) error { return emit(string(m)) })
	}()
	return c
}

func (c *client) next(t *testing.T) string {
	t.Helper()
	select {
	case m := <-c.msgs:
		return m
	case <-time.After(30 * time.Second): // fail-safe
		t.Fatal("no message")
	}
	return ""
}

func (c *client) stop(t *testing.T) {
	t.Helper()
	c.cancel()
	if err := <-c.done; err != nil {
		t.Fatalf("Listen = %v, want nil after the client left", err)
	}
}

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

const toolsChanged = `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"backend"}}}`

func wantChanged(t *testing.T, msg, id string) {
	t.Helper()
	want := `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":` + id + `}}}`
	if msg != want {
		t.Fatalf("got %s, want %s", msg, want)
	}
}

func TestListensShareOneBackendStream(t *testing.T) {
	lb, url := startListenBackend(t)
	ls := NewListens(singleBackend(t, url, nil))
	const tools = `{"toolsListChanged":true}`
	clients := map[string]*client{}
	for _, id := range []string{`"A"`, `"B"`, `7`} {
		clients[id] = listenVia(ls, id, tools, nil)
		if ack := clients[id].next(t); !strings.Contains(ack, "subscriptions/acknowledged") {
			t.Fatalf("first message %s", ack)
		}
	}
	mcptest.WaitFor(t, "three subscribers share one stream", func() bool {
		open, _ := lb.counts()
		feeds, subs := ls.subscribers()
		return open == 1 && feeds == 1 && subs == 3
	})

	lb.notify(toolsChanged)
	for id, c := range clients {
		wantChanged(t, c.next(t), id) // each gets its own copy, tagged with its own id
	}

	clients[`"B"`].stop(t) // a departing subscriber does not end the stream for the others
	lb.notify(toolsChanged)
	wantChanged(t, clients[`"A"`].next(t), `"A"`)
	wantChanged(t, clients[`7`].next(t), `7`)
	if open, listens := lb.counts(); open != 1 || listens != 1 {
		t.Fatalf("backend has %d streams open of %d listens, want 1 of 1", open, listens)
	}

	clients[`"A"`].stop(t)
	clients[`7`].stop(t) // the last subscriber ends the backend stream
	if feeds, _ := ls.subscribers(); feeds != 0 {
		t.Fatalf("%d shared streams left after every client left", feeds)
	}
	mcptest.WaitFor(t, "the backend stream is closed", func() bool { open, _ := lb.counts(); return open == 0 })
}

func TestListensShareOnlyIdenticalListens(t *testing.T) {
	lb, url := startListenBackend(t)
	ls := NewListens(singleBackend(t, url, nil))
	tools := listenVia(ls, `1`, `{"toolsListChanged":true}`, nil)
	resources := listenVia(ls, `2`, `{"resourcesListChanged":true}`, nil)
	tools.next(t)
	resources.next(t)
	mcptest.WaitFor(t, "two backend streams", func() bool { open, _ := lb.counts(); return open == 2 })
	lb.mu.Lock()
	bodies := strings.Join(lb.bodies, "\n")
	lb.mu.Unlock()
	if !strings.Contains(bodies, `"notifications":{"toolsListChanged":true}`) ||
		!strings.Contains(bodies, `"notifications":{"resourcesListChanged":true}`) {
		t.Fatalf("backend listens:\n%s\nwant one per share", bodies)
	}
	tools.stop(t)
	resources.stop(t)
}

func TestFeedKey(t *testing.T) {
	b := namedBackend(t, "fault")
	tools := &subscriptions{ToolsListChanged: true}
	base := feedSpec{b: b, share: tools, meta: json.RawMessage(testMeta), id: json.RawMessage(`1`),
		pass: http.Header{"Traceparent": {"00-a-b-01"}, "X-Request-Id": {"r1"}}}
	same := base
	same.id = json.RawMessage(`"other"`)
	same.pass = http.Header{"Traceparent": {"00-c-d-01"}, "X-Request-Id": {"r2"}}
	if base.key() != same.key() {
		t.Error("listens that differ only in id, trace context and request id do not share")
	}
	for name, mod := range map[string]func(*feedSpec){
		"backend": func(s *feedSpec) { s.b = namedBackend(t, "other") },
		"share":   func(s *feedSpec) { s.share = &subscriptions{ResourceSubscriptions: []string{"mem://x"}} },
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
	lb, url := startListenBackend(t)
	ls := NewListens(singleBackend(t, url, nil))
	a := listenVia(ls, `"A"`, `{"toolsListChanged":true}`, nil)
	b := listenVia(ls, `"B"`, `{"toolsListChanged":true}`, nil)
	a.next(t)
	b.next(t)
	mcptest.WaitFor(t, "both share the open stream", func() bool {
		open, _ := lb.counts()
		_, subs := ls.subscribers()
		return open == 1 && subs == 2
	})
	lb.notify("")
	for id, c := range map[string]*client{`"A"`: a, `"B"`: b} {
		want := `{"jsonrpc":"2.0","id":` + id + `,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":` + id + `}}}`
		if got := c.next(t); got != want {
			t.Fatalf("got %s, want the end result %s", got, want)
		}
		if err := <-c.done; err != nil {
			t.Fatal(err)
		}
	}
	// A listen after the end opens a new stream.
	c := listenVia(ls, `"C"`, `{"toolsListChanged":true}`, nil)
	c.next(t)
	mcptest.WaitFor(t, "a new backend stream", func() bool { open, listens := lb.counts(); return open == 1 && listens == 2 })
	c.stop(t)
}

func TestListensSlowSubscriberHoldsUpNoOther(t *testing.T) {
	lb, url := startListenBackend(t)
	ls := NewListens(singleBackend(t, url, nil))
	fast := listenVia(ls, `"fast"`, `{"toolsListChanged":true}`, nil)
	fast.next(t)
	gate := make(chan struct{})
	errGone := errors.New("client gone")
	var slowMsgs []string
	slow := listenVia(ls, `"slow"`, `{"toolsListChanged":true}`, func(m string) error {
		slowMsgs = append(slowMsgs, m)
		if len(slowMsgs) == 2 {
			<-gate // stuck writing its first notification
			return errGone
		}
		return nil
	})
	mcptest.WaitFor(t, "both share the open stream", func() bool {
		open, _ := lb.counts()
		_, subs := ls.subscribers()
		return open == 1 && subs == 2
	})
	for range 5 {
		lb.notify(toolsChanged)
		wantChanged(t, fast.next(t), `"fast"`)
	}
	close(gate)
	if err := <-slow.done; !errors.Is(err, errGone) {
		t.Fatalf("slow Listen = %v, want its emit error", err)
	}
	if len(slowMsgs) != 2 {
		t.Fatalf("slow client got %d messages after its emit failed, want 2", len(slowMsgs))
	}
	lb.notify(toolsChanged) // the failed subscriber's departure left the stream to the other
	wantChanged(t, fast.next(t), `"fast"`)
	fast.stop(t)
}

func TestSubscriberQueueCoalesces(t *testing.T) {
	s := newSubscriber(defaultQueueLimits, ListenCaller{})
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
	lb, url := startListenBackend(t)
	r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "fan", URL: url}}}, Options{})
	visible := func(k Kind, tg Target) bool { return k == KindResource && tg.Name != "mem://secret" }
	msgs := make(chan string, 16)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	params := `{"_meta":` + testMeta + `,"notifications":{"resourceSubscriptions":["fan+mem://public","fan+mem://secret"]}}`
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
	mcptest.WaitFor(t, "the backend has the listen", func() bool { _, n := lb.counts(); return n == 1 })
	lb.mu.Lock()
	body := lb.bodies[0]
	lb.mu.Unlock()
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
	b, err := backend.New(backend.Config{Name: name, URL: "http://127.0.0.1:1/mcp"},
		&backend.Env{Log: slog.New(slog.DiscardHandler), Now: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}
