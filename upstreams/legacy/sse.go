package legacy

import (
	"bytes"
	"io"
	"strconv"
	"time"

	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
)

// sseStream reads a legacy response stream. Unlike 2026-07-28 streams, legacy ones are
// resumable, so it also keeps the last event id and the retry hint (WHATWG HTML §9.2.6), which
// wire.SSEReader ignores.
type sseStream struct {
	*wire.SSEReader
	lastID string
	retry  time.Duration
}

func newSSEStream(r io.Reader, max int) *sseStream {
	l := &sseStream{SSEReader: wire.NewSSEReader(r, max)}
	l.OnField = l.field
	return l
}

// reset continues on a resumed stream, keeping lastID and retry.
func (s *sseStream) reset(r io.Reader) { s.SSEReader.Reset(r) }

// field records the id and retry fields on the way (priming events included, SEP-1699).
func (s *sseStream) field(name, value []byte) {
	switch string(name) {
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
