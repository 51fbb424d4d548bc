package upstreams

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams/internal/upstreamstest"
)

// listPage asks for one page and decodes it.
func listPage(t *testing.T, r *Registry, req ListRequest, cursor string) map[string]any {
	t.Helper()
	p := `{"_meta":` + upstreamstest.Meta
	if cursor != "" {
		p += `,"cursor":"` + cursor + `"`
	}
	req.Params = json.RawMessage(p + "}")
	res, err := r.List(context.Background(), &req)
	if err != nil {
		t.Fatalf("List %s: %v", req.Method, err)
	}
	return decodeObject(t, string(res))
}

// listAll pages through a list and returns the namespaced names in order.
func listAll(t *testing.T, r *Registry, req ListRequest, key, field string) []string {
	t.Helper()
	var names []string
	cursor := ""
	for range 100 {
		res := listPage(t, r, req, cursor)
		items, _ := res[key].([]any)
		for _, it := range items {
			names = append(names, mcptest.Path(it, field).(string))
		}
		next, ok := res["nextCursor"].(string)
		if !ok {
			return names
		}
		cursor = next
	}
	t.Fatal("list did not end")
	return nil
}

func TestListMergeOrderAndPaging(t *testing.T) {
	// Backends page by 2, the gateway by 5, so both paginations are exercised.
	r, _, _ := twoBackends(t, []mcptest.Option{mcptest.WithPageSize(2)}, []mcptest.Option{mcptest.WithPageSize(2)},
		func(c *Config) { c.PageSize = 5 })
	req := ListRequest{Method: MethodToolsList}
	first := listAll(t, r, req, "tools", "name")
	if len(first) != 14 {
		t.Fatalf("got %d tools, want 7 from each backend: %v", len(first), first)
	}
	for i, n := range first {
		want := "alpha__"
		if i >= 7 {
			want = "beta__"
		}
		if !strings.HasPrefix(n, want) {
			t.Fatalf("tool %d is %q: want all of alpha's before beta's: %v", i, n, first)
		}
		if strings.TrimPrefix(n, want) != strings.TrimPrefix(first[i%7], "alpha__") {
			t.Fatalf("backend order differs between identical backends: %v", first)
		}
	}
	if again := listAll(t, r, req, "tools", "name"); strings.Join(again, ",") != strings.Join(first, ",") {
		t.Fatalf("merge order not deterministic:\n%v\n%v", first, again)
	}
	page := listPage(t, r, req, "")
	if mcptest.Path(page, "resultType") != "complete" || len(page["tools"].([]any)) != 5 {
		t.Fatalf("first page = %v", page)
	}
}

func TestListKinds(t *testing.T) {
	r, _, _ := twoBackends(t, nil, nil, nil)
	tests := []struct {
		method, key, field string
		want               []string
	}{
		{MethodPromptsList, "prompts", "name", []string{"alpha__greet", "beta__greet"}},
		{MethodResourcesList, "resources", "uri", []string{"alpha+mem://readme", "beta+mem://readme"}},
		{MethodResourceTemplates, "resourceTemplates", "uriTemplate", []string{"alpha+mem://items/{id}", "beta+mem://items/{id}"}},
	}
	for _, tt := range tests {
		t.Run(tt.method, func(t *testing.T) {
			got := listAll(t, r, ListRequest{Method: tt.method}, tt.key, tt.field)
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for _, n := range got {
				kind := KindPrompt
				if tt.field != "name" {
					kind = KindResource
				}
				if _, err := r.Resolve(kind, n); err != nil {
					t.Fatalf("listed name %q does not resolve: %v", n, err)
				}
			}
		})
	}
}

func TestListBadCursor(t *testing.T) {
	r, _, _ := twoBackends(t, nil, nil, func(c *Config) { c.PageSize = 3 })
	page := listPage(t, r, ListRequest{Method: MethodToolsList}, "")
	good := page["nextCursor"].(string)
	onlyEcho := func(_ Kind, tg Target) bool { return tg.Name != "echo" }
	tests := []struct {
		name   string
		req    ListRequest
		cursor string
	}{
		{"garbage", ListRequest{Method: MethodToolsList}, "garbage"},
		{"tampered", ListRequest{Method: MethodToolsList}, "x" + good},
		{"other method", ListRequest{Method: MethodPromptsList}, good},
		{"other view", ListRequest{Method: MethodToolsList, Visible: onlyEcho}, good},
		{"empty", ListRequest{Method: MethodToolsList}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.req.Params = json.RawMessage(`{"_meta":` + upstreamstest.Meta + `,"cursor":"` + tt.cursor + `"}`)
			_, err := r.List(context.Background(), &tt.req)
			if !errors.Is(err, ErrBadCursor) {
				t.Fatalf("err = %v, want ErrBadCursor", err)
			}
		})
	}
}

func TestListVisibleAndCacheHints(t *testing.T) {
	echoOnly := func(k Kind, tg Target) bool { return k == KindTool && tg.Name == "echo" }
	tests := []struct {
		name       string
		alpha      []mcptest.Option
		beta       []mcptest.Option
		req        ListRequest
		wantTTL    float64
		wantScope  string
		wantCount  int
		wantFirstN string
	}{
		{"public min ttl", []mcptest.Option{mcptest.WithCacheHints(60000, "public")}, []mcptest.Option{mcptest.WithCacheHints(30000, "public")},
			ListRequest{Method: MethodToolsList}, 30000, "public", 14, "alpha__add"},
		{"private part", []mcptest.Option{mcptest.WithCacheHints(60000, "public")}, []mcptest.Option{mcptest.WithCacheHints(90000, "private")},
			ListRequest{Method: MethodToolsList}, 60000, "private", 14, "alpha__add"},
		{"filtered by identity", []mcptest.Option{mcptest.WithCacheHints(60000, "public")}, []mcptest.Option{mcptest.WithCacheHints(60000, "public")},
			ListRequest{Method: MethodToolsList, Visible: echoOnly, Private: true}, 60000, "private", 2, "alpha__echo"},
		{"omitted ttl is zero", nil, []mcptest.Option{mcptest.WithCacheHints(60000, "public")},
			ListRequest{Method: MethodToolsList}, 0, "", 14, "alpha__add"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _, _ := twoBackends(t, tt.alpha, tt.beta, nil)
			res := listPage(t, r, tt.req, "")
			items := res["tools"].([]any)
			if len(items) != tt.wantCount || mcptest.Path(items[0], "name") != tt.wantFirstN {
				t.Fatalf("got %d items starting %v, want %d starting %s", len(items), mcptest.Path(items[0], "name"), tt.wantCount, tt.wantFirstN)
			}
			if res["ttlMs"] != tt.wantTTL {
				t.Fatalf("ttlMs = %v, want %v", res["ttlMs"], tt.wantTTL)
			}
			if tt.wantScope != "" && res["cacheScope"] != tt.wantScope {
				t.Fatalf("cacheScope = %v, want %s", res["cacheScope"], tt.wantScope)
			}
		})
	}
}

// deadURL returns the URL of a loopback port that refuses connections.
func deadURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr + "/mcp"
}

func TestListBackendDown(t *testing.T) {
	for _, required := range []bool{false, true} {
		t.Run(map[bool]string{false: "optional", true: "required"}[required], func(t *testing.T) {
			alpha := mcptest.StartServer(t, "alpha", mcptest.WithCacheHints(60000, "public"))
			r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{
				{Name: "alpha", URL: alpha.URL()},
				{Name: "down", URL: deadURL(t), Required: required},
			}}, Options{})
			res, err := r.List(context.Background(), &ListRequest{Method: MethodToolsList,
				Params: json.RawMessage(`{"_meta":` + upstreamstest.Meta + `}`)})
			if required {
				if !errors.Is(err, ErrUnavailable) {
					t.Fatalf("err = %v, want ErrUnavailable from the required backend", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("List: %v", err)
			}
			m := decodeObject(t, string(res))
			if len(m["tools"].([]any)) != 7 || m["ttlMs"] != float64(0) {
				t.Fatalf("got %d tools, ttlMs %v: want alpha's 7 and ttlMs 0 for a partial list", len(m["tools"].([]any)), m["ttlMs"])
			}
			h := r.Health()
			if h[1].Up || h[1].LastError == "" || !h[0].Up {
				t.Fatalf("Health = %+v, want alpha up and down reported down with its error", h)
			}
		})
	}
}
