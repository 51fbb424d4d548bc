package mcphttp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/mcpheader"
	"github.com/mcp-gateway/gateway/upstreams"
)

// passHeaders selects what the backend may see of the client's headers: the Mcp-Param-*
// mirrors (intermediaries MUST forward them, docs/protocol.md §2.2), trace context and the request id.
// Authorization and cookies are never among them.
func (x *request) passHeaders() http.Header {
	out := make(http.Header, 4)
	for k, v := range x.r.Header {
		if strings.HasPrefix(k, mcpheader.ParamPrefix) {
			out[k] = v
		}
	}
	// Trace context from the caller's headers, or from its _meta when it sent none (SEP-414),
	// validated; invalid values are dropped. With tracing on, the parent is the gateway's span.
	for k, v := range x.trace().headers() {
		out[k] = v
	}
	out[mcpheader.RequestID] = x.requestIDValue
	return out
}

// writeResult answers with a JSON-RPC success response around a result object, which gets the
// gateway's resultType and serverInfo.
func (x *request) writeResult(result []byte) {
	_ = x.writeResponse(http.StatusOK, x.s.newResponse(x.in.req.ID, result))
	x.out.outcome = outcomeOK
}

// chunkingThreshold is net/http's buffer before it falls back to chunked encoding
// (bufferBeforeChunkingSize in net/http).
const chunkingThreshold = 2048

// Header values every response of a kind carries. They are shared between responses, which is
// safe because nothing modifies a header value in place (Header.Add appends to a full slice,
// which copies), and it spares an allocation per response.
var (
	contentTypeJSON = []string{"application/json"}
	contentTypeSSE  = []string{"text/event-stream"}
	noCache         = []string{"no-cache"}
	accelNo         = []string{"no"}
)

// writeJSON writes a JSON response.
func (x *request) writeJSON(status int, body []byte) error {
	x.writeHead(status, len(body))
	return x.write(body)
}

// writeResponse writes a JSON response assembled from parts, none of them copied.
func (x *request) writeResponse(status int, p *outMsg) error {
	x.writeHead(status, p.n)
	return p.each(x.write)
}

func (x *request) writeHead(status, n int) {
	h := x.w.Header()
	h["Content-Type"] = contentTypeJSON
	if n > chunkingThreshold {
		// net/http measures a body itself only when it fits its 2 KiB buffer; a larger one
		// (a page of tools) would go out chunked, and its closing chunk in a write of its own.
		h["Content-Length"] = []string{strconv.Itoa(n)}
	}
	// The whole body, headers included, gets one deadline derived from its size.
	x.writeDeadline(n)
	x.w.WriteHeader(status)
	x.out.status = status
}

// errClientWrite marks a response the client did not take: nothing more can be written to it.
var errClientWrite = errors.New("mcphttp: writing the response failed")

// write writes b; a failure (the client went away, or did not read within the deadline) is
// recorded once and ends the response.
func (x *request) write(b []byte) error {
	if x.out.writeErr != nil {
		return x.out.writeErr
	}
	if _, err := x.w.Write(b); err != nil {
		x.writeFailed(err)
		return x.out.writeErr
	}
	return nil
}

// writeFailed records a failed write: a deadline that passed is counted and logged, as a client
// that does not read its response.
func (x *request) writeFailed(err error) {
	if x.out.writeErr != nil {
		return
	}
	x.out.writeErr = fmt.Errorf("%w: %w", errClientWrite, err)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		x.s.writeTimeouts.Add(1)
		x.s.log.WarnContext(x.ctx, "client did not read its response in time; connection closed",
			"request_id", x.requestID, "write_timeout", x.s.cfg.WriteTimeout)
	}
}

// writeDeadline gives the next n bytes of the response WriteTimeout plus the time n bytes take
// at MinWriteRate to reach the client. Each SSE event and keep-alive sets its own, so a stream
// may last as long as it makes progress.
func (x *request) writeDeadline(n int) {
	t := x.s.cfg.WriteTimeout
	if t <= 0 {
		return
	}
	t += time.Duration(int64(n) * int64(time.Second) / x.s.cfg.MinWriteRate)
	_ = http.NewResponseController(x.w).SetWriteDeadline(time.Now().Add(t))
}

// writeError answers with e: the status, its headers, and a JSON-RPC error body with the
// request's id (null when the id could not be read).
func (x *request) writeError(e *Error) {
	x.out.outcome = e.Outcome
	if x.out.sse {
		// Headers are gone; the error becomes the stream's last message.
		if e.RPC != nil {
			_ = x.writeEvent(jsonrpc.AppendError(nil, x.id(), e.RPC))
		}
		return
	}
	for k, v := range e.Header {
		x.w.Header()[k] = v
	}
	if e.RPC == nil || e.Status == 499 {
		x.writeDeadline(0)
		x.w.WriteHeader(e.Status)
		x.out.status = e.Status
		return
	}
	_ = x.writeJSON(e.Status, jsonrpc.AppendError(nil, x.id(), e.RPC))
}

func (x *request) id() json.RawMessage {
	if x.in.req == nil {
		return nil
	}
	return x.in.req.ID
}

// relay is stage 11 of a routed call. It copies a backend's response to the client as it
// arrives: a single JSON response stays JSON; an SSE response is streamed event by event, so
// progress reaches the client before the result. The last message is the only one rewritten, and its result is
// written from where the backend's response was read. While the backend is quiet, keep-alive
// comments hold the stream open (keepalive.go).
//
// Events are sent when the relay would wait for the backend, not one by one: those the backend
// sent together go out in one write (as a reverse proxy sends what it read at once), the last
// with the response's end, and none waits on a backend that pauses.
func (x *request) relay(st *upstreams.Stream) error {
	st.ResultOnly()
	// held counts the bytes of events written without a flush; nil: every event is flushed.
	// OnWait's fn runs inside Next, on this goroutine.
	var held *int
	if st.SSE() {
		h := new(int)
		if st.OnWait(func() { x.flushHeld(h) }) {
			held = h
		}
	}
	for {
		msg, final, err := st.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if !final {
			if err := x.emitEvent(msg, held); err != nil {
				return err
			}
			continue
		}
		p, err := x.reply(st, msg)
		if err != nil {
			return err
		}
		status := http.StatusOK
		if s := st.Status(); s >= 400 && s < 500 {
			// A backend's JSON-RPC error keeps the status the backend chose for it.
			status = s
		}
		return x.emitLast(p, status, held)
	}
}

// emit writes one message as an SSE event and flushes it, starting the stream if needed: every
// message of a listen, and of a stream relayed without holding back. It serializes with the
// keep-alive timer and leaves it armed.
func (x *request) emit(msg []byte) error { return x.emitEvent(msg, nil) }

// emitEvent is emit that, with held set, leaves the event in the response's buffer (adding its
// size to *held) until flushHeld, a keep-alive, a later flushed event or the response's end
// sends it.
func (x *request) emitEvent(msg []byte, held *int) error {
	x.out.mu.Lock()
	defer x.out.mu.Unlock()
	if !x.out.sse {
		x.startSSE()
	}
	return x.writeEventBytes(msg, held)
}

// emitLast writes a forwarded call's last message: as JSON when no stream has started, else as
// the last event, which with held set the response's end sends. It disarms the keep-alive timer.
func (x *request) emitLast(p *outMsg, status int, held *int) error {
	x.out.mu.Lock()
	defer x.out.mu.Unlock()
	x.stopKeepAliveLocked()
	if !x.out.sse {
		return x.writeResponse(status, p)
	}
	return x.writeEventParts(p, held)
}

// flushHeld sends the events written without a flush, if any: the relay is about to wait for
// the backend (Stream.OnWait).
func (x *request) flushHeld(held *int) {
	if held == nil || *held == 0 {
		return
	}
	x.out.mu.Lock()
	defer x.out.mu.Unlock()
	if x.out.writeErr == nil {
		x.writeDeadline(*held)
		_ = x.flush(held)
	}
}

// reply renders the client's last message from the message that ended the backend's stream:
// results get the gateway's resultType and serverInfo (and MRTR state sealed, stage 10); errors
// pass through untouched. The stream has decoded the message already and hands over its result,
// which the response borrows.
func (x *request) reply(st *upstreams.Stream, msg []byte) (*outMsg, error) {
	result := st.Result()
	if result == nil {
		x.out.outcome = outcomeBackendError
		p := &outMsg{}
		p.add(msg)
		return p, nil
	}
	x.out.outcome = outcomeOK
	result, err := x.mrtrOut(result)
	if err != nil {
		return nil, err
	}
	return x.s.newResponse(x.in.req.ID, result), nil
}

// startSSE switches the response to an event stream for this request only (Streamable HTTP: a
// server may answer a POST with either).
func (x *request) startSSE() {
	h := x.w.Header()
	h["Content-Type"] = contentTypeSSE
	h["Cache-Control"] = noCache
	h["X-Accel-Buffering"] = accelNo // keep nginx-style proxies from buffering the stream
	x.writeDeadline(0)
	x.w.WriteHeader(http.StatusOK)
	x.out.status, x.out.sse = http.StatusOK, true
	x.out.streamClosed = x.s.metrics.StreamOpened()
}

var (
	eventHead = []byte("event: message\ndata: ")
	eventTail = []byte("\n\n")
)

// writeEvent writes one SSE event carrying a JSON-RPC message and flushes it.
func (x *request) writeEvent(msg []byte) error { return x.writeEventBytes(msg, nil) }

// writeEventBytes writes one SSE event carrying msg, within its own write deadline, and flushes
// it, or with held set holds it (see emitEvent).
func (x *request) writeEventBytes(msg []byte, held *int) error {
	if hasLineBreak(msg) {
		c, err := compact(msg)
		if err != nil {
			return err
		}
		msg = c
	}
	n := len(eventHead) + len(msg) + len(eventTail)
	if held == nil || *held+n > chunkingThreshold {
		x.writeDeadline(heldBytes(held) + n)
	}
	// Else net/http keeps the event in its buffer, and its deadline is set when it is flushed
	// (flushHeld) or with the last event (writeEventParts).
	if err := x.write(eventHead); err != nil {
		return err
	}
	if err := x.write(msg); err != nil {
		return err
	}
	return x.endEvent(n, held)
}

// writeEventParts is writeEventBytes for a message assembled from parts.
func (x *request) writeEventParts(p *outMsg, held *int) error {
	crlf := false
	_ = p.each(func(b []byte) error {
		crlf = crlf || hasLineBreak(b)
		return nil
	})
	if crlf {
		// The one case where a result is copied.
		c, err := compact(p.bytes())
		if err != nil {
			return err
		}
		p = &outMsg{}
		p.add(c)
	}
	n := len(eventHead) + p.n + len(eventTail)
	x.writeDeadline(heldBytes(held) + n)
	if err := x.write(eventHead); err != nil {
		return err
	}
	if err := p.each(x.write); err != nil {
		return err
	}
	return x.endEvent(n, held)
}

// endEvent ends an event of n bytes whose data is written, and flushes or holds it.
func (x *request) endEvent(n int, held *int) error {
	if err := x.write(eventTail); err != nil {
		return err
	}
	if held != nil {
		*held += n
		return nil
	}
	return x.flush(nil)
}

// heldBytes is *held, or 0.
func heldBytes(held *int) int {
	if held == nil {
		return 0
	}
	return *held
}

// flush sends what the response has buffered, held events included (*held is reset).
func (x *request) flush(held *int) error {
	if held != nil {
		*held = 0
	}
	if err := http.NewResponseController(x.w).Flush(); err != nil {
		x.writeFailed(err)
		return x.out.writeErr
	}
	return nil
}

// hasLineBreak reports whether b holds a CR or LF: two vectorised searches, where
// bytes.ContainsAny would test a result of megabytes byte by byte.
func hasLineBreak(b []byte) bool {
	return bytes.IndexByte(b, '\n') >= 0 || bytes.IndexByte(b, '\r') >= 0
}

// compact removes the line breaks of a JSON message: an SSE data line cannot hold one, and
// JSON outside strings can lose them (inside strings they are escaped).
func compact(msg []byte) ([]byte, error) {
	var c bytes.Buffer
	if err := json.Compact(&c, msg); err != nil {
		return nil, upstreams.ErrBadResponse
	}
	return c.Bytes(), nil
}
