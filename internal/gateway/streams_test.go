package gateway

import (
	"net/http"
	"testing"

	"github.com/mcp-gateway/gateway/internal/mcpheader"
)

// TestIsStream: the requests a component set tracks as GET streams, which every reload judges
// and ends when the new configuration would refuse them, are a pre-2026 client's GET streams
// and nothing else. A browser's GET of the gateway's pages accepts "*/*", which covers an event
// stream: it was tracked, and a reload while it was served (a sign-in's callback, waiting on the
// identity provider's token endpoint) cancelled it.
func TestIsStream(t *testing.T) {
	for _, tc := range []struct {
		name   string
		method string
		h      http.Header
		want   bool
	}{
		{"a pre-2026 client's GET stream", http.MethodGet, http.Header{"Accept": {"text/event-stream"}, mcpheader.SessionID: {"s"}}, true},
		{"a GET stream accepting anything", http.MethodGet, http.Header{"Accept": {"*/*"}, mcpheader.SessionID: {"s"}}, true},
		{"a browser's page", http.MethodGet, http.Header{"Accept": {"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}}, false},
		{"a GET accepting anything", http.MethodGet, http.Header{"Accept": {"*/*"}}, false},
		{"a GET without Accept", http.MethodGet, http.Header{mcpheader.SessionID: {"s"}}, false},
		{"an event stream without a session (405)", http.MethodGet, http.Header{"Accept": {"text/event-stream"}}, false},
		{"a POST", http.MethodPost, http.Header{"Accept": {"application/json, text/event-stream"}, mcpheader.SessionID: {"s"}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := http.NewRequest(tc.method, "http://127.0.0.1/mcp", nil)
			if err != nil {
				t.Fatal(err)
			}
			r.Header = tc.h
			if got := isStream(r); got != tc.want {
				t.Fatalf("isStream = %v, want %v", got, tc.want)
			}
		})
	}
}
