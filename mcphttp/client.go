package mcphttp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/upstreams"
)

// ClientSink is the one writer of a client's HTTP response. Everything a client receives goes
// through it: a JSON response, or an SSE stream of events ending with the last message; the
// keep-alive comments that hold a silent response open; the write deadline of every write. It
// records what it wrote (status, outcome, whether the response became a stream) for the access
// log and the metrics, and it is the pipeline's Sink for a 2026-07-28 request, framing results
// as that revision does (resultType, the gateway's serverInfo).
//
// Another edge (the pre-2026 one, package pre2026) writes to its client through the same
// ClientSink and gives the pipeline a Sink of its own that reshapes what it answers.
type ClientSink struct {
	w         http.ResponseWriter
	srv       *Server
	ctx       context.Context
	requestID string
	// id is the JSON-RPC id the response answers; nil until the request is decoded (and for a
	// body that does not decode, whose errors carry a null id).
	id json.RawMessage

	// mu serializes writes between the handler and the keep-alive timer.
	mu sync.Mutex
	ka *time.Timer
	// armed: the keep-alives are on (KeepAlive(true)); a tick of the timer that finds them off
	// writes nothing and does not re-arm it.
	armed bool
	done  bool // no more keep-alives: the last message is written or the handler is finishing
	// sent is when the client was last sent anything (the last flush), the response's start
	// before that: a response's silence is counted from it, however often the keep-alives are
	// paused and armed again in between.
	sent         time.Time
	status       int
	outcome      string
	sse          bool
	writeErr     error  // the first failed write: the response is over
	streamClosed func() // ends the open-SSE-streams gauge when the response was a stream
	// el is set for the element of a batch (batch.go): its messages go out through the batch's
	// ClientSink, and w is nil.
	el *element
}

// errClientWrite marks a response the client did not take: nothing more can be written to it.
var errClientWrite = errors.New("mcphttp: writing the response failed")

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

var (
	eventHead        = []byte("event: message\ndata: ")
	eventTail        = []byte("\n\n")
	keepAliveComment = []byte(": keep-alive\n\n")
)

// Header is the response's header map, for what must go out with the status line (a pre-2026
// session id).
func (c *ClientSink) Header() http.Header {
	if c.el != nil {
		return c.el.headers()
	}
	return c.w.Header()
}

// Outcome is how the response ended so far (the outcome label), "" before anything decided it.
func (c *ClientSink) Outcome() string { return c.outcome }

// SetOutcome records how the request ended without writing anything: a client that went away,
// a call its client cancelled.
func (c *ClientSink) SetOutcome(o string) { c.outcome = o }

// Status is the HTTP status written, 0 before the headers went out.
func (c *ClientSink) Status() int { return c.status }

// Streaming reports whether the response became an SSE stream.
func (c *ClientSink) Streaming() bool { return c.sse }

// Failed is the error of the write that ended the response (the client gone, or not reading in
// time), nil while the client takes what it is sent.
func (c *ClientSink) Failed() error {
	if c.el != nil {
		return c.el.failed()
	}
	return c.writeErr
}

// setID sets the JSON-RPC id every message this response answers with carries.
func (c *ClientSink) setID(id json.RawMessage) { c.id = id }

// Result answers with result, the request's result: the gateway's own (a list page, a
// confirmation) or a backend's, borrowed until Result returns. It gets resultType and the
// gateway's serverInfo; status is the backend's for a relayed result, 200 otherwise.
func (c *ClientSink) Result(result []byte, status int, outcome string, held *int) error {
	if c.el != nil {
		c.el.last(c, status, outcome)
		return c.el.emitMsg(c, c.srv.newResponse(c.id, result))
	}
	c.outcome = outcome
	return c.emitLast(c.srv.newResponse(c.id, result), status, held)
}

// Message answers with msg, a whole JSON-RPC message relayed untouched (a backend's error).
func (c *ClientSink) Message(msg []byte, status int, outcome string, held *int) error {
	if c.el != nil {
		c.el.last(c, status, outcome)
		return c.el.emit(c, msg)
	}
	c.outcome = outcome
	p := &outMsg{}
	p.add(msg)
	return c.emitLast(p, status, held)
}

// Event writes msg as an SSE event, starting the stream if needed. With held nil it is flushed
// at once; else it stays in the response's buffer (adding its size to *held) until FlushHeld, a
// keep-alive, a later flushed event or the last message sends it. It serializes with the
// keep-alive timer and leaves it armed.
func (c *ClientSink) Event(msg []byte, held *int) error {
	if c.el != nil {
		return c.el.emit(c, msg) // nothing held: other elements write to the same stream
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.sse {
		c.startSSE()
	}
	return c.writeEventBytes(msg, held)
}

// FlushHeld sends the events written without a flush, if any: the relay is about to wait for
// the backend (Stream.OnWait).
func (c *ClientSink) FlushHeld(held *int) {
	if held == nil || *held == 0 || c.el != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.writeErr == nil {
		c.writeDeadline(*held)
		_ = c.flush(held)
	}
}

// Error answers with e: its status, headers and JSON-RPC error (with the request's id, null when
// the id could not be read); on a started stream, the error is the stream's last message.
func (c *ClientSink) Error(e *Error) error {
	e = c.srv.drafts.draftShape(e)
	if c.el != nil {
		return c.el.rpcError(c, e)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopKeepAliveLocked()
	c.outcome = e.Outcome
	if c.sse {
		if e.RPC == nil {
			return nil
		}
		return c.writeEventBytes(jsonrpc.AppendError(nil, c.id, e.RPC), nil)
	}
	for k, v := range e.Header {
		c.w.Header()[k] = v
	}
	if e.RPC == nil || e.Status == 499 {
		c.writeDeadline(0)
		c.w.WriteHeader(e.Status)
		c.status = e.Status
		return nil
	}
	return c.writeJSON(e.Status, jsonrpc.AppendError(nil, c.id, e.RPC))
}

// JSON answers with body, a whole JSON message, as the response: with status and as JSON when
// nothing has been written yet, else as the stream's last event. It stops the keep-alives.
func (c *ClientSink) JSON(status int, body []byte, outcome string) error {
	if c.el != nil {
		c.el.last(c, status, outcome)
		return c.el.emit(c, body)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopKeepAliveLocked()
	c.outcome = outcome
	if c.sse {
		return c.writeEventBytes(body, nil)
	}
	return c.writeJSON(status, body)
}

// Accepted answers 202 with no body: a notification, or a client's answer, was taken.
func (c *ClientSink) Accepted() {
	if c.el != nil {
		c.el.last(c, http.StatusAccepted, outcomeOK)
		return
	}
	c.writeDeadline(0)
	c.w.WriteHeader(http.StatusAccepted)
	c.status, c.outcome = http.StatusAccepted, outcomeOK
}

// KeepAlive arms (on) or pauses the keep-alive timer. While it is armed, a response silent for
// Config.SSEKeepAlive gets an SSE comment; one that has not started becomes an SSE stream
// (clients accept either, docs/protocol.md §2.1), so a long call is not cut off by a proxy
// waiting for its first byte. The silence is counted from the last byte the client was sent (the
// response's start before any), not from the arming: a wait that pauses the keep-alives and arms
// them again more often than the interval (a paced wait's pauses, each with a retry between)
// still gets its comments, and one armed after a silence of the interval or longer gets one at
// once. Paused, no comment is written until it is armed again; once the last message is
// written it stays off.
func (c *ClientSink) KeepAlive(on bool) {
	if c.el != nil {
		return // the batch's stream keeps itself alive
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !on {
		c.armed = false
		if c.ka != nil {
			c.ka.Stop()
		}
		return
	}
	if c.srv.cfg.SSEKeepAlive <= 0 || c.done {
		return
	}
	c.armed = true
	c.armKeepAliveLocked()
}

// armKeepAliveLocked sets the timer to fire when the response will have been silent for the
// interval: at once when it already has.
func (c *ClientSink) armKeepAliveLocked() {
	if c.sent.IsZero() {
		// A sink built without its start (an element's, a test's): the silence starts now.
		c.sent = time.Now()
	}
	d := max(c.srv.cfg.SSEKeepAlive-time.Since(c.sent), 0)
	if c.ka == nil {
		c.ka = time.AfterFunc(d, c.keepAliveTick)
		return
	}
	c.ka.Reset(d)
}

// EventID writes an event that carries an SSE event id and no data, starting the stream if
// needed, with a reconnection delay (retry) when retry is positive: the priming event of the
// 2025-11-25 transport, which a client's EventSource does not dispatch and whose id it sends
// back as Last-Event-ID when it reconnects. id must hold no line break.
func (c *ClientSink) EventID(id string, retry time.Duration) error {
	if c.el != nil {
		return nil // a batch's elements share one stream: no id of their own
	}
	b := append(append([]byte("id: "), id...), '\n')
	if retry > 0 {
		b = append(strconv.AppendInt(append(b, "retry: "...), retry.Milliseconds(), 10), '\n')
	}
	b = append(b, '\n')
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.sse {
		c.startSSE()
	}
	c.writeDeadline(len(b))
	if err := c.write(b); err != nil {
		return err
	}
	return c.flush(nil)
}

// Comment writes a keep-alive comment now, starting the stream if needed: a stream a client
// waits for the headers of.
func (c *ClientSink) Comment() error {
	if c.el != nil {
		return c.el.batch.Comment()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.sse {
		c.startSSE()
	}
	return c.commentLocked()
}

// keepAliveTick writes a comment when the response has been silent for the interval, and arms
// the timer for the next one. A tick that ran while the keep-alives were paused (it was already
// waiting for mu when KeepAlive(false) stopped the timer) does nothing: off means off.
func (c *ClientSink) keepAliveTick() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done || !c.armed || c.writeErr != nil {
		return
	}
	if time.Since(c.sent) < c.srv.cfg.SSEKeepAlive {
		// The client was sent something since the timer was set.
		c.armKeepAliveLocked()
		return
	}
	if !c.sse {
		c.startSSE()
	}
	if c.commentLocked() == nil {
		c.armKeepAliveLocked()
	}
}

func (c *ClientSink) commentLocked() error {
	c.writeDeadline(len(keepAliveComment))
	if err := c.write(keepAliveComment); err != nil {
		return err
	}
	return c.flush(nil)
}

// finish stops the keep-alives for good; after it returns nothing writes concurrently with the
// handler.
func (c *ClientSink) finish() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopKeepAliveLocked()
}

func (c *ClientSink) stopKeepAliveLocked() {
	c.done, c.armed = true, false
	if c.ka != nil {
		c.ka.Stop()
	}
}

// emitLast writes the last message: as JSON when no stream has started, else as the last
// event, which with held set the response's end sends. It disarms the keep-alive timer.
func (c *ClientSink) emitLast(p *outMsg, status int, held *int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopKeepAliveLocked()
	if !c.sse {
		c.writeHead(status, p.n)
		return p.each(c.write)
	}
	return c.writeEventParts(p, held)
}

// writeJSON writes a JSON response.
func (c *ClientSink) writeJSON(status int, body []byte) error {
	c.writeHead(status, len(body))
	return c.write(body)
}

func (c *ClientSink) writeHead(status, n int) {
	h := c.w.Header()
	h["Content-Type"] = contentTypeJSON
	if n > chunkingThreshold {
		// net/http measures a body itself only when it fits its 2 KiB buffer; a larger one
		// (a page of tools) would go out chunked, and its closing chunk in a write of its own.
		h["Content-Length"] = []string{strconv.Itoa(n)}
	}
	// The whole body, headers included, gets one deadline derived from its size.
	c.writeDeadline(n)
	c.w.WriteHeader(status)
	c.status = status
}

// write writes b; a failure (the client went away, or did not read within the deadline) is
// recorded once and ends the response.
func (c *ClientSink) write(b []byte) error {
	if c.writeErr != nil {
		return c.writeErr
	}
	if _, err := c.w.Write(b); err != nil {
		c.writeFailed(err)
		return c.writeErr
	}
	return nil
}

// writeFailed records a failed write: a deadline that passed is counted and logged, as a client
// that does not read its response.
func (c *ClientSink) writeFailed(err error) {
	if c.writeErr != nil {
		return
	}
	c.writeErr = fmt.Errorf("%w: %w", errClientWrite, err)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		c.srv.writeTimeouts.Add(1)
		c.srv.log.WarnContext(c.ctx, "client did not read its response in time; connection closed",
			"request_id", c.requestID, "write_timeout", c.srv.cfg.WriteTimeout)
	}
}

// writeDeadline gives the next n bytes of the response WriteTimeout plus the time n bytes take
// at MinWriteRate to reach the client. Each SSE event and keep-alive sets its own, so a stream
// may last as long as it makes progress.
func (c *ClientSink) writeDeadline(n int) {
	t := c.srv.cfg.WriteTimeout
	if t <= 0 {
		return
	}
	t += time.Duration(int64(n) * int64(time.Second) / c.srv.cfg.MinWriteRate)
	_ = http.NewResponseController(c.w).SetWriteDeadline(time.Now().Add(t))
}

// startSSE switches the response to an event stream for this request only (Streamable HTTP: a
// server may answer a POST with either).
func (c *ClientSink) startSSE() {
	h := c.w.Header()
	h["Content-Type"] = contentTypeSSE
	h["Cache-Control"] = noCache
	h["X-Accel-Buffering"] = accelNo // keep nginx-style proxies from buffering the stream
	c.writeDeadline(0)
	c.w.WriteHeader(http.StatusOK)
	c.status, c.sse = http.StatusOK, true
	c.streamClosed = c.srv.metrics.StreamOpened()
}

// writeEventBytes writes one SSE event carrying msg, within its own write deadline, and flushes
// it, or with held set holds it (see Event).
func (c *ClientSink) writeEventBytes(msg []byte, held *int) error {
	if hasLineBreak(msg) {
		cm, err := compact(msg)
		if err != nil {
			return err
		}
		msg = cm
	}
	n := len(eventHead) + len(msg) + len(eventTail)
	if held == nil || *held+n > chunkingThreshold {
		c.writeDeadline(heldBytes(held) + n)
	}
	// Else net/http keeps the event in its buffer, and its deadline is set when it is flushed
	// (FlushHeld) or with the last event (writeEventParts).
	if err := c.write(eventHead); err != nil {
		return err
	}
	if err := c.write(msg); err != nil {
		return err
	}
	return c.endEvent(n, held)
}

// writeEventParts is writeEventBytes for a message assembled from parts.
func (c *ClientSink) writeEventParts(p *outMsg, held *int) error {
	crlf := false
	_ = p.each(func(b []byte) error {
		crlf = crlf || hasLineBreak(b)
		return nil
	})
	if crlf {
		// The one case where a result is copied.
		cm, err := compact(p.bytes())
		if err != nil {
			return err
		}
		p = &outMsg{}
		p.add(cm)
	}
	n := len(eventHead) + p.n + len(eventTail)
	c.writeDeadline(heldBytes(held) + n)
	if err := c.write(eventHead); err != nil {
		return err
	}
	if err := p.each(c.write); err != nil {
		return err
	}
	return c.endEvent(n, held)
}

// endEvent ends an event of n bytes whose data is written, and flushes or holds it.
func (c *ClientSink) endEvent(n int, held *int) error {
	if err := c.write(eventTail); err != nil {
		return err
	}
	if held != nil {
		*held += n
		return nil
	}
	return c.flush(nil)
}

// heldBytes is *held, or 0.
func heldBytes(held *int) int {
	if held == nil {
		return 0
	}
	return *held
}

// flush sends what the response has buffered, held events included (*held is reset), and
// records when: the keep-alives count the response's silence from it.
func (c *ClientSink) flush(held *int) error {
	if held != nil {
		*held = 0
	}
	if err := http.NewResponseController(c.w).Flush(); err != nil {
		c.writeFailed(err)
		return c.writeErr
	}
	c.sent = time.Now()
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
