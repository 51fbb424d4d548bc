package pre2026

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/mcp-gateway/gateway/internal/era"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/mcpheader"
	"github.com/mcp-gateway/gateway/internal/outcome"
	"github.com/mcp-gateway/gateway/mcphttp"
)

// JSON-RPC batches (docs/protocol.md §9.7). MCP 2025-03-26, and only that revision, lets a POST
// carry an array of messages: requests and notifications, or responses (a client's answers to
// the gateway's requests), never both, and never initialize. The batch is authenticated once
// and its session opened once; each message is then an element (mcphttp.Incoming.Element):
// admitted (in-flight slots, rate limit), authorised, served and logged as if it had been sent
// alone, so a batch that mixes allowed and refused calls answers each. A batch with requests is
// answered with an SSE stream on which each response is written as soon as it is ready (the
// batch's responses are never held together; the TypeScript SDK's servers answer batches this
// way too), at most legacy.batchConcurrency messages being served at once. A batch of
// notifications or of answers only is answered 202.
//
// Refused whole, as one request (admitted once): a batch on a session of another version (400,
// -32600: those revisions require one message per POST), an empty one (400, -32600, as
// JSON-RPC 2.0 answers "[]"), one over legacy.maxBatchMessages or legacy.maxBatchBytes (413),
// one that mixes answers with requests, and one with Mcp-Method or Mcp-Name headers, which
// cannot mirror several messages (400, -32020).

// isBatch reports whether body is a JSON array, by its first byte that is not white space.
func isBatch(body []byte) bool {
	b := bytes.TrimLeft(body, " \t\r\n")
	return len(b) > 0 && b[0] == '['
}

// serveBatch serves a POST whose body is an array and reports whether it was the edge's: one of
// a pre-2026 client. Any other (a 2026-07-28 request's, say) keeps the refusal of stage decode.
func (e *Edge) serveBatch(in *mcphttp.Incoming) (bool, error) {
	class := classify("", nil, in.Header(), e.cfg.Versions)
	if class == classModern || (class == classNoVersion && !e.serves(era.V20250326)) {
		return false, nil
	}
	q := &clientReq{e: e, in: in, c: in.Client()}
	q.label()
	return true, q.inBand(q.batch(class))
}

// serves reports whether the edge negotiates version.
func (e *Edge) serves(version string) bool {
	for _, v := range e.cfg.Versions {
		if v == version {
			return true
		}
	}
	return false
}

// batchItem is one message of a batch: its Incoming, why it did not decode (nil when it did)
// and, for a client's answer, the answer.
type batchItem struct {
	in     *mcphttp.Incoming
	err    error
	answer *jsonrpc.Message
	dup    bool // a request whose id (as decoded) an earlier request of the batch has
	// cancelled: a request a notifications/cancelled later in the batch names, answered as
	// cancelled and never forwarded; ownCancel: a notifications/cancelled that names a request
	// of the batch, which cancelsInBatch has applied (or ignored) and nothing else does.
	cancelled, ownCancel bool
}

// batch serves a batch: authenticated and its session opened as one request, then each message
// on its own.
func (q *clientReq) batch(class class) error {
	if err := q.in.Authenticate(); err != nil {
		return err
	}
	sess, err := q.openSession(class)
	if err != nil || sess == nil {
		return err
	}
	q.sess, q.version = sess, sess.Version
	q.label()
	items, err := q.batchItems()
	if err != nil {
		// Refused whole: it counts as one request of the caller's.
		if aerr := q.in.Admit(); aerr != nil {
			return aerr
		}
		return err
	}
	requests, messages, answers := batchKinds(items)
	if answers > 0 && messages > 0 {
		if aerr := q.in.Admit(); aerr != nil {
			return aerr
		}
		return jsonrpc.NewError(jsonrpc.CodeInvalidRequest,
			"Invalid Request: a batch holds either requests and notifications, or responses, not both")
	}
	if answers > 0 {
		return q.batchAnswers(items)
	}
	return q.batchRequests(items, requests > 0)
}

// batchKinds counts a batch's requests, its requests and notifications, and its answers. An
// element that is no message at all is answered with its error: in a batch of answers as a
// refused answer, in any other as a request is.
func batchKinds(items []batchItem) (requests, messages, answers int) {
	for _, it := range items {
		switch m := it.in.Message(); {
		case it.answer != nil:
			answers++
		case m == nil:
			requests++
		case !m.IsNotification():
			requests++
			messages++
		default:
			messages++
		}
	}
	return requests, messages, answers
}

// batchItems checks the batch as a whole and decodes each of its messages.
func (q *clientReq) batchItems() ([]batchItem, error) {
	e := q.e
	if q.version != era.V20250326 {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "Invalid Request: JSON-RPC batches exist only in "+
			"MCP 2025-03-26; this session negotiated "+q.version+", which takes one message per POST")
	}
	h := q.in.Header()
	for name := range h {
		if name == mcpheader.Method || name == mcpheader.Name || strings.HasPrefix(name, mcpheader.ParamPrefix) ||
			mcpheader.ReadsAs(name) != "" {
			return nil, jsonrpc.NewError(jsonrpc.CodeHeaderMismatch,
				"Header mismatch: "+name+" cannot mirror the several messages of a batch")
		}
	}
	body := q.in.Body()
	if int64(len(body)) > e.cfg.MaxBatchBytes {
		return nil, batchTooLarge("the batch is larger than " + strconv.FormatInt(e.cfg.MaxBatchBytes, 10) + " bytes")
	}
	// Counted before anything is decoded: a body of a million tiny elements would otherwise cost
	// an allocation and a copy per element before it is refused.
	if countBatch(body, e.cfg.MaxBatchMessages) > e.cfg.MaxBatchMessages {
		return nil, batchTooLarge("the batch holds more than " + strconv.Itoa(e.cfg.MaxBatchMessages) + " messages")
	}
	// One turn at the decode gate for the whole batch, its messages' decodes included: their
	// sizes together are the body's.
	leave, err := q.in.DecodeTurn()
	if err != nil {
		return nil, err
	}
	defer leave()
	var raws []json.RawMessage
	if err := json.Unmarshal(body, &raws); err != nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeParseError, "Parse error: invalid JSON")
	}
	switch {
	case len(raws) == 0:
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "Invalid Request: the batch is empty")
	case len(raws) > e.cfg.MaxBatchMessages:
		return nil, batchTooLarge("the batch holds more than " + strconv.Itoa(e.cfg.MaxBatchMessages) + " messages")
	}
	items := make([]batchItem, len(raws))
	// ids: the index of the first request with each id.
	ids := map[string]int{}
	for i, raw := range raws {
		in, err := q.in.Element(raw, i+1)
		it := batchItem{in: in, err: err}
		if m := in.Message(); m != nil && m.ID != nil {
			id := batchID(m.ID)
			_, it.dup = ids[id]
			if !it.dup {
				ids[id] = i
			}
		} else if err != nil && m == nil {
			it.answer = in.Answer()
		}
		items[i] = it
	}
	cancelsInBatch(items, ids)
	return items, nil
}

// batchID is the key a request's id is compared under within a batch: as decoded ("b1" and
// "\u0062\u0031" are one id to a client, and to notifications/cancelled), as the
// cancellations of the session compare them.
func batchID(raw json.RawMessage) string {
	if id, ok := jsonrpc.CanonicalID(raw); ok {
		return id
	}
	return string(raw)
}

// cancelsInBatch applies the notifications/cancelled of a batch that name one of its own
// requests (ids: the index of the first request with each id), before anything of the batch is
// served, so that the outcome never depends on which of them is served first. MCP's cancel
// refers to a request sent earlier: one that names a request before it in the array cancels
// that request, which is answered as cancelled and never forwarded; one that names a request
// after it, which had not been sent when the cancel was, is ignored, as a cancel for an unknown
// request is. Neither reaches a request of another POST that has the same id (a client may not
// reuse an id in flight). A cancel that names no request of the batch goes to the session's
// running requests as one sent alone does.
func cancelsInBatch(items []batchItem, ids map[string]int) {
	for i := range items {
		m := items[i].in.Message()
		if items[i].err != nil || m == nil || !m.IsNotification() || m.Method != era.NotifCancelled {
			continue
		}
		id := cancelledID(m.Params)
		if len(id) == 0 {
			continue
		}
		at, ok := ids[batchID(id)]
		if !ok {
			continue
		}
		items[i].ownCancel = true
		if at < i && items[at].err == nil {
			items[at].cancelled = true
		}
	}
}

// countBatch counts the elements of the array body (a batch) without decoding them, reading no
// further once it has counted more than max: one for the first byte at the array's own level,
// and one per comma there, strings skipped. For a well-formed array it is the number of
// elements json.Unmarshal finds.
func countBatch(body []byte, max int) int {
	n, depth := 0, 0
	for i := 0; i < len(body) && n <= max; i++ {
		c := body[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			continue
		case depth == 1 && n == 0 && c != ']':
			n = 1 // the first element starts here
		}
		switch c {
		case '"':
			for i++; i < len(body) && body[i] != '"'; i++ {
				if body[i] == '\\' {
					i++
				}
			}
		case '[', '{':
			depth++
		case ']', '}':
			depth--
		case ',':
			if depth == 1 {
				n++
			}
		}
	}
	return n
}

// batchTooLarge is the refusal of a batch over the edge's bounds.
func batchTooLarge(why string) error {
	return &mcphttp.Error{Status: http.StatusRequestEntityTooLarge, Outcome: outcome.ClientError,
		RPC: jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "Invalid Request: "+why)}
}

// element is the clientReq of one message of the batch.
func (q *clientReq) element(it batchItem) *clientReq {
	eq := &clientReq{e: q.e, in: it.in, c: it.in.Client(), msg: it.in.Message(), p: it.in.Params(),
		sess: q.sess, version: q.version}
	eq.label()
	return eq
}

// batchRequests serves a batch of requests and notifications: each admitted and served on its
// own, the responses written on one SSE stream as they come (202 when there is none to write).
func (q *clientReq) batchRequests(items []batchItem, stream bool) error {
	if stream {
		// The stream starts at once: the responses follow as each is ready.
		if err := q.c.Comment(); err != nil {
			return err
		}
		q.c.KeepAlive(true)
	}
	// The batch's deadline bounds its requests, those waiting for a turn and those running.
	// What reaches no backend is served after it all the same: a notification (one that
	// cancels a call must not be lost) and a message refused for what it is (its own error
	// says more than the deadline's).
	ctx, cancel := context.WithTimeoutCause(q.in.Context(), q.e.cfg.BatchTimeout, errBatchDeadline)
	defer cancel()
	sem := make(chan struct{}, max(q.e.cfg.BatchConcurrency, 1))
	var wg sync.WaitGroup
	for _, it := range items {
		eq := q.element(it)
		notification := eq.msg != nil && eq.msg.IsNotification()
		if !notification {
			eq.in.Bound(ctx)
		}
		if !takeTurn(ctx, sem) {
			if !notification && eq.msg != nil && it.err == nil && !it.dup && !it.cancelled {
				eq.notServed()
				continue
			}
			sem <- struct{}{}
		}
		wg.Go(func() {
			defer func() { <-sem }()
			eq.serveElement(it)
		})
	}
	wg.Wait()
	if !stream {
		q.c.Accepted()
		return nil
	}
	q.c.SetOutcome(outcome.OK)
	return nil
}

// errBatchDeadline is the cause of a batch's context once legacy.batchTimeout has passed.
var errBatchDeadline = errors.New("the batch's deadline passed")

// takeTurn waits for a place among the batch's messages served at once and reports whether it
// got one before ctx, the batch's deadline, ended.
func takeTurn(ctx context.Context, sem chan struct{}) bool {
	if ctx.Err() != nil {
		return false
	}
	select {
	case sem <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

// notServed answers a request of a batch whose turn had not come when the batch's deadline
// passed: it was sent to no backend, so the client may send it again.
func (q *clientReq) notServed() {
	defer q.in.End()
	if err := q.inBand(batchDeadlineError(false)); err != nil && !mcphttp.IsClientWrite(err) {
		_ = q.c.Error(mcphttp.MapError(err))
	}
}

// batchDeadlineError is the error of a batch's request cut by its deadline: ran says whether
// it had been sent (then it may or may not have run at the backend) or waited for its turn.
func batchDeadlineError(ran bool) error {
	msg := "The batch's deadline (legacy.batchTimeout) passed before this request's turn: it was not sent to any backend"
	if ran {
		msg = "The batch's deadline (legacy.batchTimeout) passed while this request ran: it was cancelled, and may or may not have run at the backend"
	}
	return &mcphttp.Error{Status: http.StatusGatewayTimeout, Outcome: outcome.Timeout,
		RPC: jsonrpc.NewError(jsonrpc.CodeUpstreamTimeout, msg)}
}

// serveElement serves one request or notification of a batch and ends it: what it answers goes
// in-band on the batch's stream, whatever status it would have had alone.
func (q *clientReq) serveElement(it batchItem) {
	defer q.in.End()
	defer func() {
		if p := recover(); p != nil {
			q.e.log.Error("panic serving a message of a batch", "request_id", q.in.RequestID(), "panic", p)
			_ = q.c.Error(mcphttp.MapError(errors.New("panic")))
		}
	}()
	if q.msg != nil && q.msg.IsNotification() && it.err != nil {
		// A notification is never answered, not even with its error.
		q.c.SetOutcome(outcome.ClientError)
		return
	}
	var err error
	if q.msg == nil {
		// Not a message: its error carries the id it has, if one could be read, as the
		// refusal of a body that does not decode does.
		err = it.err
	} else {
		err = q.serveOne(it)
		if err != nil && errors.Is(context.Cause(q.in.Context()), errBatchDeadline) {
			err = batchDeadlineError(true)
		}
		err = q.inBand(err)
	}
	if err != nil && !mcphttp.IsClientWrite(err) {
		_ = q.c.Error(mcphttp.MapError(err))
	}
}

// serveOne serves one message of a batch as if it had been sent alone on the batch's session.
func (q *clientReq) serveOne(it batchItem) error {
	switch {
	case it.err != nil:
		return it.err // params that did not decode
	case it.dup:
		return jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "Invalid Request: another request of this batch has the same id")
	case it.cancelled:
		// Cancelled by a later message of its batch (cancelsInBatch): answered as a request
		// cancelled by its client is, and never forwarded.
		return q.c.JSON(http.StatusOK, jsonrpc.AppendError(nil, q.msg.ID, cancelledByClient()), outcome.Canceled)
	}
	if err := q.in.Admit(); err != nil {
		return err
	}
	switch {
	case q.msg.Method == era.MethodInitialize:
		return jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "Invalid Request: initialize must not be part of a JSON-RPC batch")
	case q.msg.IsNotification() && it.ownCancel:
		q.c.Accepted() // applied to the batch's own request already (cancelsInBatch)
		return nil
	case q.msg.IsNotification():
		q.notification()
		return nil
	}
	return q.request()
}

// batchAnswers delivers a batch of the client's answers, each admitted and delivered on its own:
// 202 when every one was, else the refusal of the most final one (an answer nobody waits for
// before a busy or unavailable store), the others having been delivered.
func (q *clientReq) batchAnswers(items []batchItem) error {
	var refused []error
	for _, it := range items {
		eq := q.element(it)
		err := it.err
		if it.answer != nil {
			if err = eq.admitAnswer(it.answer); err == nil {
				err = eq.deliver(it.answer)
			}
		}
		if err != nil {
			eq.c.SetOutcome(mcphttp.MapError(err).Outcome)
			refused = append(refused, err)
		}
		eq.in.End()
	}
	if len(refused) == 0 {
		q.c.Accepted()
		return nil
	}
	worst := refused[0]
	for _, err := range refused {
		if mcphttp.MapError(err).Status == http.StatusBadRequest {
			worst = err
			break
		}
	}
	return worst
}

// admitAnswer admits one answer of a batch, whose session is open: without an in-flight slot
// when it names a request still waiting (clientReq.admit says why).
func (q *clientReq) admitAnswer(answer *jsonrpc.Message) error {
	if q.e.asks.answerable(q.sess, answer) {
		return q.in.AdmitAnswer()
	}
	return q.in.Admit()
}
