package mcphttp

import (
	"net/http/httptest"
	"strings"
	"testing"
)

// TestLoopbackHostRefusalNamesHost: a loopback listener reached through another Host name (DNS
// rebinding, or a client's own name for 127.0.0.1), or through none (HTTP/1.0), is refused with a
// message about the Host, not about an Origin the request may not carry; a foreign Origin is
// still refused as an origin.
func TestLoopbackHostRefusalNamesHost(t *testing.T) {
	p := newOriginPolicy(Config{}, true)
	for _, host := range []string{"evil.example", "evil.example:8080", "myhost.internal:8080", ""} {
		r := httptest.NewRequest("POST", "/mcp", nil)
		r.Host = host
		err := p.check(r)
		if e, ok := err.(*Error); !ok || e.Status != 403 || !strings.Contains(e.RPC.Message, "Host header") {
			t.Errorf("Host %q: %v", host, err)
		}
	}
	r := httptest.NewRequest("POST", "/mcp", nil)
	r.Host = "127.0.0.1:8080"
	r.Header.Set("Origin", "https://evil.example")
	if err := p.check(r); err != errForbiddenOrigin {
		t.Errorf("a foreign Origin: %v", err)
	}
}
