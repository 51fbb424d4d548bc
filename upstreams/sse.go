package upstreams

import (
	"bufio"
	"bytes"
	"errors"
	"io"

	"github.com/mcp-gateway/gateway/internal/bodyread"
)

// errEventTooLarge is returned by sseReader for an event whose data exceeds the bound.
var errEventTooLarge = errors.New("SSE event too large")

// sseReadBuffer is the bufio size for SSE streams: most MCP events fit in one buffer.
const sseReadBuffer = 16 << 10

// sseListenBuffer is the bufio size for listen streams, which are long-lived and mostly idle
// and carry small notifications: the buffer is held for the stream's whole life, and a larger
// event is still read, just in several steps. The transport buffers the connection below.
const sseListenBuffer = 1 << 10

// sseReader parses a text/event-stream (WHATWG HTML §9.2.6) far enough for MCP: data lines are
// joined with "\n", comments (keep-alives) and the event, id and retry fields are ignored (2026
// has no resumability, digest §2.1), and an event is dispatched at a blank line. A partial event
// at the end of the stream is discarded, as the standard says.
type sseReader struct {
	r    *bufio.Reader
	max  int
	data []byte
	line []byte
	// budget, when set, is charged for the capacity of data and line as they grow, until
	// release.
	budget  *bodyread.Budget
	charged int64
	// onField, when set, hears every field other than data (id, retry, event); the legacy
	// reader uses it to keep what resuming needs.
	onField func(name, value []byte)
}

func newSSEReader(r io.Reader, max int) *sseReader {
	return newSSEReaderSize(r, max, sseReadBuffer)
}

// newSSEReaderSize is newSSEReader with a bufio buffer of size bytes.
func newSSEReaderSize(r io.Reader, max, size int) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(r, size), max: max}
}

// next returns the data of the next event that has any. The slice is valid until the next call.
// At the end of the stream it returns io.EOF; a broken stream returns the read error.
func (s *sseReader) next() ([]byte, error) {
	s.data = s.data[:0]
	hasData := false
	for {
		line, err := s.readLine()
		if err != nil {
			return nil, err
		}
		if len(line) == 0 {
			if hasData && len(s.data) > 0 {
				return s.data, nil
			}
			// An event with empty data, such as a SEP-1699 priming event, carries nothing.
			hasData = false
			continue
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		if len(field) == 0 || string(field) != "data" {
			// A comment (empty field name) or a field the modern protocol does not use.
			if s.onField != nil && len(field) > 0 {
				s.onField(field, value)
			}
			continue
		}
		if hasData {
			s.data = append(s.data, '\n')
		}
		if len(s.data)+len(value) > s.max {
			return nil, errEventTooLarge
		}
		s.data = append(s.data, value...)
		if err := s.charge(); err != nil {
			return nil, err
		}
		hasData = true
	}
}

// readLine returns one line without its terminator (LF or CRLF), bounded by max.
func (s *sseReader) readLine() ([]byte, error) {
	s.line = s.line[:0]
	for {
		chunk, err := s.r.ReadSlice('\n')
		if len(s.line)+len(chunk) > s.max+2 {
			return nil, errEventTooLarge
		}
		switch {
		case err == nil:
			line := chunk
			if len(s.line) > 0 {
				s.line = append(s.line, chunk...)
				if err := s.charge(); err != nil {
					return nil, err
				}
				line = s.line
			}
			line = line[:len(line)-1]
			if n := len(line); n > 0 && line[n-1] == '\r' {
				line = line[:n-1]
			}
			return line, nil
		case errors.Is(err, bufio.ErrBufferFull):
			s.line = append(s.line, chunk...)
			if err := s.charge(); err != nil {
				return nil, err
			}
		default:
			// At io.EOF a final line without a terminator cannot end an event: it is dropped.
			return nil, err
		}
	}
}

// charge brings the budget's charge up to the capacity the reader's buffers have grown to.
func (s *sseReader) charge() error {
	if s.budget == nil {
		return nil
	}
	grown := int64(cap(s.data)+cap(s.line)) - s.charged
	if grown <= 0 {
		return nil
	}
	if !s.budget.Take(grown) {
		return bodyread.ErrBudget
	}
	s.charged += grown
	return nil
}

// release returns the reader's charge; the reader must not be used afterwards.
func (s *sseReader) release() {
	s.budget.Return(s.charged)
	s.charged = 0
	s.budget = nil
}
