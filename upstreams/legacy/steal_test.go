package legacy

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/era"
)

// TestBridgeAnswerOfAnotherCallNotTaken: two calls in flight on one session (a caller's
// session of a token-exchange backend carries all its calls). The backend answers the second
// call's stream first under the first call's id, as if to hand it that call's result: the
// second call skips it and gets its own answer, and the first gets its own on its own stream.
func TestBridgeAnswerOfAnotherCallNotTaken(t *testing.T) {
	var mu sync.Mutex
	var holdID json.RawMessage
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct{ Name string }
		}
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &m)
		switch {
		case m.Method == "initialize":
			w.Header().Set("Mcp-Session-Id", "s1")
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"old","version":"1"}}}`, m.ID)
			return
		case m.Method != "tools/call":
			w.WriteHeader(http.StatusAccepted)
			return
		}
		if m.Params.Name == "hold" {
			mu.Lock()
			holdID = m.ID // known before the headers tell the gateway its call is under way
			mu.Unlock()
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		event := func(id json.RawMessage, text string) {
			fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":%q}]}}\n\n", id, text)
			w.(http.Flusher).Flush()
		}
		if m.Params.Name == "hold" {
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
			event(m.ID, "hold's own")
			return
		}
		mu.Lock()
		stolen := holdID
		mu.Unlock()
		event(stolen, "stolen")
		event(m.ID, "steal's own")
	}))
	t.Cleanup(srv.Close)
	br := New(&testBackend{url: srv.URL, creds: true}, Config{Offer: era.V20251125,
		ClientInfo: json.RawMessage(`{"name":"mcp-gateway","version":"test"}`), MaxCallers: 1})
	t.Cleanup(br.Close)
	ctx, cancel := context.WithTimeout(WithCaller(context.Background(), "alice-token", ""), 10*time.Second)
	defer cancel()
	pool, give, err := br.CallerPool([32]byte{1})
	if err != nil {
		t.Fatal(err)
	}
	defer give()
	start := func(name string) *RoundTrip {
		x, err := br.Start(ctx, pool, nil, &era.Request{Method: "tools/call", Params: json.RawMessage(`{"name":"` + name + `"}`)}, nil, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		t.Cleanup(x.Release)
		return x
	}
	text := func(x *RoundTrip) string {
		m, err := x.Next(ctx)
		if err != nil || !m.IsResponse() || !m.Answers(x.uid) {
			t.Fatalf("Next: %v %v", m, err)
		}
		return string(m.Result)
	}
	hold := start("hold")
	steal := start("steal")
	if got := text(steal); !strings.Contains(got, "steal's own") {
		t.Errorf("the second call got %s, want its own answer", got)
	}
	close(release)
	if got := text(hold); !strings.Contains(got, "hold's own") {
		t.Errorf("the first call got %s, want its own answer", got)
	}
}
