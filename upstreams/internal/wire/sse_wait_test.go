package wire

import (
	"io"
	"strings"
	"testing"
)

// chunks is a stream that hands out one chunk per Read.
type chunks struct{ parts []string }

func (c *chunks) Read(p []byte) (int, error) {
	if len(c.parts) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.parts[0])
	if c.parts[0] = c.parts[0][n:]; c.parts[0] == "" {
		c.parts = c.parts[1:]
	}
	return n, nil
}

// TestSSEReaderOnWait: OnWait runs before each read from the stream below, and only then: events
// that arrived together are returned without it, and an event whose rest has not arrived waits
// after it.
func TestSSEReaderOnWait(t *testing.T) {
	src := &chunks{parts: []string{
		"data: 1\n\ndata: 2\n\n: ping\n\nevent: message\n",
		"data: 3\n\n",
	}}
	r := NewSSEReader(src, 100)
	defer r.Release()
	var log []string
	r.OnWait = func() { log = append(log, "wait") }
	for {
		d, err := r.Next()
		if err != nil {
			log = append(log, err.Error())
			break
		}
		log = append(log, string(d))
	}
	want := "wait 1 2 wait 3 wait EOF"
	if got := strings.Join(log, " "); got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// TestSSEReaderReleaseReuse: a released reader's buffer serves the next stream, which reads
// only its own bytes.
func TestSSEReaderReleaseReuse(t *testing.T) {
	for i, in := range []string{"data: first stream, longer than the next\n\ndata: x", "data: second\n\n"} {
		r := NewSSEReader(strings.NewReader(in), 100)
		d, err := r.Next()
		if err != nil {
			t.Fatalf("stream %d: %v", i, err)
		}
		want := strings.TrimSuffix(strings.TrimPrefix(strings.SplitN(in, "\n\n", 2)[0], "data: "), "\n")
		if string(d) != want {
			t.Fatalf("stream %d: got %q, want %q", i, d, want)
		}
		r.Release()
	}
}
