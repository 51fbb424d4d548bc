package upstreams

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams/internal/upstreamstest"
)

// faultBackend starts a loopback HTTP backend with handler h and a Registry over it.
func faultBackend(t *testing.T, h http.HandlerFunc, mod func(*UpstreamConfig)) *Registry {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	uc := UpstreamConfig{Name: "fault", URL: srv.URL + "/mcp", Timeout: 2 * time.Second}
	if mod != nil {
		mod(&uc)
	}
	return newTestRegistry(t, Config{Upstreams: []UpstreamConfig{uc}}, Options{})
}

// pinModern pins a fault backend to 2026-07-28, so that its faulty answer is not its
// server/discover's too.
func pinModern(u *UpstreamConfig) { u.Protocol = ProtocolVersion }

func faultCall(r *Registry, ctx context.Context) (*Stream, error) {
	return r.Call(ctx, &Call{
		Method: MethodToolsCall, ID: json.RawMessage(`1`), Target: Target{Upstream: r.Upstreams()[0], Name: "t"},
		Params: json.RawMessage(`{"_meta":` + progressMeta + `,"name":"t"}`), ProgressToken: json.RawMessage(`1`),
	})
}

// progressMeta is upstreamstest.Meta with the progressToken progressEvent reports under.
const progressMeta = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":1}`

// drain reads a stream until the final message or an error and returns the error.
func drain(s *Stream) error {
	defer s.Close()
	for range 1000 {
		_, final, err := s.Next()
		if err != nil || final {
			return err
		}
	}
	return errors.New("stream did not end")
}

const progressEvent = `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`

func TestCallFaults(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	tests := []struct {
		name string
		h    http.HandlerFunc
		mod  func(*UpstreamConfig)
		want error
	}{
		{"hang before headers", func(w http.ResponseWriter, r *http.Request) {
			// Reading the body lets the server notice the client closing the connection.
			io.Copy(io.Discard, r.Body)
			select {
			case <-r.Context().Done():
			case <-release:
			}
		}, func(u *UpstreamConfig) { u.Timeout = 100 * time.Millisecond }, ErrTimeout},
		{"garbage JSON body", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"a":1,"a":2}}`)
		}, nil, ErrBadResponse},
		{"not JSON at all", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `<html>`)
		}, nil, ErrBadResponse},
		{"oversized JSON", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"t":"`+strings.Repeat("x", 4096)+`"}}`)
		}, func(u *UpstreamConfig) { u.MaxResponseBytes = 1024 }, ErrBadResponse},
		// A response the gateway cannot tie to its request is not relayed under the caller's id.
		{"answer to another request", func(w http.ResponseWriter, _ *http.Request) {
			upstreamstest.WriteJSON(w, `{"jsonrpc":"2.0","id":2,"result":{"content":[]}}`)
		}, nil, ErrBadResponse},
		{"answer with a string for the number id", func(w http.ResponseWriter, _ *http.Request) {
			upstreamstest.WriteJSON(w, `{"jsonrpc":"2.0","id":"1","result":{"content":[]}}`)
		}, nil, ErrBadResponse},
		{"result without an id", func(w http.ResponseWriter, _ *http.Request) {
			upstreamstest.WriteJSON(w, `{"jsonrpc":"2.0","result":{"content":[]}}`)
		}, nil, ErrBadResponse},
		{"result and error together", func(w http.ResponseWriter, _ *http.Request) {
			upstreamstest.WriteJSON(w, `{"jsonrpc":"2.0","id":1,"result":{"content":[]},"error":{"code":1,"message":"x"}}`)
		}, nil, ErrBadResponse},
		// An error object the SDKs' clients would not read as one is not relayed as an error
		// the backend never sent (jsonrpc.TestDecodeMessageErrorObject has the whole family).
		{"null error", func(w http.ResponseWriter, _ *http.Request) {
			upstreamstest.WriteJSON(w, `{"jsonrpc":"2.0","id":1,"error":null}`)
		}, pinModern, ErrBadResponse},
		{"empty error", func(w http.ResponseWriter, _ *http.Request) {
			upstreamstest.WriteJSON(w, `{"jsonrpc":"2.0","id":1,"error":{}}`)
		}, pinModern, ErrBadResponse},
		{"error code in another case", func(w http.ResponseWriter, _ *http.Request) {
			upstreamstest.WriteJSON(w, `{"jsonrpc":"2.0","id":1,"error":{"Code":-32601,"message":"x"}}`)
		}, pinModern, ErrBadResponse},
		{"503 plain text", func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "overloaded", http.StatusServiceUnavailable)
		}, nil, ErrUnavailable},
		{"401 plain text", func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "bad credential", http.StatusUnauthorized)
		}, nil, ErrBadResponse},
		{"redirect not followed", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
		}, nil, ErrBadResponse},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := faultBackend(t, tt.h, tt.mod)
			_, err := faultCall(r, context.Background())
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestCallConnectionRefused(t *testing.T) {
	r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "down", URL: deadURL(t)}}}, Options{})
	_, err := faultCall(r, context.Background())
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable", err)
	}
	if h := r.Health()[0]; h.Up || h.LastError == "" {
		t.Fatalf("Health = %+v, want down with an error", h)
	}
}

func TestCallStreamFaults(t *testing.T) {
	tests := []struct {
		name string
		h    http.HandlerFunc
		mod  func(*UpstreamConfig)
		want error
	}{
		{"reset mid-stream", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			upstreamstest.SSEEvent(w, progressEvent)
			panic(http.ErrAbortHandler) // the server drops the connection without ending the body
		}, nil, ErrUnavailable},
		{"ends without a response", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			upstreamstest.SSEEvent(w, progressEvent)
		}, nil, ErrBadResponse},
		{"oversized event", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			upstreamstest.SSEEvent(w, progressEvent)
			upstreamstest.SSEEvent(w, `{"jsonrpc":"2.0","id":1,"result":{"t":"`+strings.Repeat("x", 4096)+`"}}`)
		}, func(u *UpstreamConfig) { u.MaxResponseBytes = 1024 }, ErrBadResponse},
		{"server-to-client request", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			upstreamstest.SSEEvent(w, progressEvent)
			upstreamstest.SSEEvent(w, `{"jsonrpc":"2.0","id":9,"method":"ping"}`)
		}, nil, ErrBadResponse},
		{"answer to another request", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			upstreamstest.SSEEvent(w, progressEvent)
			upstreamstest.SSEEvent(w, `{"jsonrpc":"2.0","id":7,"result":{"content":[]}}`)
		}, nil, ErrBadResponse},
		{"result and error together", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			upstreamstest.SSEEvent(w, progressEvent)
			upstreamstest.SSEEvent(w, `{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}`)
		}, nil, ErrBadResponse},
		{"garbage event", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			upstreamstest.SSEEvent(w, progressEvent)
			upstreamstest.SSEEvent(w, `{"jsonrpc":"2.0",`)
		}, nil, ErrBadResponse},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Pinned modern: these answers would fail the era probe before the call is sent.
			r := faultBackend(t, tt.h, func(u *UpstreamConfig) {
				u.Protocol = ProtocolVersion
				if tt.mod != nil {
					tt.mod(u)
				}
			})
			s, err := faultCall(r, context.Background())
			if err != nil {
				t.Fatalf("Call: %v", err)
			}
			msg, final, err := s.Next()
			if err != nil || final || !strings.Contains(string(msg), "notifications/progress") {
				t.Fatalf("first message = %s, %v, %v; want the progress notification", msg, final, err)
			}
			if err := drain(s); !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestCallClientCancelReachesBackend(t *testing.T) {
	backend := mcptest.StartServer(t, "slow")
	r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "slow", URL: backend.URL()}}}, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		s, err := r.Call(ctx, &Call{
			Method: MethodToolsCall, ID: json.RawMessage(`1`), Target: Target{Upstream: "slow", Name: "slow"},
			Params: json.RawMessage(`{"_meta":` + upstreamstest.Meta + `,"name":"slow__slow","arguments":{"ms":60000}}`),
		})
		if err == nil {
			err = drain(s)
		}
		done <- err
	}()
	wait, stop := context.WithTimeout(context.Background(), 30*time.Second)
	defer stop()
	if err := backend.WaitSlow(wait, func(s mcptest.SlowStats) bool { return s.Started == 1 }); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if err := backend.WaitSlow(wait, func(s mcptest.SlowStats) bool { return s.Cancelled == 1 }); err != nil {
		t.Fatalf("the backend handler was not cancelled: %v", err)
	}
}

func TestCallObserve(t *testing.T) {
	type obs struct{ upstream, method, outcome string }
	var got []obs
	backend := mcptest.StartServer(t, "alpha")
	r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "alpha", URL: backend.URL()}}}, Options{
		Observe: func(u, m, o string, _ time.Duration) { got = append(got, obs{u, m, o}) },
	})
	for _, name := range []string{"echo", "nope"} {
		s, err := r.Call(context.Background(), &Call{Method: MethodToolsCall, ID: json.RawMessage(`1`),
			Target: Target{Upstream: "alpha", Name: name}, Params: json.RawMessage(`{"_meta":` + upstreamstest.Meta + `,"name":"` + name + `","arguments":{"text":"x"}}`)})
		if err != nil {
			t.Fatal(err)
		}
		collect(t, s)
	}
	// The era probe (protocol auto) is a backend request too, observed once before the first call.
	want := []obs{{"alpha", MethodDiscover, OutcomeOK}, {"alpha", MethodToolsCall, OutcomeOK}, {"alpha", MethodToolsCall, OutcomeBackendError}}
	if !slices.Equal(got, want) {
		t.Fatalf("observed %v, want %v", got, want)
	}
}
