package eventstream

import (
	"bufio"
	"bytes"
)

// Lines splits an event stream into lines as the standard does: a line ends at CRLF, LF or a
// lone CR, and one byte-order mark at the start of the stream is skipped. A CR is taken as the
// end of its line at once, without waiting for the next byte, which on an open stream may be
// long in coming: whether an LF follows is settled by the next call, which drops it, so a CRLF
// split across reads still ends one line. Each line is at most max bytes.
type Lines struct {
	r   *bufio.Reader
	max int
	// long holds a line that did not end within the read buffer while it is put together; it
	// is kept for the next such line.
	long []byte
	// started is set once the stream's first line is read; skipLF after a line ended by CR,
	// whose LF, if next (in this read or the next), is the same line end.
	started, skipLF bool
}

// NewLines returns the lines of the stream r reads, each at most max bytes.
func NewLines(r *bufio.Reader, max int) Lines { return Lines{r: r, max: max} }

// Restart continues on a new stream (r has been reset to it), which may start with its own
// byte-order mark.
func (l *Lines) Restart() { l.started, l.skipLF = false, false }

// Cap is the capacity of the buffer Lines keeps for lines longer than the read buffer.
func (l *Lines) Cap() int { return cap(l.long) }

// Next returns one line without its ending, valid until the next call: a line whole in the read
// buffer (nearly every one) is returned in place, not copied. A line longer than max is
// ErrTooLarge. A line cut short by the end of the stream ends nothing: the stream's error is
// returned. grown, when not nil, is called each time the buffer of long lines has grown (Cap),
// before the line is read further; an error it returns is Next's.
func (l *Lines) Next(grown func() error) ([]byte, error) {
	l.long = l.long[:0]
	if !l.started {
		l.started = true
		// One byte first: a stream that does not start with the mark is not held up until
		// the mark's length has arrived.
		if b, _ := l.r.Peek(1); len(b) == 1 && b[0] == bom[0] {
			if b, _ := l.r.Peek(len(bom)); string(b) == bom {
				_, _ = l.r.Discard(len(bom))
			}
		}
	}
	for {
		if _, err := l.r.Peek(1); err != nil {
			return nil, err
		}
		chunk, _ := l.r.Peek(l.r.Buffered())
		if l.skipLF {
			l.skipLF = false
			if chunk[0] == '\n' {
				_, _ = l.r.Discard(1)
				continue
			}
		}
		i := bytes.IndexAny(chunk, "\r\n")
		if i < 0 {
			i = len(chunk)
		}
		if len(l.long)+i > l.max {
			return nil, ErrTooLarge
		}
		if i == len(chunk) {
			// No line end in the buffer: keep what there is and read on.
			if err := l.keep(chunk, grown); err != nil {
				return nil, err
			}
			_, _ = l.r.Discard(len(chunk))
			continue
		}
		// Discard leaves the buffered bytes in place until the next read, so chunk stays valid.
		l.skipLF = chunk[i] == '\r'
		_, _ = l.r.Discard(i + 1)
		if len(l.long) == 0 {
			return chunk[:i], nil
		}
		if err := l.keep(chunk[:i], grown); err != nil {
			return nil, err
		}
		return l.long, nil
	}
}

// keep appends b to the long line, telling grown when its buffer grew.
func (l *Lines) keep(b []byte, grown func() error) error {
	before := cap(l.long)
	l.long = append(l.long, b...)
	if grown != nil && cap(l.long) != before {
		return grown()
	}
	return nil
}

// Field splits a line into its field's name and value as the standard does: the name is what
// comes before the first colon, the whole line when there is none (its value is then empty),
// and one space after the colon is stripped from the value. A comment's name is empty.
func Field(line []byte) (name, value []byte) {
	i := bytes.IndexByte(line, ':')
	if i < 0 {
		return line, nil
	}
	name, value = line[:i], line[i+1:]
	if len(value) > 0 && value[0] == ' ' {
		value = value[1:]
	}
	return name, value
}
