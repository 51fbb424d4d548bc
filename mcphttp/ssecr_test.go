package mcphttp

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams"
)

// crStream rewrites a backend's event stream as a server that ends lines with a lone CR and
// starts the stream with a byte-order mark writes it, both of which the event-stream standard
// allows; other answers pass unchanged.
type crStream struct {
	http.ResponseWriter
	started, sse bool
}

func (w *crStream) WriteHeader(code int) {
	w.sse = strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream")
	w.ResponseWriter.WriteHeader(code)
}

func (w *crStream) Write(p []byte) (int, error) {
	if !w.started {
		w.started = true
		if !w.sse {
			w.sse = strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream")
		}
		if w.sse {
			if _, err := w.ResponseWriter.Write([]byte("\uFEFF")); err != nil {
				return 0, err
			}
		}
	}
	if w.sse {
		if _, err := w.ResponseWriter.Write(bytes.ReplaceAll(p, []byte("\n"), []byte("\r"))); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return w.ResponseWriter.Write(p)
}

func (w *crStream) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *crStream) Flush() { http.NewResponseController(w.ResponseWriter).Flush() }

// TestBackendStreamCRLineEnds: a backend whose event streams end lines with a lone CR and start
// with a byte-order mark is read as the standard says: its tools are listed and a call's
// progress notifications and result reach a real client through the gateway.
func TestBackendStreamCRLineEnds(t *testing.T) {
	be := mcptest.StartServer(t, "be", mcptest.WithMiddleware(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(&crStream{ResponseWriter: w}, r)
		})
	}))
	gw := startGateway(t, Config{}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	got := make(chan float64, 3)
	cs := mcptest.Connect(t, gw.URL, mcptest.WithProgress(func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
		got <- req.Params.Progress
	}))
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil || len(tools.Tools) == 0 {
		t.Fatalf("tools/list: %v, %v", tools, err)
	}
	params := &mcp.CallToolParams{Name: "be__" + mcptest.ToolProgress, Arguments: map[string]any{"steps": 3}}
	params.SetProgressToken("p1")
	res, err := cs.CallTool(t.Context(), params)
	if err != nil || res.IsError || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != "done 3" {
		t.Fatalf("tools/call: %+v, %v", res, err)
	}
	for want := 1.0; want <= 3; want++ {
		if p := <-got; p != want { // the test's deadline bounds the wait
			t.Errorf("progress %v, want %v", p, want)
		}
	}
	streams := 0
	for _, ex := range be.Requests() {
		if b := ex.ResponseBody; strings.HasPrefix(ex.ResponseHeader.Get("Content-Type"), "text/event-stream") {
			streams++
			if !bytes.HasPrefix(b, []byte("\uFEFF")) || bytes.IndexByte(b, '\n') >= 0 {
				t.Fatalf("the backend's stream was not rewritten: %q", b)
			}
		}
	}
	if streams == 0 {
		t.Fatal("the backend answered no event stream")
	}
}
