package dpop

import "testing"

// TestNormalizeURL: the RFC 3986 §6.2.2 and §6.2.3 normalisations make equivalent URLs equal and
// leave different ones different; query, fragment, user information and other schemes are refused.
func TestNormalizeURL(t *testing.T) {
	same := []string{
		"https://mcp.example.com/mcp",
		"HTTPS://MCP.Example.COM/mcp",
		"https://mcp.example.com:443/mcp",
		"https://mcp.example.com/%6Dcp",
		"https://mcp.example.com/a/../mcp",
		"https://mcp.example.com/./mcp",
	}
	for _, raw := range same {
		got, err := NormalizeURL(raw)
		if err != nil || got != "https://mcp.example.com/mcp" {
			t.Errorf("%s → %q, %v", raw, got, err)
		}
	}
	for raw, want := range map[string]string{
		"http://h:80":             "http://h/",
		"http://h:8080/x":         "http://h:8080/x",
		"https://[::1]:443/p":     "https://[::1]/p",
		"https://[::1]:8443/p":    "https://[::1]:8443/p",
		"https://h/a%2fb":         "https://h/a%2Fb",
		"https://h/a/b/..":        "https://h/a/",
		"https://h/mcp/":          "https://h/mcp/",
		"https://h/a%20b":         "https://h/a%20b",
		"https://h/caf%C3%A9/mcp": "https://h/caf%C3%A9/mcp",
	} {
		got, err := NormalizeURL(raw)
		if err != nil || got != want {
			t.Errorf("%s → %q, %v; want %q", raw, got, err, want)
		}
	}
	for _, raw := range []string{
		"https://mcp.example.com/mcp?x=1", "https://mcp.example.com/mcp?", "https://mcp.example.com/mcp#f",
		"https://user@mcp.example.com/mcp", "ftp://mcp.example.com/mcp", "/mcp", "mcp.example.com/mcp",
		"https://h/%zz", "https:///mcp", "",
	} {
		if got, err := NormalizeURL(raw); err == nil {
			t.Errorf("%q accepted as %q", raw, got)
		}
	}
}

// FuzzNormalizeURL: never panics, and a normal form normalises to itself.
func FuzzNormalizeURL(f *testing.F) {
	for _, s := range []string{"https://h/mcp", "HTTP://H:80/a/./b/../%7e", "https://[::1]:1/%41"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		n, err := NormalizeURL(raw)
		if err != nil {
			return
		}
		again, err := NormalizeURL(n)
		if err != nil || again != n {
			t.Fatalf("%q → %q → %q, %v", raw, n, again, err)
		}
	})
}
