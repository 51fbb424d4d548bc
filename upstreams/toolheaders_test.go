package upstreams

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/mcp-gateway/gateway/upstreams/internal/upstreamstest"
	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
)

// toolsBackend answers tools/list with whatever its tools holds (or an error when fail is set)
// and counts the lists it served.
type toolsBackend struct {
	mu    sync.Mutex
	tools string
	ttlMs int
	fail  bool
	lists int
}

func (tb *toolsBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Method != MethodToolsList {
		http.Error(w, "no", http.StatusNotFound)
		return
	}
	tb.mu.Lock()
	defer tb.mu.Unlock()
	tb.lists++
	w.Header().Set("Content-Type", "application/json")
	if tb.fail {
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":"down"}}`, req.ID)
		return
	}
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":%s,"ttlMs":%d,"cacheScope":"public","resultType":"complete"}}`, req.ID, tb.tools, tb.ttlMs)
}

func (tb *toolsBackend) served() int {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return tb.lists
}

func (tb *toolsBackend) set(f func(tb *toolsBackend)) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	f(tb)
}

const regionTool = `[{"name":"t","inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}}]`

// TestToolHeadersFetchAndRefresh: the bindings come from the backend's list, indexed from a
// client's list or fetched on demand, reused while the list is cached (or for the minimum index
// lifetime when it is not), re-read after a list_changed, and a list that cannot be fetched is
// an error rather than "no bindings".
func TestToolHeadersFetchAndRefresh(t *testing.T) {
	for _, ttl := range []int{60000, 0} {
		tb := &toolsBackend{tools: regionTool, ttlMs: ttl}
		srv := httptest.NewServer(tb)
		t.Cleanup(srv.Close)
		r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "be", URL: srv.URL, Protocol: ProtocolVersion}}}, Options{})
		target := Target{Upstream: "be", Name: "t"}
		get := func() *ToolHeaders {
			t.Helper()
			th, err := r.ToolHeaders(context.Background(), &ToolHeaderQuery{Fetch: true}, target)
			if err != nil {
				t.Fatalf("ttl %d: ToolHeaders: %v", ttl, err)
			}
			return th
		}
		// Without Fetch, a list not held is unknown, and nothing is asked of the backend.
		if th, err := r.ToolHeaders(context.Background(), &ToolHeaderQuery{}, target); th != nil || err != nil || tb.served() != 0 {
			t.Fatalf("ttl %d: without Fetch: %+v %v, %d lists", ttl, th, err, tb.served())
		}
		// A client's tools/list is indexed as it passes.
		if _, err := r.List(context.Background(), &ListRequest{Method: MethodToolsList, Params: []byte(`{"_meta":` + upstreamstest.Meta + `}`)}); err != nil {
			t.Fatal(err)
		}
		if th, err := r.ToolHeaders(context.Background(), &ToolHeaderQuery{}, target); err != nil || th == nil || len(th.Bindings) != 1 || th.Bindings[0].Header != "Mcp-Param-Region" {
			t.Fatalf("ttl %d: after a client's list: %+v %v", ttl, th, err)
		}
		get()
		// A name the list does not show exactly is unknown: a backend that folds names could
		// run a listed tool under it.
		for _, name := range []string{"unlisted", "T", "t ", "\uff54"} {
			if th, err := r.ToolHeaders(context.Background(), &ToolHeaderQuery{Fetch: true}, Target{Upstream: "be", Name: name}); th != nil || !errors.Is(err, ErrUnknownName) {
				t.Fatalf("ttl %d: unlisted tool %q: %+v %v, want ErrUnknownName", ttl, name, th, err)
			}
		}
		if n := tb.served(); n != 1 {
			t.Fatalf("ttl %d: %d lists fetched for three lookups, want 1", ttl, n)
		}
		// The backend drops the annotation and says so: the next lookup reads the new list.
		tb.set(func(tb *toolsBackend) { tb.tools = `[{"name":"t","inputSchema":{"type":"object"}}]` })
		r.ListChanged("be", wire.NotifToolsListChanged)
		if th := get(); len(th.Bindings) != 0 || tb.served() != 2 {
			t.Fatalf("ttl %d: after list_changed: bindings %+v, lists %d", ttl, th, tb.served())
		}
		// A list that cannot be fetched fails the lookup (fail closed).
		tb.set(func(tb *toolsBackend) { tb.fail = true })
		r.ListChanged("be", wire.NotifToolsListChanged)
		if _, err := r.ToolHeaders(context.Background(), &ToolHeaderQuery{Fetch: true}, target); err == nil {
			t.Fatalf("ttl %d: a failed list gave no error", ttl)
		}
	}
}
