package names

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
)

// hideSecret is a caller's policy: everything under file:///secret/ is hidden, and a deny rule
// covers it (embedded resources are dropped too).
func hideSecret(_ Kind, t Target) bool { return !strings.HasPrefix(t.Name, "file:///secret/") }

func TestRewriteHidesResources(t *testing.T) {
	ns := New("__", false, []string{"fs"})
	rw := Rewriter{Space: ns, Upstream: "fs", Visible: hideSecret, Embedded: hideSecret}
	for _, tt := range []struct {
		name, method, in, want string
		err                    error
	}{
		{"read drops hidden contents", wire.MethodResourcesRead,
			`{"contents":[{"uri":"file:///a","text":"t"},{"uri":"file:///secret/k","text":"S"},{"uri":"file:///x/../secret/k","text":"S"},{"uri":"file:///a%2Fb","text":"S"}]}`,
			`{"contents":[{"uri":"fs+file:///a","text":"t"}]}`, nil},
		{"read of only hidden contents", wire.MethodResourcesRead,
			`{"contents":[{"uri":"file:///secret/k","text":"S"}]}`, "", ErrHiddenResource},
		{"read item without uri dropped", wire.MethodResourcesRead,
			`{"contents":[{"text":"S"},{"uri":"file:///a","text":"t"}]}`, `{"contents":[{"uri":"fs+file:///a","text":"t"}]}`, nil},
		{"read item with an escaped uri key", wire.MethodResourcesRead,
			`{"contents":[{"\u0075ri":"file:///secret/k","text":"S"}]}`, "", ErrHiddenResource},
		{"read normalises", wire.MethodResourcesRead,
			`{"contents":[{"uri":"FILE:///a/./b","text":"t"}]}`, `{"contents":[{"uri":"fs+file:///a/b","text":"t"}]}`, nil},
		{"tool drops hidden embedded resource and link", wire.MethodToolsCall,
			`{"content":[{"type":"text","text":"ok"},{"type":"resource","resource":{"uri":"file:///secret/k","text":"S"}},{"type":"resource_link","uri":"file:///secret/k"},{"type":"resource_link","uri":"file:///a"}]}`,
			`{"content":[{"type":"text","text":"ok"},{"type":"resource_link","uri":"fs+file:///a"}]}`, nil},
		{"prompt drops a message whose resource is hidden", wire.MethodPromptsGet,
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
	if d, ok := rw.ErrorData([]byte(`{"uri":"file:///missing"}`)); !ok || string(d) != `{"uri":"fs+file:///missing"}` {
		t.Errorf("error data rewritten to %s, %v", d, ok)
	}
	if _, ok := rw.ErrorData([]byte(`{"uri":"file:///secret/k"}`)); ok {
		t.Error("error data naming a hidden URI relayed")
	}

	// Without a prefix URIs keep their names but are still normalised and filtered.
	solo := Rewriter{Space: New("", true, []string{"fs"}), Upstream: "fs", Visible: hideSecret}
	got, err := resultFromBytes(solo, wire.MethodResourcesRead, []byte(`{"contents":[{"uri":"file:///x/../a"},{"uri":"file:///secret/k","text":"S"}]}`))
	if err != nil || string(got) != `{"contents":[{"uri":"file:///a"}]}` {
		t.Errorf("no-prefix read: %s, %v", got, err)
	}
}

// FuzzRewriteResult: whatever a backend returns, the relayed result is valid JSON and names no
// hidden resource.
func FuzzRewriteResult(f *testing.F) {
	f.Add(`{"contents":[{"uri":"file:///a","text":"t"},{"uri":"file:///secret/k","text":"S"}]}`)
	f.Add(`{"content":[{"type":"resource","resource":{"uri":"file:///x/../secret/k"}},{"type":"resource_link","uri":"FILE:///a"}]}`)
	f.Add(`{"messages":[{"role":"user","content":[{"type":"resource_link","uri":"file:///secret/k"}]}]}`)
	rw := Rewriter{Space: New("__", false, []string{"fs"}), Upstream: "fs", Visible: hideSecret, Embedded: hideSecret}
	f.Fuzz(func(t *testing.T, res string) {
		if len(res) == 0 || res[0] != '{' || jsonrpc.Scan([]byte(res), jsonrpc.Limits{}) != nil {
			return
		}
		for _, m := range []string{wire.MethodResourcesRead, wire.MethodToolsCall, wire.MethodPromptsGet} {
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
