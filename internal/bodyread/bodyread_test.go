package bodyread

import (
	"bytes"
	"errors"
	"io"
	"math"
	"strings"
	"testing"
	"testing/iotest"
)

func TestAppend(t *testing.T) {
	const limit = 3000 // several growth steps from a small buffer
	boom := errors.New("reset")
	body := func(n int) string { return strings.Repeat("x", n) }
	tests := []struct {
		name string
		r    io.Reader
		dst  []byte
		want error
		size int
	}{
		{"empty", strings.NewReader(""), nil, nil, 0},
		{"at the limit, no buffer", strings.NewReader(body(limit)), nil, nil, limit},
		{"at the limit, exact buffer", strings.NewReader(body(limit)), make([]byte, 0, limit+1), nil, limit},
		{"at the limit, a byte at a time", iotest.OneByteReader(strings.NewReader(body(limit))), nil, nil, limit},
		{"after a prefix", strings.NewReader(body(limit)), []byte("prefix"), nil, limit},
		{"one over", strings.NewReader(body(limit + 1)), nil, ErrTooLarge, 0},
		{"far over into a huge buffer", strings.NewReader(body(10 * limit)), make([]byte, 0, 20*limit), ErrTooLarge, 0},
		{"far over, a byte at a time", iotest.OneByteReader(strings.NewReader(body(3 * limit))), nil, ErrTooLarge, 0},
		{"error mid-way", io.MultiReader(strings.NewReader("abc"), iotest.ErrReader(boom)), nil, boom, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prefix := string(tt.dst)
			got, err := Append(tt.dst, tt.r, limit)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Append = %v, want %v", err, tt.want)
			}
			if !bytes.HasPrefix(got, []byte(prefix)) {
				t.Fatalf("the bytes already in dst were not kept")
			}
			read := len(got) - len(prefix)
			if read > limit+1 {
				t.Fatalf("read %d bytes with a limit of %d", read, limit)
			}
			if tt.want == nil && read != tt.size {
				t.Fatalf("read %d bytes, want %d", read, tt.size)
			}
		})
	}
}

// An exact buffer is enough: the body and the read that finds its end need no allocation.
func TestAppendExactBufferAllocatesNothing(t *testing.T) {
	body := strings.Repeat("x", 500)
	dst := make([]byte, 0, len(body)+1)
	r := strings.NewReader(body)
	allocs := testing.AllocsPerRun(100, func() {
		r.Reset(body)
		if _, err := Append(dst[:0], r, 1000); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per read, want 0", allocs)
	}
}

// TestLargestLimits: a limit at the top of int64 (a maxResponseBytes as large as configuration
// allows) bounds nothing more, and reads the body, rather than overflowing the arithmetic of
// limit+1 into a negative bound (a panic, or every body refused).
func TestLargestLimits(t *testing.T) {
	for _, limit := range []int64{math.MaxInt64, math.MaxInt64 - 1} {
		got, err := Append(nil, strings.NewReader("abc"), limit)
		if err != nil || string(got) != "abc" {
			t.Errorf("Append with limit %d = %q, %v", limit, got, err)
		}
		got, err = Append(make([]byte, 0, 2), iotest.OneByteReader(strings.NewReader("abcdef")), limit)
		if err != nil || string(got) != "abcdef" {
			t.Errorf("Append a byte at a time with limit %d = %q, %v", limit, got, err)
		}
		buf, err := Read(strings.NewReader("abc"), limit, nil)
		if err != nil || string(buf.B) != "abc" {
			t.Errorf("Read with limit %d: %v", limit, err)
		}
		buf.Release()
	}
}
