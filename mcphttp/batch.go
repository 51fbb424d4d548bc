package mcphttp

import (
	"net/http"
	"strconv"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

// A JSON-RPC batch (MCP 2025-03-26 only; package pre2026 serves it) is one HTTP request carrying
// several messages. Each message is an element: a request value of its own, with its own
// message, admission (in-flight slots, rate limit), route, outcome, span, access log line and
// metrics, so that it is authorised, admitted and audited as if it had been sent alone. It
// shares the batch's HTTP request, context and caller: the batch was authenticated once. An
// element answers through a ClientSink in element mode, which writes nothing itself: every
// message it is given goes, through the batch's ClientSink, as an event of the batch's SSE
// stream, so the batch's responses are never held together (each is written when it is ready,
// and its admission given back then).

// element is what a ClientSink in element mode writes through.
type element struct {
	// batch is the ClientSink of the batch's HTTP response.
	batch *ClientSink
	// header holds the headers an element's answer would have had alone (a challenge, a
	// Retry-After): a batch's response has one set of headers, so they are not sent.
	header http.Header
}

// Element returns the Incoming of the n-th message (from 1) of a batch the edge read from in's
// body, body being that message's bytes, decoded as stage decode decodes a body; the error is
// why it did not decode, as stage era is given it. The decode takes no turn at the decode gate:
// the edge holds one for the whole batch while it splits it (DecodeTurn), since a batch of
// messages each below the gate's size is as large a decode as one body of its size. The element
// answers through its own ClientSink (Client), whose messages become events of in's response;
// End ends it.
func (in *Incoming) Element(body []byte, n int) (*Incoming, error) {
	x, s := in.x, in.x.s
	both := &struct {
		x request
		c ClientSink
	}{}
	y := &both.x
	*y = request{shared: x.shared, start: s.now(), requestID: x.requestID + "." + strconv.Itoa(n)}
	y.requestIDValue = []string{y.requestID}
	both.c = ClientSink{srv: s, ctx: x.ctx, requestID: y.requestID, el: &element{batch: x.client}}
	y.client = &both.c
	y.out = y.client
	y.in.body = body
	return &Incoming{x: y}, s.decodeBody(y)
}

// DecodeTurn waits for a turn at the decode gate for a decode of in's body the edge makes itself
// (a batch split into its messages), as stage decode waits for one for a body of that size: a
// large body's decode that took none would leave the gate bounding nothing. A small body takes
// none. leave gives the turn back; the error is the gate's refusal (503) or in's end.
func (in *Incoming) DecodeTurn() (leave func(), err error) {
	return in.x.s.decodes.enter(in.x.ctx, len(in.x.in.body))
}

// End ends an element (Element) once its answer is written, as a request sent alone ends: its
// admission is given back and its access log line and metrics are written.
func (in *Incoming) End() {
	in.x.client.finish()
	in.x.admitted.release()
	in.x.record()
}

// The element mode of a ClientSink: each method of ClientSink whose sink is an element's hands
// its work to one of these.

// header is the element's own header map.
func (e *element) headers() http.Header {
	if e.header == nil {
		e.header = http.Header{}
	}
	return e.header
}

// emit writes msg as an event of the batch's stream for the element c, and records that c's
// answer went out on a stream.
func (e *element) emit(c *ClientSink, msg []byte) error {
	c.sse = true
	return e.batch.Event(msg, nil)
}

// emitMsg is emit for a message assembled from parts.
func (e *element) emitMsg(c *ClientSink, p *outMsg) error {
	c.sse = true
	b := e.batch
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.sse {
		b.startSSE()
	}
	return b.writeEventParts(p, nil)
}

// last records how the element c ended (status and outcome) before its last message goes out.
// Only the element's goroutine touches c.
func (e *element) last(c *ClientSink, status int, outcome string) {
	c.status, c.outcome = status, outcome
}

// failed is the batch's Failed, read under its lock: the elements of a batch run concurrently,
// and any of them may be writing.
func (e *element) failed() error {
	b := e.batch
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.writeErr
}

// rpcError writes the gateway's error e for the element c: in-band, whatever its status (which
// the element's access log line keeps), since a batch answers each message on one stream.
func (el *element) rpcError(c *ClientSink, e *Error) error {
	el.last(c, e.Status, e.Outcome)
	for k, v := range e.Header {
		el.headers()[k] = v
	}
	if e.RPC == nil {
		return nil
	}
	return el.emit(c, jsonrpc.AppendError(nil, c.id, e.RPC))
}
