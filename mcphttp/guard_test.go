package mcphttp

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/iotest"
)

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
		// The most specific range decides (RFC 9110 §12.5.1), in any order and header line.
		{[]string{"application/json;q=0, */*"}, false},
		{[]string{"*/*, text/event-stream;q=0"}, false},
		{[]string{"*/*", "application/json; q=0"}, false},
		{[]string{"application/*;q=0, text/*"}, false},
		{[]string{"text/*;q=0, text/event-stream, application/json"}, true},
		{[]string{"*/*;q=0, application/json, text/event-stream"}, true},
		{[]string{"application/*;q=0, application/json;q=0.5, text/*"}, true},
		{[]string{"application/json, application/json;q=0, text/event-stream"}, false},
	}
	for _, tt := range tests {
		if got := acceptsJSONAndSSE(tt.accept); got != tt.want {
			t.Errorf("acceptsJSONAndSSE(%q) = %v, want %v", tt.accept, got, tt.want)
		}
	}
	// A GET stream needs only text/event-stream, by the same precedence.
	for accept, want := range map[string]bool{
		"text/event-stream": true, "*/*": true, "application/json;q=0, text/event-stream": true,
		"text/event-stream;q=0, */*": false, "text/*;q=0, text/event-stream": true, "application/json": false,
	} {
		if got := AcceptsEventStream([]string{accept}); got != want {
			t.Errorf("AcceptsEventStream(%q) = %v, want %v", accept, got, want)
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

// TestReadBody covers both ways a body arrives: with a Content-Length (one exact buffer) and
// without one (chunked: the buffer grows), at, just over and far over the limit, and a body that
// fails mid-way.
func TestReadBody(t *testing.T) {
	const limit = 100 << 10 // above the 64 KiB first buffer, so the unknown-length case grows
	tests := []struct {
		name   string
		size   int
		length bool // send a Content-Length
		fail   bool // the body errors after its bytes
		want   error
	}{
		{"empty", 0, true, false, nil},
		{"small with length", 300, true, false, nil},
		{"small chunked", 300, false, false, nil},
		{"at the limit with length", limit, true, false, nil},
		{"at the limit chunked", limit, false, false, nil},
		{"one over with length", limit + 1, true, false, errBodyTooLarge},
		{"one over chunked", limit + 1, false, false, errBodyTooLarge},
		{"far over chunked", 10 * limit, false, false, errBodyTooLarge},
		{"read error", 300, false, true, errReadFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			payload := bytes.Repeat([]byte("x"), tt.size)
			var body io.Reader = bytes.NewReader(payload)
			if tt.fail {
				body = io.MultiReader(body, iotest.ErrReader(errors.New("connection reset")))
			}
			r := httptest.NewRequest(http.MethodPost, "/mcp", io.NopCloser(body))
			r.ContentLength = -1
			if tt.length {
				r.ContentLength = int64(tt.size)
			}
			s := &Server{cfg: Config{MaxBodyBytes: limit}, log: slog.New(slog.DiscardHandler)}
			x := &request{shared: shared{s: s, r: r, ctx: context.Background()}, client: &ClientSink{w: httptest.NewRecorder(), srv: s}}
			err := s.readBody(x)
			got := x.in.body
			switch {
			case tt.want == errReadFailed:
				var e *Error
				if !errors.As(err, &e) || e.Status != http.StatusBadRequest {
					t.Fatalf("readBody error = %v, want a 400 parse error", err)
				}
			case tt.want != nil:
				if !errors.Is(err, tt.want) {
					t.Fatalf("readBody error = %v, want %v", err, tt.want)
				}
			case err != nil:
				t.Fatalf("readBody: %v", err)
			case !bytes.Equal(got, payload):
				t.Fatalf("readBody returned %d bytes, want the %d sent", len(got), len(payload))
			}
		})
	}
}

// errReadFailed marks a TestReadBody row whose body fails to read.
var errReadFailed = errors.New("read failed")
