package upstreamstest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/upstreams/names"
)

// ListenBackend is a modern backend whose listen streams stay open until the test ends them.
// Every notification the test sends goes to every open stream.
type ListenBackend struct {
	mu      sync.Mutex
	streams map[chan string]struct{}
	listens int      // listen requests received
	bodies  []string // their bodies
	// Version names the one tool tools/list returns (with a ttlMs of a minute), as it is when
	// the request arrives; Lists counts tools/list requests; Hold, when set (before the first
	// request), is called with each one's number (from 1) before it is answered.
	Version, Lists atomic.Int64
	Hold           func(n int64)
}

const listenDiscover = `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete",` +
	`"capabilities":{"tools":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true}},` +
	`"serverInfo":{"name":"fake","version":"1"}}}`

// StartListenBackend starts a ListenBackend and returns it with its MCP URL.
func StartListenBackend(t *testing.T) (*ListenBackend, string) {
	t.Helper()
	lb := &ListenBackend{streams: map[chan string]struct{}{}}
	url := Loopback(t, http.HandlerFunc(lb.serve))
	return lb, url + "/mcp"
}

func (lb *ListenBackend) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	switch r.Header.Get("Mcp-Method") {
	case "server/discover":
		WriteJSON(w, listenDiscover)
		return
	case "subscriptions/listen":
	case "tools/list":
		v, n := lb.Version.Load(), lb.Lists.Add(1)
		if lb.Hold != nil {
			lb.Hold(n)
		}
		WriteJSON(w, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete",`+
			`"tools":[{"name":"v%d","inputSchema":{"type":"object"}}],"ttlMs":60000,"cacheScope":"public"}}`,
			RequestID(body), v))
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
	SSEEvent(w, `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"notifications":{}}}`)
	for {
		select {
		case <-r.Context().Done():
			return
		case msg := <-ch:
			if msg == "" {
				return // the stream ends without a result
			}
			SSEEvent(w, msg)
		}
	}
}

// Notify sends msg to every open stream; "" ends them.
func (lb *ListenBackend) Notify(msg string) {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	for ch := range lb.streams {
		ch <- msg
	}
}

// Counts returns the number of open streams and of listen requests received.
func (lb *ListenBackend) Counts() (open, listens int) {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	return len(lb.streams), lb.listens
}

// Bodies returns the bodies of the listen requests received, in order.
func (lb *ListenBackend) Bodies() []string {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	return append([]string(nil), lb.bodies...)
}

// Listener serves subscriptions/listen: upstreams.Registry, listen.Source and listen.Listens.
type Listener interface {
	Listen(ctx context.Context, id, params json.RawMessage, hdr http.Header, visible func(names.Kind, names.Target) bool, emit func(msg []byte) error) error
}

// Client is one listen through a Listener.
type Client struct {
	// Msgs receives what the listen emits, unless an emit function was given.
	Msgs chan string
	// Cancel ends the listen, as a client that leaves.
	Cancel context.CancelFunc
	// Done receives what Listen returned.
	Done chan error
}

// ListenVia starts a listen through l, without a resource policy, with the id and notifications
// object given; emit, when not nil, receives what it emits instead of Msgs.
func ListenVia(l Listener, id, notifications string, emit func(string) error) *Client {
	ctx, cancel := context.WithCancel(context.Background())
	c := &Client{Msgs: make(chan string, 64), Cancel: cancel, Done: make(chan error, 1)}
	if emit == nil {
		emit = func(m string) error { c.Msgs <- m; return nil }
	}
	params := `{"_meta":` + Meta + `,"notifications":` + notifications + `}`
	go func() {
		c.Done <- l.Listen(ctx, json.RawMessage(id), json.RawMessage(params), nil, nil, func(m []byte) error { return emit(string(m)) })
	}()
	return c
}

// Next returns the next message the listen emitted.
func (c *Client) Next(t *testing.T) string {
	t.Helper()
	select {
	case m := <-c.Msgs:
		return m
	case <-time.After(30 * time.Second): // fail-safe
		t.Fatal("no message")
	}
	return ""
}

// Stop ends the listen as a client that leaves, and checks that it ended cleanly.
func (c *Client) Stop(t *testing.T) {
	t.Helper()
	c.Cancel()
	if err := <-c.Done; err != nil {
		t.Fatalf("Listen = %v, want nil after the client left", err)
	}
}

// ToolsChanged is a backend's tools/list_changed on its listen stream.
const ToolsChanged = `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"backend"}}}`

// WantChanged fails the test unless msg is the tools/list_changed relayed to the listen id.
func WantChanged(t *testing.T, msg, id string) {
	t.Helper()
	want := `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":` + id + `}}}`
	if msg != want {
		t.Fatalf("got %s, want %s", msg, want)
	}
}

// Relayed describes a message a client got: its method, and the URI of a resources/updated.
func Relayed(t *testing.T, msg string) string {
	t.Helper()
	var m struct {
		Method string
		Params struct{ URI string }
	}
	if err := json.Unmarshal([]byte(msg), &m); err != nil {
		t.Fatalf("relayed %q: %v", msg, err)
	}
	if m.Params.URI != "" {
		return m.Method + " " + m.Params.URI
	}
	return m.Method
}
