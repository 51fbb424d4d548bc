package mcphttp

import "testing"

func TestAcceptsJSONAndSSE(t *testing.T) {
	tests := []struct {
		accept []string
		want   bool
	}{
		{[]string{"application/json, text/event-stream"}, true},
		{[]string{"text/event-stream, application/json"}, true},
		{[]string{"application/json", "text/event-stream"}, true},
		{[]string{"*/*"}, true},
		{[]string{"application/*, text/*"}, true},
		{[]string{"Application/JSON;charset=utf-8 , text/event-stream;q=0.5"}, true},
		{[]string{"application/json"}, false},
		{[]string{"text/event-stream"}, false},
		{[]string{"application/json, text/event-stream;q=0"}, false},
		{[]string{"application/json;q=0.0, text/event-stream"}, false},
		{[]string{"application/json;q=0.01, text/event-stream"}, true},
		{[]string{""}, false},
		{nil, false},
		{[]string{"application/jsonx, text/event-streamy"}, false},
	}
	for _, tt := range tests {
		if got := acceptsJSONAndSSE(tt.accept); got != tt.want {
			t.Errorf("acceptsJSONAndSSE(%q) = %v, want %v", tt.accept, got, tt.want)
		}
	}
	for ct, want := range map[string]bool{
		"application/json": true, "application/json; charset=utf-8": true, "APPLICATION/JSON": true,
		"application/json-seq": false, "text/plain": false, "": false,
	} {
		if got := isJSONContentType(ct); got != want {
			t.Errorf("isJSONContentType(%q) = %v, want %v", ct, got, want)
		}
	}
}
