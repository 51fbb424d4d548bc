package gateway

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams"
)

// pagingBackend is an MCP backend whose tools/list is paged by page: it gets the cursor the
// gateway sent ("" for the first page) and returns the page's tools and the JSON of its
// nextCursor ("" for none). It counts the list requests it answers.
func pagingBackend(t *testing.T, page func(cursor string) (tools []string, next string)) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var lists atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var q struct {
			ID     json.RawMessage
			Method string
			Params struct{ Cursor string }
		}
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&q); err != nil {
			http.Error(w, "not JSON", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if q.Method != "tools/list" {
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(q.ID)+`,"error":{"code":-32601,"message":"Method not found"}}`)
			return
		}
		lists.Add(1)
		tools, next := page(q.Params.Cursor)
		res := `{"tools":[` + strings.Join(tools, ",") + `],"ttlMs":60000`
		if next != "" {
			res += `,"nextCursor":` + next
		}
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(q.ID)+`,"result":`+res+`}}`)
	}))
	t.Cleanup(srv.Close)
	return srv, &lists
}

// bigTool is a tool named name whose description makes it about size bytes.
func bigTool(name string, size int) string {
	return `{"name":"` + name + `","description":"` + strings.Repeat("d", size) + `","inputSchema":{"type":"object"}}`
}

// allTools lists every tool through gw, following the gateway's own cursors.
func allTools(t *testing.T, gw Listeners) []string {
	t.Helper()
	var all []string
	cursor := ""
	for range 100 {
		names, next, code := listPage(t, gw, cursor)
		if code != 0 {
			t.Fatalf("tools/list: error %d", code)
		}
		all = append(all, names...)
		if cursor = next; cursor == "" {
			return all
		}
	}
	t.Fatal("tools/list: the gateway's own pages do not end")
	return nil
}

// TestBackendListsThatDoNotEnd: a backend's tools/list whose pagination never ends (a cursor
// that comes back every page), or whose pages together are more than the replica holds for the
// responses it is relaying (server.maxResultBytesInFlight), is left out of the merged list, the
// other backends' tools listed, within the backend's timeout: the gateway follows a bounded number
// of pages and holds a backend's list, page after page, against the same budget as one
// response. A list that fits is listed whole, again and again: its charge is returned.
func TestBackendListsThatDoNotEnd(t *testing.T) {
	const pageBytes, pages, budget = 60 << 10, 40, 1 << 20 // 40 pages of 60 KiB: 2.4 MiB, over 1 MiB
	alpha := mcptest.StartServer(t, "alpha")
	endless, endlessLists := pagingBackend(t, func(string) ([]string, string) {
		return []string{`{"name":"again","inputSchema":{"type":"object"}}`}, `"same"`
	})
	paged := func(n int) func(string) ([]string, string) {
		return func(cursor string) ([]string, string) {
			i := 0
			if cursor != "" {
				fmt.Sscanf(cursor, "p%d", &i)
			}
			next := ""
			if i+1 < n {
				next = fmt.Sprintf(`"p%d"`, i+1)
			}
			return []string{bigTool(fmt.Sprintf("t%d", i), pageBytes)}, next
		}
	}
	huge, _ := pagingBackend(t, paged(pages))
	fits, _ := pagingBackend(t, paged(pages/8)) // 5 pages: 300 KiB
	start := func(backends map[string]*httptest.Server) Listeners {
		return startTestGateway(t, func(c *Config) {
			c.Server.MaxResultBytesInFlight = budget
			c.Cache.Disabled = true // every list asks the backends again
			for _, name := range slices.Sorted(maps.Keys(backends)) {
				c.Upstreams = append(c.Upstreams, UpstreamConfig{UpstreamConfig: upstreams.UpstreamConfig{
					Name: name, URL: backends[name].URL + "/mcp", Timeout: 5 * time.Second, MaxResponseBytes: 64 << 10}})
			}
		}, alpha)
	}

	gw := start(map[string]*httptest.Server{"endless": endless, "huge": huge})
	got := allTools(t, gw)
	if !slices.Contains(got, "alpha__echo") || slices.ContainsFunc(got, func(n string) bool {
		return strings.HasPrefix(n, "endless__") || strings.HasPrefix(n, "huge__")
	}) {
		t.Errorf("tools listed %v: want alpha's, and neither the endless list nor the one over the budget", got)
	}
	if n := endlessLists.Load(); n == 0 || n > 100 {
		t.Errorf("the endless list was asked %d pages, want a bounded number", n)
	}

	gw = start(map[string]*httptest.Server{"fits": fits})
	for i := range 4 {
		got := allTools(t, gw)
		if n := len(slices.DeleteFunc(got, func(n string) bool { return !strings.HasPrefix(n, "fits__") })); n != pages/8 {
			t.Fatalf("list %d: %d of the fitting backend's %d tools", i, n, pages/8)
		}
	}
}

// TestBackendListCursorsAsClientsReadThem: a backend's nextCursor is read as the SDKs' clients
// read it: null or an empty string ends the list (Go's and TypeScript's clients stop at a
// cursor that is empty), where the gateway used to ask for the next page with an empty cursor,
// get the first again, and leave the backend out after a hundred pages; a nextCursor that is
// not a string (which their decoders refuse) leaves the backend out, where the gateway used to
// take its first page for the whole list, and cache it as such.
func TestBackendListCursorsAsClientsReadThem(t *testing.T) {
	alpha := mcptest.StartServer(t, "alpha")
	backends := map[string]*httptest.Server{}
	requests := map[string]*atomic.Int32{}
	for name, next := range map[string]string{"empty": `""`, "null": `null`, "number": `2`} {
		backends[name], requests[name] = pagingBackend(t, func(string) ([]string, string) {
			return []string{`{"name":"t","inputSchema":{"type":"object"}}`}, next
		})
	}
	gw := startTestGateway(t, func(c *Config) {
		for _, name := range slices.Sorted(maps.Keys(backends)) {
			c.Upstreams = append(c.Upstreams, UpstreamConfig{UpstreamConfig: upstreams.UpstreamConfig{
				Name: name, URL: backends[name].URL + "/mcp", Timeout: 5 * time.Second}})
		}
	}, alpha)
	got := allTools(t, gw)
	for _, want := range []string{"alpha__echo", "empty__t", "null__t"} {
		if !slices.Contains(got, want) {
			t.Errorf("tools listed %v: want %s", got, want)
		}
	}
	if slices.Contains(got, "number__t") {
		t.Errorf("tools listed %v: want none of the backend whose nextCursor is a number", got)
	}
	for _, name := range []string{"empty", "null"} {
		if n := requests[name].Load(); n != 1 {
			t.Errorf("%s: %d list requests, want its one page", name, n)
		}
	}
}
