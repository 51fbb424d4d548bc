package upstreams

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/upstreams/names"
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

// TestFinalErrorData: a backend error's data.uri (SEP-2164) is namespaced; one naming a hidden
// resource is the hidden answer for resources/read and loses its data otherwise.
func TestFinalErrorData(t *testing.T) {
	ns := names.New("__", false, []string{"fs"})
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
		s := &Stream{method: tt.method, id: json.RawMessage("1"), rw: names.Rewriter{Space: ns, Upstream: "fs", Visible: hideSecret}}
		got, err := s.render(&jsonrpc.Message{Error: &jsonrpc.Error{Code: -32602, Message: "Resource not found", Data: json.RawMessage(tt.data)}})
		if err != nil || string(got) != tt.want {
			t.Errorf("%s with data %s:\n got %s, %v\nwant %s", tt.method, tt.data, got, err, tt.want)
		}
	}
}
