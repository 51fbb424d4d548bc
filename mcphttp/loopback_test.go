package mcphttp

import "testing"

// TestIsLoopbackHost covers the Host forms the DNS-rebinding check sees, with and without a
// port, since only a colon after any closing bracket is handed to net.SplitHostPort.
func TestIsLoopbackHost(t *testing.T) {
	for _, tt := range []struct {
		host string
		want bool
	}{
		{"127.0.0.1", true},
		{"127.0.0.1:8080", true},
		{"localhost", true},
		{"LocalHost:1", true},
		{"[::1]", true},
		{"[::1]:443", true},
		{"127.9.9.9:1", true},
		{"evil.example.com", false},
		{"evil.example.com:80", false},
		{"127.0.0.1.evil.example.com", false},
		{"[::1]x:80", false},
		{"", false},
	} {
		if got := isLoopbackHost(tt.host); got != tt.want {
			t.Errorf("isLoopbackHost(%q) = %v, want %v", tt.host, got, tt.want)
		}
	}
}
