package mcphttp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/eventstream"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams"
)

// Progress events and the result as a backend streams them; the gateway relays the
// notifications byte for byte (they need no rewriting) and re-renders the result.
const (
	sseProgress1 = `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1,"total":3,"message":"step 1 of 3"}}`
	sseProgress2 = `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":2,"total":3,"message":"step 2 of 3"}}`
	sseProgress3 = `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":3,"total":3,"message":"step 3 of 3"}}`
	sseResult    = `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"done 3"}],"resultType":"complete"}}`
)

func sseEvent(msg string) string { return "event: message\ndata: " + msg + "\n\n" }

// sseCallBackend is a modern backend whose tools/call answer is an event stream written as
// parts: each part in one write, flushed, and followed by a wait on the matching entry of waits
// (a nil entry: no wait).
type sseCallBackend struct {
	parts []string
	waits []chan struct{}
}

func (b *sseCallBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	if r.Header.Get("Mcp-Method") != "tools/call" {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","capabilities":{"tools":{}},`+
			`"serverInfo":{"name":"sse","version":"1"},"tools":[{"name":"t","inputSchema":{"type":"object"}}]}}`)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	for i, p := range b.parts {
		_, _ = io.WriteString(w, p)
		w.(http.Flusher).Flush()
		if i < len(b.waits) && b.waits[i] != nil {
			select {
			case <-b.waits[i]:
			case <-r.Context().Done():
				return
			}
		}
	}
}

// countingListener counts the writes on every connection it accepts.
type countingListener struct {
	net.Listener
	writes *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return writeCountingConn{c, l.writes}, nil
}

type writeCountingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c writeCountingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

const sseCallBody = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + progressMeta + `,"name":"be__t","arguments":{}}}`

// progressMeta is meta with the progressToken the progress events above report under: a
// backend's progress is relayed only under its request's token.
const progressMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":"p"}`

// TestSSERelayCoalescesBufferedEvents: events a backend sent in one write reach the client in
// one write too (a reverse proxy's behaviour), not in a write and a flush per event, and
// unchanged.
func TestSSERelayCoalescesBufferedEvents(t *testing.T) {
	be := httptest.NewServer(&sseCallBackend{parts: []string{
		sseEvent(sseProgress1) + sseEvent(sseProgress2) + sseEvent(sseProgress3) + sseEvent(sseResult)}})
	t.Cleanup(be.Close)
	_, e := testServer(t, Config{SSEKeepAlive: time.Hour}, oneBackend(be.URL), upstreams.Options{}, Deps{Version: "test"})
	var writes atomic.Int64
	gw := httptest.NewUnstartedServer(e)
	gw.Listener = countingListener{gw.Listener, &writes}
	gw.Start()
	t.Cleanup(gw.Close)

	for i := range 3 {
		before := writes.Load()
		r := do(t, http.MethodPost, gw.URL+DefaultPath, modern("tools/call", "be__t"), sseCallBody)
		n := writes.Load() - before
		if r.Status != 200 || r.RPC.Result == nil {
			t.Fatalf("call %d: status %d: %s", i, r.Status, r.Body)
		}
		want := sseEvent(sseProgress1) + sseEvent(sseProgress2) + sseEvent(sseProgress3)
		if !strings.HasPrefix(string(r.Body), want) {
			t.Fatalf("call %d: the progress events were not relayed as sent:\n%s", i, r.Body)
		}
		// One write for headers, events and the end of the body; two would be the events
		// split from the body's end. Flushing every event takes five.
		if n > 2 {
			t.Errorf("call %d: the response took %d writes on the connection, want at most 2", i, n)
		}
	}
}

// TestSSERelayFlushesBeforeWaiting: progress reaches the client while the backend pauses, before
// the result exists, whatever else the backend wrote with it: the backend only goes on once the
// client has read the progress event.
func TestSSERelayFlushesBeforeWaiting(t *testing.T) {
	tests := []struct {
		name  string
		first string // sent with the progress event, before the pause
		rest  string // sent after it
	}{
		{"progress alone", "", sseEvent(sseResult)},
		{"progress and a comment", ": ping\n\n", sseEvent(sseResult)},
		{"progress and part of the next event", "event: message\n", "data: " + sseResult + "\n\n"},
		{"progress and an event without data", "event: message\ndata:\n\n", sseEvent(sseResult)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			release := make(chan struct{})
			be := httptest.NewServer(&sseCallBackend{
				parts: []string{sseEvent(sseProgress1) + tt.first, tt.rest},
				waits: []chan struct{}{release},
			})
			t.Cleanup(be.Close)
			gw := startGateway(t, Config{SSEKeepAlive: time.Hour}, upstreams.UpstreamConfig{Name: "be", URL: be.URL})
			// Registered last, so it runs first: the servers' Close waits for their handlers.
			t.Cleanup(func() {
				select {
				case <-release:
				default:
					close(release)
				}
			})
			// A bound on a wait that must not hang, not a measure of speed: the backend
			// waits for the progress to be read, so without it nothing more comes.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, gw.URL, strings.NewReader(sseCallBody))
			if err != nil {
				t.Fatal(err)
			}
			req.Header = modern("tools/call", "be__t")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatalf("the progress event did not reach the client while the backend waited for it: %v", err)
			}
			defer res.Body.Close()
			var got []string
			e := eventstream.NewReader(res.Body, 4<<10, 1<<20)
			for {
				ev, err := e.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatalf("the progress event did not reach the client while the backend waited for it: %v; got %q", err, got)
				}
				got = append(got, string(ev.Data))
				if string(ev.Data) == sseProgress1 {
					close(release)
				}
			}
			if len(got) < 2 || !strings.HasPrefix(got[len(got)-1], `{"jsonrpc":"2.0","id":1,"result"`) {
				t.Fatalf("stream ended without the result: %q", got)
			}
		})
	}
}

// newCannedSSEBackend answers every request with one event stream, read in one go: three
// progress notifications and the result. Like any canned backend, it allocates only the
// response.
func newCannedSSEBackend() *mcptest.CannedBackend {
	msgs := []string{sseProgress1, sseProgress2, sseProgress3,
		`{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"done 3"}],"resultType":"complete"}}`}
	var b bytes.Buffer
	for _, m := range msgs {
		b.WriteString(sseEvent(m))
	}
	return mcptest.NewCannedBackendOf(b.Bytes(), "text/event-stream")
}

// flushCountingWriter is mcptest.BenchWriter counting its flushes.
type flushCountingWriter struct {
	*mcptest.BenchWriter
	flushes int
}

func (w *flushCountingWriter) Flush() { w.flushes++ }

// BenchmarkForwardToolsCallSSE is BenchmarkForwardToolsCall for a backend that streams its
// answer: three progress notifications, then the result, all read in one go. It reports the
// flushes per call (each a write system call on a real connection).
func BenchmarkForwardToolsCallSSE(b *testing.B) {
	_, e := testServer(b, Config{}, oneBackend("http://127.0.0.1:9/mcp"), upstreams.Options{Transport: newCannedSSEBackend()},
		Deps{Version: "bench"})
	body := `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{` + progressMeta + `,"name":"be__echo","arguments":{"text":"hello"}}}`
	h := modern("tools/call", "be__echo")
	w := &flushCountingWriter{BenchWriter: mcptest.NewBenchWriter()}
	mcptest.BenchPostTo(b, e, h, body, w, w.BenchWriter, func() bool {
		return w.Code == 200 && bytes.Count(w.Body.Bytes(), []byte("notifications/progress")) == 3
	})
	b.ReportMetric(float64(w.flushes)/float64(b.N), "flushes/op")
}

// TestSSERelayResultWithLineBreaks: a result the backend spread over several data lines (which
// SSE joins with line breaks) reaches the client as one single-line event carrying the same
// result, after the progress event.
func TestSSERelayResultWithLineBreaks(t *testing.T) {
	spread := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\ndata: \"result\":{\"content\":[{\"type\":\"text\",\"text\":\"a\\nb\"}],\ndata: \"resultType\":\"complete\"}}\n\n"
	be := httptest.NewServer(&sseCallBackend{parts: []string{sseEvent(sseProgress1) + spread}})
	t.Cleanup(be.Close)
	gw := startGateway(t, Config{SSEKeepAlive: time.Hour}, upstreams.UpstreamConfig{Name: "be", URL: be.URL})
	r := do(t, http.MethodPost, gw.URL, modern("tools/call", "be__t"), sseCallBody)
	if r.Status != 200 || !strings.HasPrefix(string(r.Body), sseEvent(sseProgress1)) {
		t.Fatalf("status %d, body:\n%s", r.Status, r.Body)
	}
	events := strings.Split(strings.TrimSuffix(string(r.Body), "\n\n"), "\n\n")
	if len(events) != 2 {
		t.Fatalf("want the progress event and the result, got %d events:\n%s", len(events), r.Body)
	}
	data, ok := strings.CutPrefix(events[1], "event: message\ndata: ")
	if !ok || strings.ContainsAny(data, "\r\n") {
		t.Fatalf("the result event is not one data line: %q", events[1])
	}
	var m struct {
		Result struct {
			Content []struct{ Text string } `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(data), &m); err != nil || len(m.Result.Content) != 1 || m.Result.Content[0].Text != "a\nb" {
		t.Fatalf("result %s (%v)", data, err)
	}
}
