package upstreams

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

func TestResolveNormalizesResources(t *testing.T) {
	r := nsRegistry(t, "", false, "fs")
	solo := nsRegistry(t, "", true, "solo")
	for _, tt := range []struct {
		reg        *Registry
		namespaced string
		want       string // the backend-side name, or "" for ErrBadURI
	}{
		{r, "fs+file:///public/../secret/key", "file:///secret/key"},
		{r, "fs+FILE://LOCALHOST/a/%7e/./b", "file:///a/~/b"},
		{r, "fs+file:///a/{x}", "file:///a/{x}"},
		{r, "fs+FILE:///a/{x}", "file:///a/{x}"},
		{r, "fs+file:///a/..%2Fb", ""},
		{r, "fs+file:///a/../{x}", ""},
		{r, "fs+file:///a\\b", ""},
		{solo, "file:///public/%2e%2e/secret", "file:///secret"},
		{solo, "file:///a%2fb", ""},
	} {
		got, err := tt.reg.Resolve(KindResource, tt.namespaced)
		switch {
		case tt.want == "" && !errors.Is(err, ErrBadURI):
			t.Errorf("Resolve(%q) = %+v, %v; want ErrBadURI", tt.namespaced, got, err)
		case tt.want != "" && (err != nil || got.Name != tt.want):
			t.Errorf("Resolve(%q) = %+v, %v; want name %q", tt.namespaced, got, err, tt.want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("Resolve(%q): the error quotes the URI: %v", tt.namespaced, err)
		}
	}
}

// hideSecret is a caller's policy: everything under file:///secret/ is hidden, and a deny rule
// covers it (embedded resources are dropped too).
func hideSecret(_ Kind, t Target) bool { return !strings.HasPrefix(t.Name, "file:///secret/") }

func TestRewriteHidesResources(t *testing.T) {
	ns := &namespace{sep: "__", known: map[string]bool{"fs": true}}
	rw := uriRewriter{ns: ns, upstream: "fs", visible: hideSecret, embedded: hideSecret}
	for _, tt := range []struct {
		name, method, in, want string
		err                    error
	}{
		{"read drops hidden contents", MethodResourcesRead,
			`{"contents":[{"uri":"file:///a","text":"t"},{"uri":"file:///secret/k","text":"S"},{"uri":"file:///x/../secret/k","text":"S"},{"uri":"file:///a%2Fb","text":"S"}]}`,
			`{"contents":[{"uri":"fs+file:///a","text":"t"}]}`, nil},
		{"read of only hidden contents", MethodResourcesRead,
			`{"contents":[{"uri":"file:///secret/k","text":"S"}]}`, "", errHiddenResource},
		{"read item without uri dropped", MethodResourcesRead,
			`{"contents":[{"text":"S"},{"uri":"file:///a","text":"t"}]}`, `{"contents":[{"uri":"fs+file:///a","text":"t"}]}`, nil},
		{"read item with an escaped uri key", MethodResourcesRead,
			`{"contents":[{"\u0075ri":"file:///secret/k","text":"S"}]}`, "", errHiddenResource},
		{"read normalises", MethodResourcesRead,
			`{"contents":[{"uri":"FILE:///a/./b","text":"t"}]}`, `{"contents":[{"uri":"fs+file:///a/b","text":"t"}]}`, nil},
		{"tool drops hidden embedded resource and link", MethodToolsCall,
			`{"content":[{"type":"text","text":"ok"},{"type":"resource","resource":{"uri":"file:///secret/k","text":"S"}},{"type":"resource_link","uri":"file:///secret/k"},{"type":"resource_link","uri":"file:///a"}]}`,
			`{"content":[{"type":"text","text":"ok"},{"type":"resource_link","uri":"fs+file:///a"}]}`, nil},
		{"prompt drops a message whose resource is hidden", MethodPromptsGet,
			`{"messages":[{"role":"user","content":{"type":"resource","resource":{"uri":"file:///secret/k","text":"S"}}},{"role":"user","content":{"type":"text","text":"hi"}}]}`,
			`{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}]}`, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := resultFromBytes(rw, tt.method, []byte(tt.in))
			if !errors.Is(err, tt.err) || tt.err == nil && string(got) != tt.want {
				t.Fatalf("got %s, %v\nwant %s, %v", got, err, tt.want, tt.err)
			}
			if tt.err == nil && !json.Valid(got) {
				t.Fatalf("invalid JSON: %s", got)
			}
		})
	}
	if _, ok := rw.notification(notifResourcesUpdated, []byte(`{"uri":"file:///secret/k"}`)); ok {
		t.Error("resources/updated of a hidden URI relayed")
	}
	if p, ok := rw.notification(notifResourcesUpdated, []byte(`{"uri":"file:///a/../b"}`)); !ok || string(p) != `{"uri":"fs+file:///b"}` {
		t.Errorf("resources/updated rewritten to %s, %v", p, ok)
	}
	if d, ok := rw.errorData([]byte(`{"uri":"file:///missing"}`)); !ok || string(d) != `{"uri":"fs+file:///missing"}` {
		t.Errorf("error data rewritten to %s, %v", d, ok)
	}
	if _, ok := rw.errorData([]byte(`{"uri":"file:///secret/k"}`)); ok {
		t.Error("error data naming a hidden URI relayed")
	}

	// Without a prefix URIs keep their names but are still normalised and filtered.
	solo := uriRewriter{ns: &namespace{noPrefix: true, only: "fs"}, upstream: "fs", visible: hideSecret}
	got, err := resultFromBytes(solo, MethodResourcesRead, []byte(`{"contents":[{"uri":"file:///x/../a"},{"uri":"file:///secret/k","text":"S"}]}`))
	if err != nil || string(got) != `{"contents":[{"uri":"file:///a"}]}` {
		t.Errorf("no-prefix read: %s, %v", got, err)
	}
}

// TestFinalErrorData: a backend error's data.uri (SEP-2164) is namespaced; one naming a hidden
// resource is the hidden answer for resources/read and loses its data otherwise.
func TestFinalErrorData(t *testing.T) {
	ns := &namespace{sep: "__", known: map[string]bool{"fs": true}}
	for _, tt := range []struct{ method, data, want string }{
		{MethodResourcesRead, `{"uri":"file:///a/../missing"}`,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Resource not found","data":{"uri":"fs+file:///missing"}}}`},
		{MethodResourcesRead, `{"uri":"file:///secret/k"}`,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"` + HiddenResourceMessage + `"}}`},
		{MethodToolsCall, `{"uri":"file:///secret/k"}`,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Resource not found"}}`},
		{MethodToolsCall, `{"detail":"x"}`,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Resource not found","data":{"detail":"x"}}}`},
	} {
		s := &Stream{method: tt.method, id: json.RawMessage("1"), rw: uriRewriter{ns: ns, upstream: "fs", visible: hideSecret}}
		got, err := s.render(&jsonrpc.Message{Error: &jsonrpc.Error{Code: -32602, Message: "Resource not found", Data: json.RawMessage(tt.data)}})
		if err != nil || string(got) != tt.want {
			t.Errorf("%s with data %s:\n got %s, %v\nwant %s", tt.method, tt.data, got, err, tt.want)
		}
	}
}

// FuzzRewriteResult: whatever a backend returns, the relayed result is valid JSON and names no
// hidden resource.
func FuzzRewriteResult(f *testing.F) {
	f.Add(`{"contents":[{"uri":"file:///a","text":"t"},{"uri":"file:///secret/k","text":"S"}]}`)
	f.Add(`{"content":[{"type":"resource","resource":{"uri":"file:///x/../secret/k"}},{"type":"resource_link","uri":"FILE:///a"}]}`)
	f.Add(`{"messages":[{"role":"user","content":[{"type":"resource_link","uri":"file:///secret/k"}]}]}`)
	rw := uriRewriter{ns: &namespace{sep: "__", known: map[string]bool{"fs": true}}, upstream: "fs", visible: hideSecret, embedded: hideSecret}
	f.Fuzz(func(t *testing.T, res string) {
		if len(res) == 0 || res[0] != '{' || jsonrpc.Scan([]byte(res), jsonrpc.Limits{}) != nil {
			return
		}
		for _, m := range []string{MethodResourcesRead, MethodToolsCall, MethodPromptsGet} {
			out, err := resultFromBytes(rw, m, []byte(res))
			if err != nil {
				continue
			}
			if !json.Valid(out) {
				t.Fatalf("%s of %s gave invalid JSON %s", m, res, out)
			}
			if strings.Contains(string(out), "fs+file:///secret/") {
				t.Fatalf("%s of %s names a hidden resource: %s", m, res, out)
			}
		}
	})
}
