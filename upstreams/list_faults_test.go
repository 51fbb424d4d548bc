package upstreams

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams/internal/upstreamstest"
)

// faultOn serves a real MCP backend except for requests of method, which fault answers.
func faultOn(t *testing.T, real *mcptest.Server, method string, fault http.HandlerFunc) string {
	t.Helper()
	u, err := url.Parse(real.URL())
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})
	return upstreamstest.Loopback(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var m struct{ Method string }
		_ = json.Unmarshal(body, &m)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if m.Method == method {
			fault(w, r)
			return
		}
		proxy.ServeHTTP(w, r)
	})) + u.Path
}

// backendFault is one way a backend can answer a request badly.
type backendFault struct {
	name string
	h    http.HandlerFunc
}

// backendFaults are the bad answers TestListAndReadFaults and TestLegacyBackendFaults send; a
// handler that holds returns once done is closed or the request ends.
func backendFaults(done <-chan struct{}) []backendFault {
	sseHead := func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/event-stream")
		upstreamstest.SSEEvent(w, progressEvent)
	}
	const otherID = `{"jsonrpc":"2.0","id":"someone-else","result":{"tools":[],"prompts":[],"resources":[],"resourceTemplates":[],"contents":[],"content":[]}}`
	return []backendFault{
		{"hang before headers", func(w http.ResponseWriter, r *http.Request) { hold(r, done) }},
		{"hang mid-body", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":`)
			w.(http.Flusher).Flush()
			hold(r, done)
		}},
		{"hang mid-SSE", func(w http.ResponseWriter, r *http.Request) { sseHead(w); hold(r, done) }},
		{"reset mid-stream", func(w http.ResponseWriter, _ *http.Request) { sseHead(w); panic(http.ErrAbortHandler) }},
		{"garbage JSON", func(w http.ResponseWriter, _ *http.Request) {
			upstreamstest.WriteJSON(w, `{"jsonrpc":"2.0","id":1,"result":`)
		}},
		{"answer to another id", func(w http.ResponseWriter, _ *http.Request) { upstreamstest.WriteJSON(w, otherID) }},
		{"SSE answer to another id", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			upstreamstest.SSEEvent(w, otherID)
		}},
		{"endless SSE", func(w http.ResponseWriter, r *http.Request) {
			sseHead(w)
			for {
				select {
				case <-done:
					return
				case <-r.Context().Done():
					return
				default:
				}
				upstreamstest.SSEEvent(w, progressEvent)
			}
		}},
		{"gigantic SSE line", func(w http.ResponseWriter, _ *http.Request) {
			sseHead(w)
			endless(w, "data: "+strings.Repeat("x", 4096), done)
		}},
		{"body over maxResponseBytes", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			endless(w, `{"jsonrpc":"2.0","id":1,"result":{"x":"`+strings.Repeat("x", 4096), done)
		}},
	}
}

// faultyRegistry has a healthy backend alpha and a backend beta at real whose answers to method
// are fault's, with tight gateway bounds.
func faultyRegistry(t *testing.T, alpha, real *mcptest.Server, method string, fault http.HandlerFunc) *Registry {
	t.Helper()
	return newTestRegistry(t, Config{Upstreams: []UpstreamConfig{
		{Name: "alpha", URL: alpha.URL()},
		{Name: "beta", URL: faultOn(t, real, method, fault), Timeout: 500 * time.Millisecond,
			ResponseHeaderTimeout: 300 * time.Millisecond, MaxResponseBytes: 64 << 10},
	}}, Options{})
}

// wantListWithoutBeta lists method and fails unless it succeeds, within watchdog, with alpha's
// items under key and none of beta's.
func wantListWithoutBeta(t *testing.T, watchdog context.Context, r *Registry, method, key string) {
	t.Helper()
	res, err := r.List(watchdog, &ListRequest{Method: method,
		Params: json.RawMessage(`{"_meta":` + upstreamstest.Meta + `}`)})
	if err != nil || watchdog.Err() != nil {
		t.Fatalf("List with one faulty optional backend: %v (watchdog %v)", err, watchdog.Err())
	}
	items, _ := decodeObject(t, string(res))[key].([]any)
	if len(items) == 0 {
		t.Fatalf("the healthy backend's %s are missing: %s", key, res)
	}
	for _, it := range items {
		if b, _ := json.Marshal(it); strings.Contains(string(b), `"beta__`) || strings.Contains(string(b), `"beta+`) {
			t.Fatalf("the faulty backend's item was listed: %s", b)
		}
	}
}

// wantCallError calls method on beta's name of kind and fails unless the stream ends with the
// gateway's own error before watchdog does.
func wantCallError(t *testing.T, watchdog context.Context, r *Registry, method string, kind Kind, name, params string) {
	t.Helper()
	target, err := r.Resolve(kind, name)
	if err != nil {
		t.Fatal(err)
	}
	s, err := r.Call(watchdog, &Call{Method: method, ID: json.RawMessage(`1`), Target: target,
		Params: json.RawMessage(`{"_meta":` + upstreamstest.Meta + params + `}`)})
	for err == nil && watchdog.Err() == nil {
		var final bool
		if _, final, err = s.Next(); final {
			break
		}
	}
	if s != nil {
		s.Close()
	}
	if err == nil || watchdog.Err() != nil {
		t.Fatalf("%s on the faulty backend: err = %v (watchdog %v), want the gateway's own error", method, err, watchdog.Err())
	}
	t.Logf("%s: %v", method, err)
}

// TestListAndReadFaults: a backend that answers discovery well but faults on one list method
// (or a read) costs a fan-out list only that backend's items, and a read a clear error; each
// ends by the gateway's own bounds (timeout, maxResponseBytes), never the caller's watchdog.
func TestListAndReadFaults(t *testing.T) {
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	lists := []struct{ method, key string }{
		{MethodToolsList, "tools"},
		{MethodPromptsList, "prompts"},
		{MethodResourcesList, "resources"},
		{MethodResourceTemplates, "resourceTemplates"},
	}
	alpha := mcptest.StartServer(t, "alpha")
	beta := mcptest.StartServer(t, "beta")
	for _, f := range backendFaults(done) {
		for _, l := range append(lists, struct{ method, key string }{MethodResourcesRead, ""}) {
			t.Run(f.name+"/"+l.method, func(t *testing.T) {
				r := faultyRegistry(t, alpha, beta, l.method, f.h)
				watchdog, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				if l.method == MethodResourcesRead {
					wantCallError(t, watchdog, r, l.method, KindResource, "beta+mem://readme", `,"uri":"mem://readme"`)
					return
				}
				wantListWithoutBeta(t, watchdog, r, l.method, l.key)
			})
		}
	}
}

// listenOutcomes returns Options that record the outcome of every backend listen, and what
// they recorded so far.
func listenOutcomes() (Options, func() []string) {
	var mu sync.Mutex
	var got []string
	opts := Options{Observe: func(_, m, o string, _ time.Duration) {
		if m == MethodListen {
			mu.Lock()
			got = append(got, o)
			mu.Unlock()
		}
	}}
	return opts, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(got)
	}
}

// TestListenStreamFaults: a backend listen stream that ends badly is recorded as what it was,
// so that health, the breaker and the outcome metric see it: an answer to another request and
// garbage are bad responses, an error answer is the backend's error, a reset is unavailable, a
// hang before headers a timeout; only a result for the listen is a graceful end. Whatever the
// end, the client's listen ends by the gateway's own bounds with its graceful end.
func TestListenStreamFaults(t *testing.T) {
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	// answer starts an event stream and sends msg, with ID replaced by the listen's id.
	answer := func(msg string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			var req struct{ ID json.RawMessage }
			body, _ := io.ReadAll(r.Body)
			_ = json.Unmarshal(body, &req)
			w.Header().Set("Content-Type", "text/event-stream")
			upstreamstest.SSEEvent(w, strings.ReplaceAll(msg, "ID", string(req.ID)))
		}
	}
	tests := []struct {
		name string
		h    http.HandlerFunc
		want string
	}{
		{"graceful end", answer(`{"jsonrpc":"2.0","id":ID,"result":{"resultType":"complete"}}`), OutcomeOK},
		{"error answer", answer(`{"jsonrpc":"2.0","id":ID,"error":{"code":-32603,"message":"no"}}`), OutcomeBackendError},
		{"result for another id", answer(`{"jsonrpc":"2.0","id":"someone-else","result":{"resultType":"complete"}}`), OutcomeBadResponse},
		{"error for another id", answer(`{"jsonrpc":"2.0","id":"someone-else","error":{"code":-32603,"message":"no"}}`), OutcomeBadResponse},
		{"garbage event", answer(`{"jsonrpc":"2.0",`), OutcomeBadResponse},
		{"gigantic SSE line", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			endless(w, "data: "+strings.Repeat("x", 4096), done)
		}, OutcomeBadResponse},
		{"gigantic comment line", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			endless(w, ": "+strings.Repeat("x", 4096), done)
		}, OutcomeBadResponse},
		{"gigantic id field", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			endless(w, "id: "+strings.Repeat("x", 4096), done)
		}, OutcomeBadResponse},
		{"reset mid-stream", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			upstreamstest.SSEEvent(w, `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
			panic(http.ErrAbortHandler)
		}, OutcomeUnavailable},
		{"hang before headers", func(w http.ResponseWriter, r *http.Request) { hold(r, done) }, OutcomeTimeout},
	}
	alpha := mcptest.StartServer(t, "alpha")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts, recorded := listenOutcomes()
			r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "alpha",
				URL: faultOn(t, alpha, MethodListen, tt.h), Timeout: 500 * time.Millisecond, MaxResponseBytes: 64 << 10}}},
				opts)
			watchdog, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var last string
			err := r.Listen(watchdog, json.RawMessage(`"L1"`),
				json.RawMessage(`{"_meta":`+upstreamstest.Meta+`,"notifications":{"toolsListChanged":true}}`), nil, nil,
				func(m []byte) error { last = string(m); return nil })
			if err != nil || watchdog.Err() != nil {
				t.Fatalf("Listen = %v (watchdog %v), want its graceful end", err, watchdog.Err())
			}
			if !strings.Contains(last, `"id":"L1","result"`) {
				t.Errorf("the listen's last message = %s, want its graceful end", last)
			}
			if got := recorded(); !slices.Equal(got, []string{tt.want}) {
				t.Errorf("the backend listen was recorded as %v, want [%s]", got, tt.want)
			}
		})
	}
}

// TestLegacyBackendFaults: the faults of TestListAndReadFaults, on a pre-2026 backend whose
// session was set up well (its initialize and discovery answered by a real go-sdk server): a
// call and a read end with the gateway's own error, a list leaves out only that backend.
func TestLegacyBackendFaults(t *testing.T) {
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	alpha := mcptest.StartServer(t, "alpha")
	legacy := mcptest.StartLegacyServer(t, "beta")
	methods := []struct{ method, key string }{
		{MethodToolsCall, ""}, {MethodResourcesRead, ""},
		{MethodToolsList, "tools"}, {MethodResourcesList, "resources"},
	}
	for _, f := range backendFaults(done) {
		for _, m := range methods {
			t.Run(f.name+"/"+m.method, func(t *testing.T) {
				r := faultyRegistry(t, alpha, legacy, m.method, f.h)
				watchdog, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				switch m.method {
				case MethodToolsCall:
					wantCallError(t, watchdog, r, m.method, KindTool, "beta__echo", `,"name":"echo","arguments":{"text":"x"}`)
				case MethodResourcesRead:
					wantCallError(t, watchdog, r, m.method, KindResource, "beta+mem://readme", `,"uri":"mem://readme"`)
				default:
					wantListWithoutBeta(t, watchdog, r, m.method, m.key)
				}
			})
		}
	}
}
