package wire

import (
	"errors"
	"io"
	"math"
	"strings"
	"testing"
)

func TestSSEReader(t *testing.T) {
	tests := []struct {
		name string
		in   string
		max  int
		want []string
		err  error
	}{
		{"basic", "event: message\ndata: {\"a\":1}\n\n", 100, []string{`{"a":1}`}, io.EOF},
		{"comments and CRLF", ": keep-alive\r\n\r\ndata: a\r\ndata:b\r\n\r\nid: 4\nretry: 10\n\n", 100, []string{"a\nb"}, io.EOF},
		{"partial event dropped", "data: x\n\ndata: y", 100, []string{"x"}, io.EOF},
		{"event too large", "data: 0123456789\n\n", 5, nil, ErrEventTooLarge},
		{"too large across lines", "data: 0123\ndata: 4567\n\n", 6, nil, ErrEventTooLarge},
		{"long line beyond buffer", "data: " + strings.Repeat("x", 40000) + "\n\n", 50000, []string{strings.Repeat("x", 40000)}, io.EOF},
		{"long line over max", "data: " + strings.Repeat("x", 40000) + "\n\n", 1000, nil, ErrEventTooLarge},
		// A bound at the top of int (a maxResponseBytes as large as configuration allows) is a
		// bound, not an overflow that refuses every line.
		{"the largest bound", ": hi\ndata: x\n\n", math.MaxInt, []string{"x"}, io.EOF},
		{"next to the largest bound", "data: x\n\n", math.MaxInt - 1, []string{"x"}, io.EOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewSSEReader(strings.NewReader(tt.in), tt.max)
			var got []string
			var err error
			for range 100 {
				var d []byte
				if d, err = r.Next(); err != nil {
					break
				}
				got = append(got, string(d))
			}
			if !errors.Is(err, tt.err) || strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Fatalf("got %q, %v; want %q, %v", got, err, tt.want, tt.err)
			}
		})
	}
}

func FuzzSSEReader(f *testing.F) {
	f.Add([]byte("data: a\n\n: c\ndata: b\r\n\r\n"), 16)
	f.Add([]byte("data"), 1)
	f.Fuzz(func(t *testing.T, in []byte, max int) {
		if max <= 0 || max > 1<<16 {
			return
		}
		r := NewSSEReader(strings.NewReader(string(in)), max)
		for range len(in) + 2 {
			d, err := r.Next()
			if err != nil {
				return
			}
			if len(d) > max {
				t.Fatalf("event of %d bytes exceeds max %d", len(d), max)
			}
		}
		t.Fatal("reader did not end")
	})
}
