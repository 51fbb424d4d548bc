package mcptest

import (
	"io"
	"net/http"
	"sync"
)

// FanBackend is a 2026-07-28 backend whose listen streams stay open; Notify sends a message to
// every open stream. It counts the listen requests it received.
type FanBackend struct {
	mu      sync.Mutex
	streams map[chan string]struct{}
	listens int
}

// ServeHTTP serves server/discover and subscriptions/listen; anything else is 400.
func (f *FanBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "application/json")
	switch r.Header.Get("Mcp-Method") {
	case "server/discover":
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete",`+
			`"capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"fan","version":"1"}}}`)
		return
	case "subscriptions/listen":
	default:
		http.Error(w, "unexpected", http.StatusBadRequest)
		return
	}
	ch := make(chan string, 8)
	f.mu.Lock()
	f.listens++
	f.streams[ch] = struct{}{}
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		delete(f.streams, ch)
		f.mu.Unlock()
	}()
	w.Header().Set("Content-Type", "text/event-stream")
	event := func(msg string) {
		_, _ = io.WriteString(w, "event: message\ndata: "+msg+"\n\n")
		w.(http.Flusher).Flush()
	}
	event(`{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"notifications":{"toolsListChanged":true}}}`)
	for {
		select {
		case <-r.Context().Done():
			return
		case msg := <-ch:
			event(msg)
		}
	}
}

// Notify sends msg to every open listen stream.
func (f *FanBackend) Notify(msg string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for ch := range f.streams {
		ch <- msg
	}
}

// Counts is the listen streams open now and all listens served.
func (f *FanBackend) Counts() (open, listens int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.streams), f.listens
}

// NewFanBackend returns a FanBackend with no stream open.
func NewFanBackend() *FanBackend { return &FanBackend{streams: map[chan string]struct{}{}} }
