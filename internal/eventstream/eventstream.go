// Package eventstream reads a text/event-stream as the WHATWG HTML standard parses it
// ("Parsing an event stream"): lines end at CRLF, LF or a lone CR, one byte-order mark at the
// start of the stream is skipped, a line starting with a colon is a comment, a field without a
// colon has an empty value, one space after the colon is stripped, data lines are joined with
// LF, and a blank line ends an event. Reader is the reader of the gateway's clients outside the
// gateway (the load generator, the tests' raw clients), so that they read what any server that
// follows the standard may write. The gateway reads its backends' streams with a reader of its
// own (upstreams/internal/wire) that reads lines and fields with this package's Lines and
// Field, so that both take the same fields from the same bytes; it does not use Reader because it must not allocate per
// event (it reuses one data buffer, which Reader's callers keep), it passes over events with
// empty data, which Reader returns, it charges its buffers to a budget as they grow, takes its
// read buffer from a pool, and tells the caller before a read that may wait. Standard library
// only.
package eventstream

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math"
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
	r     *bufio.Reader
	lines Lines
	max   int
}

// NewReader returns a reader of the stream r with a read buffer of size bytes, whose events'
// data are at most max bytes, and lines at most LineBound(max).
func NewReader(r io.Reader, size, max int) *Reader {
	br := bufio.NewReaderSize(r, size)
	return &Reader{r: br, lines: NewLines(br, LineBound(max)), max: max}
}

// dataFieldHead is what a data line spends before its value, at most.
const dataFieldHead = len("data: ")

// LineBound is the longest line a reader of events whose data are at most max bytes takes: a
// data line holding max bytes of value, so that a message of max bytes is read as an event as
// it is as a JSON body, whatever the field name before it spends.
func LineBound(max int) int {
	if max > math.MaxInt-dataFieldHead {
		return math.MaxInt
	}
	return max + dataFieldHead
}

// Reset continues on a new stream, which may start with its own byte-order mark.
func (e *Reader) Reset(r io.Reader) {
	e.r.Reset(r)
	e.lines.Restart()
}

// Next returns the next event that had at least one field (data, event, id or retry); blank
// lines and comments alone make none. An event the stream ends in before its blank line is
// discarded, as the standard says, and the stream's error (io.EOF at its end) is returned.
func (e *Reader) Next() (Event, error) {
	var ev Event
	fields := false
	for {
		line, err := e.lines.Next(nil)
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
		name, value := Field(line)
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

// Parse returns the events of a whole stream held in b, that is those Next returns before the
// end, and the first error other than the end (ErrTooLarge past max bytes).
func Parse(b []byte, max int) ([]Event, error) { return ReadAll(bytes.NewReader(b), max) }

// ReadAll reads the stream r to its end: the events Next returns before the end, and the first
// error other than the end (ErrTooLarge past max bytes, or r's own).
func ReadAll(r io.Reader, max int) ([]Event, error) {
	e := NewReader(r, 4<<10, max)
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
