package names

import (
	"bytes"
	"errors"
	"testing"

	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
)

// A UI resource (MCP Apps, SEP-1865) keeps its ui:// scheme through namespacing: hosts render
// only resources whose URI starts with ui://.
func TestUIResourceNames(t *testing.T) {
	ns := New("__", false, []string{"weather", "fs"})
	for _, tt := range []struct{ backend, client string }{
		{"ui://weather-server/dashboard-template", "ui://weather/weather-server/dashboard-template"},
		{"ui://dashboard", "ui://weather/dashboard"},
		{"ui:///x", "ui://weather//x"},
		{"ui://", "ui://weather/"},
		{"ui://u@h:1/p?q#f", "ui://weather/u@h:1/p?q#f"},
		{"ui://items/{id}", "ui://weather/items/{id}"},
		{"ui:opaque", "weather+ui:opaque"}, // not ui://: a plain resource
	} {
		target := Target{Upstream: "weather", Name: tt.backend}
		if got := ns.Name(KindResource, target); string(got) != tt.client {
			t.Errorf("Name(%q) = %q, want %q", tt.backend, got, tt.client)
		}
		got, err := ns.Resolve(KindResource, Namespaced(tt.client))
		if err != nil || got != target {
			t.Errorf("Resolve(%q) = %+v, %v; want %+v", tt.client, got, err, target)
		}
	}
	for _, client := range []string{
		"weather+ui://dashboard",  // a UI resource has one client name
		"weather+UI://dashboard",  // in any spelling of the scheme
		"ui://weather",            // no backend URI
		"ui://gitlab/dashboard",   // no such backend
		"ui://WEATHER/dashboard",  // backend names are lower-case
		"UI://weather/dashboard",  // the namespaced form is exact
		"ui://weather+dashboard/", // not the gateway's form
	} {
		if got, err := ns.Resolve(KindResource, Namespaced(client)); !errors.Is(err, ErrUnknownName) {
			t.Errorf("Resolve(%q) = %+v, %v; want ErrUnknownName", client, got, err)
		}
	}
	// Normalised on the backend side, as every resource URI.
	if got, err := ns.Resolve(KindResource, "ui://weather/Server/a/../b"); err != nil || got.Name != "ui://server/b" {
		t.Errorf("Resolve normalises to %+v, %v", got, err)
	}
	// Without prefixes the URI passes through.
	solo := New("__", true, []string{"weather"})
	if got, err := solo.Resolve(KindResource, "ui://dashboard"); err != nil || got.Name != "ui://dashboard" {
		t.Errorf("no prefix: %+v, %v", got, err)
	}
	if got := solo.Name(KindResource, Target{Upstream: "weather", Name: "ui://dashboard"}); got != "ui://dashboard" {
		t.Errorf("no prefix: Name = %q", got)
	}
}

// A read of a UI resource comes back with its contents' URI in the client's form, its mimeType
// and _meta (CSP domains) untouched.
func TestUIResourceReadRewrite(t *testing.T) {
	ns := New("__", false, []string{"weather"})
	rw := Rewriter{Space: ns, Upstream: "weather"}
	in := `{"contents":[{"uri":"ui://dashboard","mimeType":"text/html;profile=mcp-app","text":"<!DOCTYPE html>",` +
		`"_meta":{"ui":{"csp":{"connectDomains":["https://api.weather.example"]},"domain":"a9.example.com"}}}]}`
	want := `{"contents":[{"uri":"ui://weather/dashboard","mimeType":"text/html;profile=mcp-app","text":"<!DOCTYPE html>",` +
		`"_meta":{"ui":{"csp":{"connectDomains":["https://api.weather.example"]},"domain":"a9.example.com"}}}]}`
	got, err := resultFromBytes(rw, wire.MethodResourcesRead, []byte(in))
	if err != nil || string(got) != want {
		t.Fatalf("got %s, %v\nwant %s", got, err, want)
	}
}

// A tool definition's link to its UI resource, and the deprecated flat form the official server
// helpers still write next to it, are namespaced like the resource itself; the rest of _meta.ui
// (visibility) and everything else pass byte for byte.
func TestRewriteUIMeta(t *testing.T) {
	ns := New("__", false, []string{"weather"})
	for _, tt := range []struct{ name, in, want string }{
		{"both forms",
			`{"name":"get","_meta":{"ui":{"resourceUri":"ui://dash/view","visibility":["app"]},"ui/resourceUri":"ui://dash/view","x":1}}`,
			`{"name":"get","_meta":{"ui":{"resourceUri":"ui://weather/dash/view","visibility":["app"]},"ui/resourceUri":"ui://weather/dash/view","x":1}}`},
		{"escaped member names",
			`{"_meta":{"\u0075i":{"resourceUr\u0069":"ui://dash"}}}`,
			`{"_meta":{"\u0075i":{"resourceUr\u0069":"ui://weather/dash"}}}`},
		{"normalised", `{"_meta":{"ui":{"resourceUri":"UI://Dash/a/../b"}}}`, `{"_meta":{"ui":{"resourceUri":"ui://weather/dash/b"}}}`},
		{"not a UI URI", `{"_meta":{"ui":{"resourceUri":"https://x.example/a"}}}`, `{"_meta":{"ui":{"resourceUri":"weather+https://x.example/a"}}}`},
		{"unroutable URI", `{"_meta":{"ui":{"resourceUri":"ui://a/%2e%2e%2fx"}}}`, `{"_meta":{"ui":{"resourceUri":null}}}`},
		{"not a string", `{"_meta":{"ui":{"resourceUri":7}}}`, `{"_meta":{"ui":{"resourceUri":7}}}`},
		{"outside _meta", `{"inputSchema":{"resourceUri":"ui://a"}}`, `{"inputSchema":{"resourceUri":"ui://a"}}`},
		{"no ui", `{"name":"plain","_meta":{"k":"v"}}`, `{"name":"plain","_meta":{"k":"v"}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ns.RewriteUIMeta(nil, []byte(tt.in), "weather")
			if err != nil || string(got) != tt.want {
				t.Fatalf("got %s, %v\nwant %s", got, err, tt.want)
			}
		})
	}
	// A tools/call result naming its UI resource comes back rewritten, its content as before.
	rw := Rewriter{Space: ns, Upstream: "weather"}
	got, err := resultFromBytes(rw, wire.MethodToolsCall,
		[]byte(`{"content":[{"type":"text","text":"sunny"}],"_meta":{"ui":{"resourceUri":"ui://dash"}}}`))
	if want := `{"content":[{"type":"text","text":"sunny"}],"_meta":{"ui":{"resourceUri":"ui://weather/dash"}}}`; err != nil || string(got) != want {
		t.Fatalf("tools/call result: got %s, %v\nwant %s", got, err, want)
	}
}

// TestRewriteUIMetaSpellings: every spelling of the link's member names that a host decoding
// names case-insensitively reads as _meta, ui, resourceUri or ui/resourceUri (Go's
// encoding/json: any case, the long s and the Kelvin sign; jsonrpc.FoldEqual, wider, also '_'
// and '-') is namespaced under the tool's own backend, as the exact spelling is: a backend
// cannot link its tool to another backend's UI resource for such hosts.
func TestRewriteUIMetaSpellings(t *testing.T) {
	ns := New("__", false, []string{"weather", "maps"})
	other := `"ui://maps/view"` // the client URI of maps's UI resource, written by weather's backend
	for _, in := range []string{
		`{"_META":{"ui":{"resourceUri":` + other + `}}}`,
		`{"_Meta":{"UI":{"RESOURCEURI":` + other + `}}}`,
		`{"_meta":{"Ui":{"resource_uri":` + other + `}}}`,
		`{"_meta":{"ui":{"reſourceUri":` + other + `}}}`,
		`{"meta":{"ui":{"resourceUri":` + other + `}}}`,
		`{"_meta":{"UI/ResourceURI":` + other + `}}`,
		`{"_m\u0045ta":{"ui":{"resourceUri":` + other + `}}}`,
		`{"name":"x","_meta":{"ui":{"resourceUri":"ui://v"}},"_META":{"ui":{"resourceUri":` + other + `}}}`,
	} {
		got, err := ns.RewriteUIMeta(nil, []byte(in), "weather")
		if err != nil || bytes.Contains(got, []byte(other)) || !bytes.Contains(got, []byte(`"ui://weather/maps/view"`)) {
			t.Errorf("%s: got %s, %v; want the link under ui://weather/", in, got, err)
		}
	}
	// What no decoder reads as the link stays as it was.
	for _, in := range []string{`{"_meta":{"ui":{"resourceUriX":` + other + `}}}`, `{"_metadata":{"ui":{"resourceUri":` + other + `}}}`} {
		if got, err := ns.RewriteUIMeta(nil, []byte(in), "weather"); err != nil || string(got) != in {
			t.Errorf("%s: got %s, %v; want it as it was", in, got, err)
		}
	}
	for in, want := range map[string]bool{`{"a":"RESOURCE-URI"}`: true, `{"a":"r_e_s_o_u_r_c_e_u_r_i"}`: true,
		`{"a":"é"}`: true, `{"a":"resource uri"}`: false, `{"a":"resourceur"}`: false, `{"a":"rresourceuri"}`: true} {
		if got := MayHaveUIMeta([]byte(in)); got != want {
			t.Errorf("MayHaveUIMeta(%s) = %v, want %v", in, got, want)
		}
	}
}

// TestUIResultLinkSpellings: a tools/call result whose only link to a UI resource is spelled as
// a case-insensitive host reads it ("_META", "resourceURI", with no member named "uri" anywhere)
// is not passed over by the decoder's quick answer (jsonrpc.Message.MayHaveURIKey): its link is
// namespaced under the tool's own backend, as the exact spelling's is.
func TestUIResultLinkSpellings(t *testing.T) {
	ns := New("__", false, []string{"weather", "maps"})
	rw := Rewriter{Space: ns, Upstream: "weather"}
	for _, in := range []string{
		`{"content":[],"_META":{"ui":{"resourceUri":"ui://maps/view"}}}`,
		`{"content":[],"_meta":{"ui":{"resourceURI":"ui://maps/view"}}}`,
		`{"content":[],"_meta":{"UI/RESOURCE_URI":"ui://maps/view"}}`,
		`{"content":[],"_meta":{"ui":{"reſourceUri":"ui://maps/view"}}}`,
	} {
		got, err := resultFromBytes(rw, wire.MethodToolsCall, []byte(in))
		if err != nil || !bytes.Contains(got, []byte(`"ui://weather/maps/view"`)) {
			t.Errorf("%s: got %s, %v; want the link under ui://weather/", in, got, err)
		}
	}
}
