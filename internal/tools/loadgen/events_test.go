package loadgen

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// TestEvents: the load generator reads event streams by the standard's rules (WHATWG HTML,
// "Parsing an event stream"), whole and a byte a read, so a CR in one read and its LF in the
// next end one line.
func TestEvents(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string // "<nil>" for an event without data
	}{
		{"LF", "data: a\ndata: b\n\n", []string{"a\nb"}},
		{"CRLF", "data: a\r\n\r\ndata: b\r\n\r\n", []string{"a", "b"}},
		{"lone CR", "data: a\rdata: b\r\rdata: c\r\r", []string{"a\nb", "c"}},
		{"mixed", "data: a\r\ndata: b\rdata: c\n\r\n", []string{"a\nb\nc"}},
		{"BOM skipped once", "\uFEFFdata: a\n\n\uFEFFdata: b\n\n", []string{"a"}},
		{"field without colon", "data\ndata\n\n", []string{"\n"}},
		{"lone empty data", "data\n\n", []string{"<nil>"}},
		{"one space stripped", "data:  a\n\n", []string{" a"}},
		{"comments and other fields", ": c\nevent: e\nid: 1\nretry: 5\nDATA: x\ndata: z\n\n", []string{"z"}},
		{"final event without a blank line", "data: x\n\ndata: y\n", []string{"x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, r := range []io.Reader{strings.NewReader(tt.in), iotest.OneByteReader(strings.NewReader(tt.in))} {
				e := newEvents(r, 16)
				var got []string
				for {
					d, err := e.next()
					if err != nil {
						if !errors.Is(err, io.EOF) {
							t.Fatal(err)
						}
						break
					}
					if d == nil {
						got = append(got, "<nil>")
					} else {
						got = append(got, string(d))
					}
				}
				if strings.Join(got, "|") != strings.Join(tt.want, "|") {
					t.Fatalf("got %q, want %q", got, tt.want)
				}
			}
		})
	}
}
