package loadgen

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

func startBackend(t *testing.T, cfg BackendConfig) (*Backend, string) {
	t.Helper()
	b, err := NewBackend(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(b)
	t.Cleanup(func() { b.Close(); srv.Close() })
	return b, srv.URL + DefaultBackendPath
}

func runLoad(t *testing.T, cfg Config) *Report {
	t.Helper()
	r, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rep, err := r.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestRunAgainstBackend(t *testing.T) {
	_, url := startBackend(t, BackendConfig{Tools: 50})
	mix, _ := ParseMix("call:4,list:1,confirm:1,sse:1")
	rep := runLoad(t, Config{URL: url, Concurrency: 4, Requests: 300, Mix: mix})
	if rep.Total.Operations != 300 || rep.Total.Errors != 0 {
		t.Fatalf("operations %d errors %v, want 300 and none", rep.Total.Operations, rep.Total.ErrorsByKind)
	}
	for _, op := range []string{"call", "list", "confirm", "sse"} {
		o := rep.Ops[op]
		if o == nil || o.Operations == 0 {
			t.Fatalf("no %s operations in %+v", op, rep.Ops)
		}
		want := o.Operations
		if op == "confirm" {
			want *= 2 // the MRTR pair counts once but takes two HTTP requests
		}
		if o.HTTPRequests != want {
			t.Errorf("%s: %d HTTP requests for %d operations", op, o.HTTPRequests, o.Operations)
		}
	}
	if rep.Total.Latency.P50 <= 0 || rep.Total.Latency.P99 < rep.Total.Latency.P50 || rep.Total.Latency.Max < rep.Total.Latency.P99 {
		t.Errorf("latency figures out of order: %+v", rep.Total.Latency)
	}
	var text bytes.Buffer
	if err := rep.WriteText(&text); err != nil || !bytes.Contains(text.Bytes(), []byte("confirm")) {
		t.Errorf("text report %q, %v", text.String(), err)
	}
}

// fakeTarget answers every request with handler's output, after the harness's headers passed.
func fakeTarget(t *testing.T, handler func(w http.ResponseWriter, id json.RawMessage)) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req, err := jsonrpc.Decode(body, jsonrpc.Limits{})
		if err != nil {
			t.Errorf("harness sent an invalid request: %v", err)
			return
		}
		handler(w, req.ID)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

func TestErrorKinds(t *testing.T) {
	jsonResult := func(result string) func(http.ResponseWriter, json.RawMessage) {
		return func(w http.ResponseWriter, id json.RawMessage) {
			w.Header().Set("Content-Type", "application/json")
			w.Write(jsonrpc.AppendResult(nil, id, json.RawMessage(result)))
		}
	}
	tests := []struct {
		name    string
		op      Op
		handler func(http.ResponseWriter, json.RawMessage)
		want    string
	}{
		{"ok", OpCall, jsonResult(`{"resultType":"complete","content":[]}`), ""},
		{"tool error", OpCall, jsonResult(`{"resultType":"complete","isError":true,"content":[]}`), KindToolError},
		{"unexpected input", OpCall, jsonResult(`{"resultType":"input_required","requestState":"s"}`), KindUnexpectedInput},
		{"missing resultType", OpList, jsonResult(`{"tools":[]}`), KindBadResult},
		{"confirm not required", OpConfirm, jsonResult(`{"resultType":"complete","content":[]}`), KindNotConfirmed},
		{"sse without progress", OpSSE, jsonResult(`{"resultType":"complete","content":[]}`), KindNoProgress},
		{"rpc error on 400", OpCall, func(w http.ResponseWriter, id json.RawMessage) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			w.Write(jsonrpc.AppendError(nil, id, jsonrpc.NewError(jsonrpc.CodeHeaderMismatch, "mismatch")))
		}, "rpc_-32020"},
		{"rpc error on 200", OpCall, func(w http.ResponseWriter, id json.RawMessage) {
			w.Header().Set("Content-Type", "application/json")
			w.Write(jsonrpc.AppendError(nil, id, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "unknown tool")))
		}, "rpc_-32602"},
		{"plain 502", OpCall, func(w http.ResponseWriter, _ json.RawMessage) {
			http.Error(w, "bad gateway", http.StatusBadGateway)
		}, "http_502"},
		{"wrong id", OpCall, func(w http.ResponseWriter, _ json.RawMessage) {
			jsonResult(`{"resultType":"complete"}`)(w, json.RawMessage(`"other"`))
		}, KindBadResponse},
		{"not JSON", OpCall, func(w http.ResponseWriter, _ json.RawMessage) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"jsonrpc":"2.0",`))
		}, KindBadResponse},
		{"SSE ends early", OpSSE, func(w http.ResponseWriter, _ json.RawMessage) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write([]byte("event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"p\",\"progress\":1}}\n\n"))
		}, KindIncompleteStream},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url := fakeTarget(t, tt.handler)
			rep := runLoad(t, Config{URL: url, Requests: 3, Mix: Mix{{tt.op, 1}}})
			if tt.want == "" {
				if rep.Total.Errors != 0 {
					t.Fatalf("errors %v, want none", rep.Total.ErrorsByKind)
				}
				return
			}
			if rep.Total.ErrorsByKind[tt.want] != 3 || rep.Total.Errors != 3 {
				t.Fatalf("errors %v, want 3 × %s", rep.Total.ErrorsByKind, tt.want)
			}
		})
	}
}

func TestTransportErrorIsCounted(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL + "/mcp"
	srv.Close() // nothing listens any more
	rep := runLoad(t, Config{URL: url, Requests: 2})
	if rep.Total.ErrorsByKind[KindTransport] != 2 {
		t.Fatalf("errors %v, want 2 × %s", rep.Total.ErrorsByKind, KindTransport)
	}
}
