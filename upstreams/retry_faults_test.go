package upstreams

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams/internal/upstreamstest"
)

// hold blocks a fault handler until the client goes away or the test ends.
func hold(r *http.Request, done <-chan struct{}) {
	select {
	case <-r.Context().Done():
	case <-done:
	}
}

// endless writes chunk until the client stops reading, bounded so a broken test cannot spin.
func endless(w http.ResponseWriter, chunk string, done <-chan struct{}) {
	for range 1 << 16 {
		select {
		case <-done:
			return
		default:
		}
		if _, err := io.WriteString(w, chunk); err != nil {
			return
		}
	}
}

// TestFaultMatrix runs each backend fault next to a healthy backend: the faulty call fails with
// the named error, produced by the gateway's own bound (the caller's generous watchdog never
// fires: its expiry would surface as a context error, not as the wanted one), while the other
// backend keeps serving. Timings are never asserted.
func TestFaultMatrix(t *testing.T) {
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	sse := func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/event-stream")
		upstreamstest.SSEEvent(w, progressEvent)
	}
	tests := []struct {
		name    string
		h       http.HandlerFunc // nil: nothing listens
		mod     func(*UpstreamConfig)
		want    error
		wantMsg string
	}{
		{"refused connection", nil, nil, ErrUnavailable, ""},
		{"hang before headers", func(w http.ResponseWriter, r *http.Request) { hold(r, done) },
			func(u *UpstreamConfig) { u.ResponseHeaderTimeout = 100 * time.Millisecond }, ErrTimeout, "awaiting response headers"},
		{"hang mid-SSE", func(w http.ResponseWriter, r *http.Request) { sse(w); hold(r, done) },
			func(u *UpstreamConfig) {
				u.ResponseHeaderTimeout, u.Timeout = 50*time.Millisecond, 400*time.Millisecond
			},
			ErrTimeout, "within the timeout"},
		{"reset mid-stream", func(w http.ResponseWriter, _ *http.Request) { sse(w); panic(http.ErrAbortHandler) }, nil, ErrUnavailable, ""},
		{"garbage JSON", func(w http.ResponseWriter, _ *http.Request) {
			upstreamstest.WriteJSON(w, `{"jsonrpc":"2.0","id":1,"result":`)
		},
			nil, ErrBadResponse, ""},
		{"endless JSON", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			endless(w, `{"jsonrpc":"2.0","id":1,"result":{"x":"`+strings.Repeat("x", 4096), done)
		}, func(u *UpstreamConfig) { u.MaxResponseBytes = 64 << 10 }, ErrBadResponse, "limit"},
		{"endless SSE event", func(w http.ResponseWriter, _ *http.Request) {
			sse(w)
			endless(w, "data: "+strings.Repeat("x", 4096)+"\n", done)
		}, func(u *UpstreamConfig) { u.MaxResponseBytes = 64 << 10 }, ErrBadResponse, "limit"},
		{"slow drip", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			for _, c := range []byte(`{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[]}}`) {
				w.Write([]byte{c})
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
					return
				case <-time.After(50 * time.Millisecond):
				}
			}
		}, func(u *UpstreamConfig) { u.Timeout = 300 * time.Millisecond }, ErrTimeout, "within the timeout"},
		{"502", func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "bad gateway", http.StatusBadGateway) }, nil, ErrUnavailable, "502"},
		{"500", func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "oops", http.StatusInternalServerError) }, nil, ErrBadResponse, "500"},
	}
	good := mcptest.StartServer(t, "good")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url, arrived := deadURL(t), make(chan struct{}, 1)
			if tt.h != nil {
				url = upstreamstest.Loopback(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					io.Copy(io.Discard, r.Body)
					select {
					case arrived <- struct{}{}:
					default:
					}
					tt.h(w, r)
				})) + "/mcp"
			} else {
				arrived <- struct{}{}
			}
			uc := UpstreamConfig{Name: "fault", URL: url, Protocol: ProtocolVersion, Timeout: 10 * time.Second}
			if tt.mod != nil {
				tt.mod(&uc)
			}
			r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{uc,
				{Name: "good", URL: good.URL(), Protocol: ProtocolVersion}}}, Options{})
			watchdog, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			result := make(chan error, 1)
			go func() {
				s, err := faultCall(r, watchdog)
				if err == nil {
					err = drain(s)
				}
				result <- err
			}()
			<-arrived
			if res := callOnce(t, r, MethodToolsCall, "good__echo", KindTool,
				`{"_meta":`+upstreamstest.Meta+`,"name":"good__echo","arguments":{"text":"still here"}}`); mcptest.Path(res, "result", "isError") == true {
				t.Fatalf("the healthy backend failed during the fault: %v", res)
			}
			err := <-result
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Fatalf("err = %v, want %v mentioning %q", err, tt.want, tt.wantMsg)
			}
		})
	}
}

// TestStreamOutlivesHeaderTimeout: once the backend has answered with a stream, a quiet spell
// longer than the response-header timeout does not cut the call.
func TestStreamOutlivesHeaderTimeout(t *testing.T) {
	url, _ := upstreamstest.Scripted(t, func(_ int64, w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		upstreamstest.SSEEvent(w, progressEvent)
		time.Sleep(300 * time.Millisecond)
		upstreamstest.SSEEvent(w, progressEvent)
		time.Sleep(300 * time.Millisecond)
		upstreamstest.SSEEvent(w, `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[]}}`)
	})
	r := singleBackend(t, url, func(u *UpstreamConfig) { u.ResponseHeaderTimeout = 50 * time.Millisecond })
	s, err := faultCall(r, context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if msgs := collect(t, s); len(msgs) != 3 {
		t.Fatalf("got %d messages, want two progress notifications and the result", len(msgs))
	}
}
