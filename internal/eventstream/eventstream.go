// Package eventstream reads a text/event-stream as the WHATWG HTML standard parses it
// ("Parsing an event stream"): lines end at CRLF, LF or a lone CR, one byte-order mark at the
// start of the stream is skipped, a line starting with a colon is a comment, a field without a
// colon has an empty value, one space after the colon is stripped, data lines are joined with
// LF, and a blank line ends an event. It is the reader of the gateway's clients outside the
// gateway (the load generator, the tests' raw clients), so that they read what any server that
// follows the standard may write; the gateway reads its backends' streams with its own reader,
// which charges its memory to a budget. Standard library only.
package eventstream

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// ErrTooLarge is returned for a line or an event's data longer than the Reader's bound.
var ErrTooLarge = errors.New("eventstream: line or event too large")

// bom is the UTF-8 byte-order mark, which a stream may start with.
const bom = "\uFEFF"

// Event is one event of a stream: the fields between two blank lines.
type Event struct {
	// Type is the event field's value, "" when there was none.
	Type string
	// ID is the id field's value; HasID is set when the event had one. An id holding NUL is
	// ignored, as the standard says.
	ID    string
	HasID bool
	// Data is the data lines' values joined by LF. HasData is set when the event had a data
	// field, even an empty one; the standard dispatches only such an event.
	Data    []byte
	HasData bool
}

// Reader reads the events of one stream, or of several in turn (Reset).
type Reader struct {
	r   *bufio.Reader
	max int
	// started is set once the stream's first line is read; skipLF after a line ended by CR,
	// whose LF, if next (in this read or the next), is the same line end.
	started, skipLF bool
}

// NewReader returns a reader of the stream r with a read buffer of size bytes, whose lines and
// events' data are at most max bytes.
func NewReader(r io.Reader, size, max int) *Reader {
	return &Reader{r: bufio.NewReaderSize(r, size), max: max}
}

// Reset continues on a new stream, which may start with its own byte-order mark.
func (e *Reader) Reset(r io.Reader) {
	e.r.Reset(r)
	e.started, e.skipLF = false, false
}

// Next returns the next event that had at least one field (data, event, id or retry); blank
// lines and comments alone make none. An event the stream ends in before its blank line is
// discarded, as the standard says, and the stream's error (io.EOF at its end) is returned.
func (e *Reader) Next() (Event, error) {
	var ev Event
	fields := false
	for {
		line, err := e.line()
		if err != nil {
			return Event{}, err
		}
		if len(line) == 0 {
			if fields {
				return ev, nil
			}
			continue
		}
		if line[0] == ':' {
			continue
		}
		name, value, found := bytes.Cut(line, []byte(":"))
		if found {
			value, _ = bytes.CutPrefix(value, []byte(" "))
		}
		switch string(name) {
		case "data":
			if ev.HasData {
				ev.Data = append(ev.Data, '\n')
			}
			if len(ev.Data)+len(value) > e.max {
				return Event{}, ErrTooLarge
			}
			ev.Data, ev.HasData = append(ev.Data, value...), true
		case "event":
			ev.Type = string(value)
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				ev.ID, ev.HasID = string(value), true
			}
		case "retry":
		default:
			continue // an unknown field is ignored, and makes no event
		}
		fields = true
	}
}

// line returns one line without its ending, valid until the next read: a line whole in the read
// buffer (nearly every one) is returned in place, not copied, since Next copies what it keeps.
// A line cut short by the end of the stream ends nothing: the stream's error is returned.
func (e *Reader) line() ([]byte, error) {
	if !e.started {
		e.started = true
		if b, _ := e.r.Peek(len(bom)); string(b) == bom {
			_, _ = e.r.Discard(len(bom))
		}
	}
	var long []byte
	for {
		if _, err := e.r.Peek(1); err != nil {
			return nil, err
		}
		chunk, _ := e.r.Peek(e.r.Buffered())
		if e.skipLF {
			e.skipLF = false
			if chunk[0] == '\n' {
				_, _ = e.r.Discard(1)
				continue
			}
		}
		i := bytes.IndexAny(chunk, "\r\n")
		if i < 0 {
			if len(long)+len(chunk) > e.max {
				return nil, ErrTooLarge
			}
			long = append(long, chunk...)
			_, _ = e.r.Discard(len(chunk))
			continue
		}
		if len(long)+i > e.max {
			return nil, ErrTooLarge
		}
		e.skipLF = chunk[i] == '\r'
		line := chunk[:i]
		if long != nil {
			line = append(long, line...)
		}
		_, _ = e.r.Discard(i + 1)
		return line, nil
	}
}

// Parse returns the events of a whole stream held in b, that is those Next returns before the
// end, and the first error other than the end (ErrTooLarge past max bytes).
func Parse(b []byte, max int) ([]Event, error) {
	e := NewReader(bytes.NewReader(b), 4<<10, max)
	var out []Event
	for {
		ev, err := e.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, ev)
	}
}
