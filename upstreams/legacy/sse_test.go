package legacy

import (
	"io"
	"strings"
	"testing"
	"time"
)

// TestSSEStreamFields checks the id and retry fields a legacy stream resumes by, as the event
// stream standard reads them: an id with a NUL and a retry that is not all ASCII digits are
// ignored, an id on an event without data still counts, and the lines may end in CR, LF or
// CRLF after a byte-order mark.
func TestSSEStreamFields(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		wantID string
		retry  time.Duration
	}{
		{"plain", "id: 7\nretry: 1500\ndata: x\n\n", "7", 1500 * time.Millisecond},
		{"CR line ends and a BOM", "\uFEFFid: 7\rretry: 1500\rdata: x\r\r", "7", 1500 * time.Millisecond},
		{"id with NUL ignored", "id: 7\n\nid: 8\x009\ndata: x\n\n", "7", 0},
		{"empty id resets", "id: 7\n\nid\ndata: x\n\n", "", 0},
		{"retry not digits ignored", "retry: 100\n\nretry: 1e3\nretry: -5\nretry:  200\nretry: 3s\ndata: x\n\n", "", 100 * time.Millisecond},
		{"id on an event without data", "data: x\n\nid: 9\n\n", "9", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSSEStream(strings.NewReader(tt.in), 1000)
			defer s.Release()
			for {
				if _, err := s.Next(); err != nil {
					if err != io.EOF {
						t.Fatal(err)
					}
					break
				}
			}
			if s.lastID != tt.wantID || s.retry != tt.retry {
				t.Fatalf("lastID %q, retry %v; want %q, %v", s.lastID, s.retry, tt.wantID, tt.retry)
			}
		})
	}
}
