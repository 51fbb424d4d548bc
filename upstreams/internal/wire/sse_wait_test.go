package wire

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/bodyread"
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

// countingReader counts the bytes read from r.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// TestSSEReaderChargesLongLinesAsTheyGrow: a line longer than the read buffer is charged to the
// budget while it is put together, so a stream whose line the budget cannot take is refused
// before the reader has read it all, and Release gives the charge back.
func TestSSEReaderChargesLongLinesAsTheyGrow(t *testing.T) {
	const line = 1 << 20
	budget := bodyread.NewBudget(64 << 10)
	src := &countingReader{r: strings.NewReader(": " + strings.Repeat("x", line) + "\ndata: y\n\n")}
	r := NewSSEReaderSize(src, 4<<20, SSEListenBuffer)
	r.Budget = budget
	if _, err := r.Next(); !errors.Is(err, bodyread.ErrBudget) {
		t.Fatalf("a line of %d bytes in a budget of %d: %v, want ErrBudget", line, budget.Max(), err)
	}
	if src.n >= line || budget.InUse() > budget.Max() {
		t.Errorf("read %d bytes of the line, %d charged, before the budget refused it", src.n, budget.InUse())
	}
	r.Release()
	if budget.InUse() != 0 {
		t.Errorf("%d bytes still charged after Release", budget.InUse())
	}
}
