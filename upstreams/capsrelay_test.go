package upstreams

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/upstreams/internal/upstreamstest"
)

// capsBackend answers server/discover with the given capabilities object (and every other
// request with an empty tools list), the way a 2026-07-28 backend does on the wire.
func capsBackend(t *testing.T, caps string) string {
	t.Helper()
	url, _ := upstreamstest.Scripted(t, func(_ int64, w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Method") == MethodDiscover {
			upstreamstest.WriteJSON(w, `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","ttlMs":0,`+
				`"supportedVersions":["`+ProtocolVersion+`"],"serverInfo":{"name":"x","version":"1"},"capabilities":`+caps+`}}`)
			return
		}
		upstreamstest.WriteJSON(w, toolsListBody("t", 0, "public"))
	})
	return url
}

// TestCapabilitiesRelayExtensions: the merged server/discover carries the extensions and
// experimental capabilities named in relayCapabilities when the backends that declare them
// agree on the settings, and nothing else: unnamed ones (which may need methods the gateway
// does not route) are dropped, and so are named ones whose backends disagree.
func TestCapabilitiesRelayExtensions(t *testing.T) {
	a := capsBackend(t, `{"tools":{},"extensions":{"com.example/audit":{"level": 2},"com.example/other":{},`+
		`"io.modelcontextprotocol/tasks":{}},"experimental":{"x-trace":{"v":1},"x-split":{"v":1}}}`)
	b := capsBackend(t, `{"tools":{"listChanged":true},"extensions":{"com.example/audit":{"level":2}},`+
		`"experimental":{"x-split":{"v":2}}}`)
	c := capsBackend(t, `{"prompts":{},"extensions":{"com.example/audit":"not an object"}}`)
	relay := RelayCapabilities{Extensions: []string{"com.example/audit"}, Experimental: []string{"x-trace", "x-split"}}
	r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{
		{Name: "a", URL: a, Protocol: ProtocolVersion}, {Name: "b", URL: b, Protocol: ProtocolVersion},
		{Name: "c", URL: c, Protocol: ProtocolVersion},
	}, RelayCapabilities: relay}, Options{})
	d, err := r.Capabilities(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"tools":{"listChanged":true},"prompts":{},"extensions":{"com.example/audit":{"level":2}},"experimental":{"x-trace":{"v":1}}}`
	if string(d.Capabilities) != want {
		t.Fatalf("merged capabilities\n got %s\nwant %s", d.Capabilities, want)
	}
	var v map[string]any
	if err := json.Unmarshal(d.Capabilities, &v); err != nil {
		t.Fatalf("merged capabilities are not JSON: %v", err)
	}

	// Without relayCapabilities (the default) neither member appears.
	r = newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "a", URL: a, Protocol: ProtocolVersion}}}, Options{})
	if d, err = r.Capabilities(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(d.Capabilities), "extensions") || strings.Contains(string(d.Capabilities), "experimental") {
		t.Fatalf("default relays %s", d.Capabilities)
	}
}

func TestRelayCapabilitiesValidated(t *testing.T) {
	for _, c := range []RelayCapabilities{
		{Extensions: []string{tasksExtension}},
		{Extensions: []string{""}},
		{Extensions: []string{"a b"}},
		{Experimental: []string{"x", "x"}},
	} {
		if errs := c.validate(); len(errs) == 0 {
			t.Errorf("accepted %+v", c)
		}
	}
	if errs := (RelayCapabilities{Extensions: []string{"com.example/audit"}, Experimental: []string{"x"}}).validate(); len(errs) != 0 {
		t.Errorf("refused a valid list: %v", errs)
	}
}
