package authz

import "testing"

// TestCanonicalResource: a resource URI as a WHATWG URL parser (new URL(uri).href) spells it:
// scheme and host in lower case, no default or empty port, "/" for an empty path, the rest as it
// is; what is not an absolute URL with a host is left alone.
func TestCanonicalResource(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"https://mcp.example.com/mcp", "https://mcp.example.com/mcp"},
		{"https://MCP.Example.COM/mcp", "https://mcp.example.com/mcp"},
		{"HTTPS://mcp.example.com/mcp", "https://mcp.example.com/mcp"},
		{"https://mcp.example.com:443/mcp", "https://mcp.example.com/mcp"},
		{"http://mcp.example.com:80/mcp", "http://mcp.example.com/mcp"},
		{"https://mcp.example.com:/mcp", "https://mcp.example.com/mcp"},
		{"https://mcp.example.com:80/mcp", "https://mcp.example.com:80/mcp"},
		{"http://mcp.example.com:443/mcp", "http://mcp.example.com:443/mcp"},
		{"https://mcp.example.com:8443/MCP", "https://mcp.example.com:8443/MCP"},
		{"https://mcp.example.com", "https://mcp.example.com/"},
		{"https://[::1]:443/mcp", "https://[::1]/mcp"},
		{"https://[::1]:8443/mcp", "https://[::1]:8443/mcp"},
		{"https://mcp.example.com/a%2Fb?x=1", "https://mcp.example.com/a%2Fb?x=1"},
		{"api://gateway", "api://gateway"},
		{"urn:example:gateway", "urn:example:gateway"},
		{"not a url", "not a url"},
		{"", ""},
	} {
		if got := CanonicalResource(tt.in); got != tt.want {
			t.Errorf("CanonicalResource(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
