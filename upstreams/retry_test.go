package upstreams

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/upstreams/internal/upstreamstest"
)

// toolsListBody is a one-tool tools/list result with the given cache hints.
func toolsListBody(tool string, ttlMs int, scope string) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "result": map[string]any{
		"tools":      []any{map[string]any{"name": tool, "inputSchema": map[string]any{"type": "object"}}},
		"resultType": "complete", "ttlMs": ttlMs, "cacheScope": scope,
	}})
	return string(b)
}

// fastRetry retries three times with a backoff too short to slow the tests.
var fastRetry = RetryConfig{Attempts: 3, Backoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond}

func singleBackend(t testing.TB, url string, mod func(*UpstreamConfig)) *Registry {
	t.Helper()
	uc := UpstreamConfig{Name: "fault", URL: url, Protocol: ProtocolVersion, Retry: fastRetry,
		Breaker: BreakerConfig{Disabled: true}, Timeout: 5 * time.Second}
	if mod != nil {
		mod(&uc)
	}
	return newTestRegistry(t, Config{Upstreams: []UpstreamConfig{uc}}, Options{})
}

func listTools(r *Registry, ctx context.Context) (json.RawMessage, error) {
	return r.List(ctx, &ListRequest{Method: MethodToolsList, Params: json.RawMessage(`{"_meta":` + upstreamstest.Meta + `}`)})
}

func TestRetrySafeRequests(t *testing.T) {
	tests := []struct {
		name     string
		answer   func(n int64, w http.ResponseWriter, r *http.Request)
		wantErr  error
		wantHits int64
	}{
		{"recovers after two 503s", func(n int64, w http.ResponseWriter, _ *http.Request) {
			if n <= 2 {
				http.Error(w, "busy", http.StatusServiceUnavailable)
				return
			}
			upstreamstest.WriteJSON(w, toolsListBody("t", 0, "public"))
		}, nil, 3},
		{"gives up after the attempts", func(_ int64, w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "busy", http.StatusBadGateway)
		}, ErrUnavailable, 3},
		{"429 is not retried", func(_ int64, w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Retry-After", "0")
			http.Error(w, "slow down", http.StatusTooManyRequests)
		}, ErrRateLimited, 1},
		{"500 is not retried", func(_ int64, w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "bug", http.StatusInternalServerError)
		}, ErrBadResponse, 1},
		{"garbage is not retried", func(_ int64, w http.ResponseWriter, _ *http.Request) {
			upstreamstest.WriteJSON(w, `{"jsonrpc":`)
		}, ErrBadResponse, 1},
		{"reset before the answer is retried", func(n int64, w http.ResponseWriter, _ *http.Request) {
			if n == 1 {
				panic(http.ErrAbortHandler)
			}
			upstreamstest.WriteJSON(w, toolsListBody("t", 0, "public"))
		}, nil, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url, hits := upstreamstest.Scripted(t, tt.answer)
			r := singleBackend(t, url, func(u *UpstreamConfig) { u.Required = true })
			_, err := listTools(r, context.Background())
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Fatalf("List = %v, want %v", err, tt.wantErr)
			}
			if hits.Load() != tt.wantHits {
				t.Fatalf("backend saw %d requests, want %d", hits.Load(), tt.wantHits)
			}
		})
	}
}

func TestRetryTimeoutNotRetried(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	url, hits := upstreamstest.Scripted(t, func(_ int64, _ http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	r := singleBackend(t, url, func(u *UpstreamConfig) {
		u.Required, u.ResponseHeaderTimeout = true, 50*time.Millisecond
	})
	if _, err := listTools(r, context.Background()); !errors.Is(err, ErrTimeout) || hits.Load() != 1 {
		t.Fatalf("List = %v after %d requests, want ErrTimeout after 1", err, hits.Load())
	}
}

// TestRetryNeverForCalls: the four client calls are not safe to repeat, whatever the failure.
func TestRetryNeverForCalls(t *testing.T) {
	for _, method := range []string{MethodToolsCall, MethodPromptsGet, MethodResourcesRead, MethodComplete} {
		t.Run(method, func(t *testing.T) {
			url, hits := upstreamstest.Scripted(t, func(_ int64, w http.ResponseWriter, _ *http.Request) {
				http.Error(w, "busy", http.StatusServiceUnavailable)
			})
			r := singleBackend(t, url, nil)
			params := `{"_meta":` + upstreamstest.Meta + `,"name":"t","uri":"mem://x","ref":{"type":"ref/prompt","name":"t"}}`
			_, err := r.Call(context.Background(), &Call{Method: method, ID: json.RawMessage(`1`),
				Params: json.RawMessage(params), Target: Target{Upstream: "fault", Name: "t"}})
			if !errors.Is(err, ErrUnavailable) || hits.Load() != 1 {
				t.Fatalf("Call = %v after %d requests, want ErrUnavailable after exactly 1", err, hits.Load())
			}
		})
	}
}

// TestRetryStopsWithTheCaller: a caller that goes away during the backoff is not kept waiting.
func TestRetryStopsWithTheCaller(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url, hits := upstreamstest.Scripted(t, func(_ int64, w http.ResponseWriter, _ *http.Request) {
		cancel()
		http.Error(w, "busy", http.StatusServiceUnavailable)
	})
	r := singleBackend(t, url, func(u *UpstreamConfig) {
		u.Retry = RetryConfig{Attempts: MaxRetryAttempts, Backoff: time.Hour, MaxBackoff: time.Hour}
	})
	if _, err := listTools(r, ctx); err == nil || hits.Load() != 1 {
		t.Fatalf("List = %v after %d requests, want an error after 1", err, hits.Load())
	}
}
