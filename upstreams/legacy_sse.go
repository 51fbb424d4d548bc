package upstreams

import (
	"bytes"
	"io"
	"strconv"
	"time"
)

// legacySSE reads a legacy response stream. Unlike 2026-07-28 streams, legacy ones are
// resumable, so it also keeps the last event id and the retry hint (WHATWG HTML §9.2.6), which
// sseReader ignores.
type legacySSE struct {
	*sseReader
	lastID string
	retry  time.Duration
}

func newLegacySSE(r io.Reader, max int) *legacySSE {
	return &legacySSE{sseReader: newSSEReader(r, max)}
}

// reset continues on a resumed stream, keeping lastID and retry.
func (s *legacySSE) reset(r io.Reader) { s.r.Reset(r) }

// next returns the data of the next event that has any, recording id and retry fields on the
// way. A priming event (an id and no data, SEP-1699) only records its id.
func (s *legacySSE) next() ([]byte, error) {
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
			hasData = false // a priming event: its empty data carries nothing to decode
			continue
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(field) {
		case "data":
			if hasData {
				s.data = append(s.data, '\n')
			}
			if len(s.data)+len(value) > s.max {
				return nil, errEventTooLarge
			}
			s.data = append(s.data, value...)
			hasData = true
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				s.lastID = string(value)
			}
		case "retry":
			if ms, err := strconv.ParseUint(string(value), 10, 32); err == nil {
				s.retry = time.Duration(ms) * time.Millisecond
			}
		}
	}
}
