package wire

import (
	"bufio"
	"errors"
	"io"
	"sync"

	"github.com/mcp-gateway/gateway/internal/bodyread"
	"github.com/mcp-gateway/gateway/internal/eventstream"
)

// ErrEventTooLarge is returned by SSEReader for an event whose data exceeds the bound.
var ErrEventTooLarge = errors.New("SSE event too large")

// sseReadBuffer is the bufio size for SSE streams: most MCP events fit in one buffer.
const sseReadBuffer = 16 << 10

// readers holds the bufio readers of released streams of sseReadBuffer bytes: a new buffer for
// every streamed call was most of what the call allocated.
var readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, sseReadBuffer) }}

// SSEListenBuffer is the bufio size for listen streams, which are long-lived and mostly idle
// and carry small notifications: the buffer is held for the stream's whole life, and a larger
// event is still read, just in several steps. The transport buffers the connection below.
const SSEListenBuffer = 1 << 10

// SSEReader parses a text/event-stream (WHATWG HTML §9.2.6) far enough for MCP: lines end at
// CRLF, LF or a lone CR, a leading byte-order mark is skipped, data lines are joined with
// "\n", comments (keep-alives) and the id and retry fields are ignored
// (2026-07-28 streams are not resumable,
// https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http), and
// an event is dispatched at a blank line. A partial event
// at the end of the stream is discarded, as the standard says. Only a message event is
// dispatched: one whose last event field is empty or exactly "message", or that has none (the
// standard gives such an event the type message). Both official SDKs' clients read a backend's
// messages only from those and pass over every other type, so an event of another type
// (a backend's own keep-alive, say) is passed over here too: the gateway relays the messages
// a client talking to the backend itself would read, not another answer.
//
// Its lines and fields are those of eventstream.Lines and eventstream.Field, which the gateway's
// clients' reader (eventstream.Reader) reads with too. It does not use that reader for its events: Next must
// not allocate per event (it reuses one data buffer, which eventstream.Reader's callers keep),
// passes over events with empty data (eventstream.Reader returns them), charges its buffers
// to Budget as they grow, takes its read buffer from a pool, and calls OnWait before a read
// that may wait; none of which the clients' reader needs.
type SSEReader struct {
	r     *bufio.Reader
	lines eventstream.Lines
	src   waitReader
	max   int
	data  []byte
	// Budget, when set, is charged for the capacity of data and of the lines' buffer as they
	// grow, until release.
	Budget  *bodyread.Budget
	charged int64
	pooled  bool // r came from readers
	// OnField, when set, hears every field other than data (id, retry, event); the legacy
	// reader uses it to keep what resuming needs.
	OnField func(name, value []byte)
	// OnWait, when set, runs before each read from the stream below, which may wait for the
	// sender: whatever the caller holds back from what it has read so far is due now. Events
	// already buffered are returned without it.
	OnWait func()
}

// waitReader is the stream below an SSEReader, calling its OnWait before each read.
type waitReader struct {
	r io.Reader
	s *SSEReader
}

func (w *waitReader) Read(p []byte) (int, error) {
	if w.s.OnWait != nil {
		w.s.OnWait()
	}
	return w.r.Read(p)
}

// NewSSEReader returns a reader of the event stream r whose events' data are at most max bytes.
func NewSSEReader(r io.Reader, max int) *SSEReader {
	return NewSSEReaderSize(r, max, sseReadBuffer)
}

// NewSSEReaderSize is NewSSEReader with a bufio buffer of size bytes.
func NewSSEReaderSize(r io.Reader, max, size int) *SSEReader {
	s := &SSEReader{max: max}
	s.src = waitReader{r: r, s: s}
	if size == sseReadBuffer {
		s.r, s.pooled = readers.Get().(*bufio.Reader), true
		s.r.Reset(&s.src)
	} else {
		s.r = bufio.NewReaderSize(&s.src, size)
	}
	s.lines = eventstream.NewLines(s.r, eventstream.LineBound(max))
	return s
}

// Next returns the data of the next event that has any. The slice is valid until the next call.
// At the end of the stream it returns io.EOF; a broken stream returns the read error.
func (s *SSEReader) Next() ([]byte, error) {
	s.data = s.data[:0]
	hasData, other := false, false
	for {
		line, err := s.readLine()
		if err != nil {
			return nil, err
		}
		if len(line) == 0 {
			if hasData && len(s.data) > 0 && !other {
				return s.data, nil
			}
			// An event with empty data, such as a SEP-1699 priming event, carries nothing;
			// one of another type than message is no message (see SSEReader).
			s.data, hasData, other = s.data[:0], false, false
			continue
		}
		field, value := eventstream.Field(line)
		if len(field) == 0 || string(field) != "data" {
			// A comment (empty field name), the event's type, or a field the modern protocol
			// does not use.
			if string(field) == "event" {
				other = len(value) > 0 && string(value) != "message" // "" is a message too
			}
			if s.OnField != nil && len(field) > 0 {
				s.OnField(field, value)
			}
			continue
		}
		if hasData {
			s.data = append(s.data, '\n')
		}
		if len(s.data)+len(value) > s.max {
			return nil, ErrEventTooLarge
		}
		s.data = append(s.data, value...)
		if err := s.charge(); err != nil {
			return nil, err
		}
		hasData = true
	}
}

// readLine returns one line without its terminator, bounded by eventstream.LineBound(max), its
// buffer charged as it grows.
func (s *SSEReader) readLine() ([]byte, error) {
	line, err := s.lines.Next(s.charge)
	if err != nil && errors.Is(err, eventstream.ErrTooLarge) {
		return nil, ErrEventTooLarge
	}
	return line, err
}

// charge brings the budget's charge up to the capacity the reader's buffers have grown to.
func (s *SSEReader) charge() error {
	if s.Budget == nil {
		return nil
	}
	grown := int64(cap(s.data)+s.lines.Cap()) - s.charged
	if grown <= 0 {
		return nil
	}
	if err := s.Budget.Charge(grown); err != nil {
		return err // ErrShare or ErrBudget: whose bound it was
	}
	s.charged += grown
	return nil
}

// Reset continues on another stream (a resumed one), keeping the reader's bounds and hooks.
func (s *SSEReader) Reset(r io.Reader) {
	s.src.r = r
	s.r.Reset(&s.src)
	s.lines.Restart()
}

// Release returns the reader's charge and its buffer; the reader must not be used afterwards.
func (s *SSEReader) Release() {
	s.Budget.Return(s.charged)
	s.charged = 0
	s.Budget = nil
	if s.pooled {
		s.r.Reset(nil)
		readers.Put(s.r)
		s.r, s.lines, s.pooled = nil, eventstream.Lines{}, false
	}
}
