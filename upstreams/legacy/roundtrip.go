package legacy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/mcp-gateway/gateway/internal/bodyread"
	"github.com/mcp-gateway/gateway/internal/era"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/mcpheader"
	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
)

// Do sends one HTTP request on session s: a POST of body, or a GET stream (body nil) resuming
// after lastEventID when set.
func (br *Bridge) Do(ctx context.Context, s *Session, method string, body []byte, pass http.Header, lastEventID string) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	// Classify then knows whether the transport got a connection (a TLS handshake may fail
	// in ways the error alone does not tell from a failure after the request was written).
	ctx = wire.WatchConnect(ctx)
	req, err := http.NewRequestWithContext(ctx, method, br.be.URL(), rd)
	if err != nil {
		return nil, br.errorf(wire.ErrUnavailable, "building request: %v", err)
	}
	req.Header = br.header(s, pass)
	if body == nil {
		req.Header.Del("Content-Type")
		req.Header.Set("Accept", "text/event-stream")
	}
	if lastEventID != "" {
		req.Header.Set(mcpheader.LastEventID, lastEventID)
	}
	if br.be.HasCredentials() {
		auth, err := br.auth(ctx, s)
		if err != nil {
			if !errors.Is(err, wire.ErrUnavailable) {
				err = wire.Classify(ctx, br.be.Name(), err)
			}
			return nil, err
		}
		req.Header.Set("Authorization", auth)
	}
	resp, err := br.be.Client().Do(req)
	if err != nil {
		return nil, wire.Classify(ctx, br.be.Name(), err)
	}
	if resp.StatusCode == http.StatusTooManyRequests {
		// Throttled, on any request of a session: an answer, never a broken backend.
		return nil, wire.RateLimited(br.be.Name(), resp, br.now())
	}
	return resp, nil
}

// auth returns the Authorization of a request on session s: a session of the gateway
// authenticates as the gateway, a session of one caller with that caller's exchanged token, from
// the subject the request's ctx carries. A caller's request on a gateway session, or a request
// without the caller on a caller's session, fails closed.
func (br *Bridge) auth(ctx context.Context, s *Session) (string, error) {
	c, fromCaller := ctx.Value(callerKey{}).(caller)
	if fromCaller != s.caller {
		return "", fmt.Errorf("%w: %w: %s: a legacy session is used only by the identity it was opened for",
			wire.ErrUnavailable, wire.ErrCredentials, br.be.Name())
	}
	return br.be.Authorization(ctx, c.subject, c.key, fromCaller)
}

// callerKey is the context key of the caller's token for a token-exchange legacy backend.
type callerKey struct{}

// caller is what WithCaller puts in a context.
type caller struct{ subject, key string }

// WithCaller marks ctx as a caller's request to a token-exchange legacy backend: the requests
// made under it (the call, its handshake, answers to the backend's requests, resumes and
// cancellations) exchange subject, the caller's verified token, which is never sent itself.
// key is the digest that keys what the backend answered for subject (its exchanged token),
// when the caller computed it once for its request, else "" (Backend.Authorization).
func WithCaller(ctx context.Context, subject, key string) context.Context {
	return context.WithValue(ctx, callerKey{}, caller{subject, key})
}

// RoundTrip is one request on a legacy session and its response, read as JSON or as an SSE
// stream that may be resumed.
type RoundTrip struct {
	br   *Bridge
	sess *Session
	pool *Pool           // where sess came from, when the round trip holds it (Start)
	give func()          // hands back the caller's pool holding pool, for a token-exchange backend
	uid  json.RawMessage // the request's id on the session
	resp *http.Response
	sse  *sseStream
	json *jsonrpc.Message // the response, when it came as JSON
	// budget is charged for what the response holds until Free (Start's budget): set for a
	// caller's request (Start), whose response is relayed; a side request's (Bridge.Request)
	// is read and let go by the gateway itself.
	budget   *bodyread.Budget
	body     *bodyread.Buffer // the JSON response's bytes, charged until Free
	freed    bool             // Free has given back what sse holds
	resumes  int
	answered bool // the response to the request has been read
	// logged counts the backend's requests mid-call logged as refused, unanswered or not
	// delivered: at most maxAskLogs a round trip (logAsk).
	logged   int
	logs     bool   // relay notifications/message: the client's request asked for logs
	logLevel string // the least severe level relayed
	// asks counts the backend's requests answered (maxAsks), since asksFrom on a GET stream
	// (stream: Events), whose bound is per asksWindow.
	asks     int
	asksFrom time.Time
	stream   bool
	// refused: the round trip was given up for the backend's requests (maxAsks) before its
	// response, so End tells the backend its call is cancelled.
	refused bool
}

// Start sends req on a session of pool: a 404 to a request carrying a session id means the
// session expired
// (https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#session-management):
// the session is dropped, a fresh one initialized, and the request sent once more. give, when
// set, hands back the caller's pool (Bridge.CallerPool) once the round trip is released, or at
// once when Start fails. budget is what the response is charged to (a share of
// Backend.Results, for one caller's responses); nil charges Backend.Results.
func (br *Bridge) Start(ctx context.Context, pool *Pool, give func(), req *era.Request, pass http.Header, budget *bodyread.Budget) (*RoundTrip, error) {
	if budget == nil {
		budget = br.be.Results()
	}
	for attempt := 0; ; attempt++ {
		sess, err := pool.acquire(ctx, br)
		if err != nil {
			if give != nil {
				give()
			}
			return nil, err
		}
		if req.Logs {
			br.setLevel(ctx, sess)
		}
		x := &RoundTrip{br: br, sess: sess, pool: pool, give: give, uid: sess.nextID(), logs: req.Logs, logLevel: req.LogLevel,
			budget: budget}
		resp, err := br.Do(ctx, sess, http.MethodPost, requestBody(x.uid, req.Method, req.Params), pass, "")
		if err != nil {
			if ctx.Err() != nil {
				x.End(ctx, abandoned(err)) // the request may have reached the backend
			}
			x.Release()
			return nil, err
		}
		if resp.StatusCode == http.StatusNotFound && sess.id != "" && attempt == 0 {
			DrainClose(resp.Body)
			pool.drop(sess)
			pool.release(sess)
			br.log.Info("legacy upstream session expired; initializing a new one", "upstream", br.be.Name())
			continue
		}
		if err := x.accept(resp); err != nil {
			x.Close()
			x.Free()
			x.Release()
			return nil, br.ReadErr(ctx, err)
		}
		return x, nil
	}
}

// Abandon says why a caller left a round trip before its response, for End.
type Abandon int

// Reasons to abandon a round trip.
const (
	// NotAbandoned: the response was read, or the request failed for a reason of the backend's.
	NotAbandoned Abandon = iota
	// ClientLeft: the caller went away.
	ClientLeft
	// TimedOut: the gateway's timeout for the backend passed.
	TimedOut
)

// abandoned tells from a request's error whether the caller left or timed out.
func abandoned(err error) Abandon {
	switch {
	case errors.Is(err, wire.ErrTimeout):
		return TimedOut
	case errors.Is(err, wire.ErrUnavailable), errors.Is(err, wire.ErrBadResponse), errors.Is(err, wire.ErrRateLimited):
		return NotAbandoned
	}
	return ClientLeft
}

// SSE reports whether the response is an event stream.
func (x *RoundTrip) SSE() bool { return x.sse != nil }

// Response is the HTTP response being read: a resumed stream has a new one.
func (x *RoundTrip) Response() *http.Response { return x.resp }

// Logs reports whether the client's request asked for log notifications.
func (x *RoundTrip) Logs() bool { return x.logs }

// LogWanted reports whether a notifications/message with params is for this round trip: it
// asked for logs, at this message's level or a less severe one.
func (x *RoundTrip) LogWanted(params json.RawMessage) bool {
	return x.logs && era.LogAtLeast(params, x.logLevel)
}

// setLevel asks the backend, once per session, to log everything: a pre-2026 server sends
// notifications/message only at the level set on its session, which is shared by requests
// asking for different levels, so the gateway takes every message and keeps each request's
// own. The session counts as leveled only once the backend answered (either way): a request
// that arrives meanwhile asks too (the level is idempotent) rather than going on before the
// level is set and missing its logs, and a request cancelled while asking leaves it to the next.
// Logs are best effort: a backend that refuses is not asked again and the call goes on.
func (br *Bridge) setLevel(ctx context.Context, s *Session) {
	if s.leveled.Load() {
		return
	}
	_, _, err := br.Request(ctx, s, "logging/setLevel", json.RawMessage(`{"level":"debug"}`), nil)
	if err != nil && ctx.Err() != nil {
		return
	}
	s.leveled.Store(true)
	if err != nil {
		br.log.Debug("legacy upstream did not take logging/setLevel", "upstream", br.be.Name(), "error", err)
	}
}

// accept takes the POST response: an SSE stream, or a JSON body read at once.
func (x *RoundTrip) accept(resp *http.Response) error {
	x.resp = resp
	isJSON, isSSE := wire.MediaType(resp.Header.Get("Content-Type"))
	max := x.br.be.MaxBytes()
	switch {
	case isSSE && resp.StatusCode/100 == 2:
		// What the stream's events hold is charged to the replica's budget of response bytes
		// in flight until Free, as a 2026-07-28 backend's stream is: a caller that does not
		// read its result, or a client asked for input that does not answer, keeps it.
		x.sse = newSSEStream(resp.Body, int(max))
		x.sse.Budget = x.budget
		return nil
	case isJSON:
		buf, err := bodyread.ReadSized(resp.Body, max, resp.ContentLength, x.budget)
		if errors.Is(err, bodyread.ErrTooLarge) {
			err = wire.ErrTooLarge
		}
		if err != nil {
			return err
		}
		x.body = buf
		m, err := wire.DecodeResponse(x.br.be.Name(), resp.StatusCode, buf.B, max, x.uid)
		if err != nil {
			return err
		}
		x.json = m
		return nil
	}
	return wire.StatusError(x.br.be.Name(), resp.StatusCode, "neither JSON nor an event stream")
}

// Next returns the next message for the caller: a notification, or the response. Requests
// from the backend are answered here; a stream that ends early after an event id is resumed
// (SEP-1699). Errors are raw: the caller classifies them (Bridge.ReadErr).
func (x *RoundTrip) Next(ctx context.Context) (*jsonrpc.Message, error) {
	if x.json != nil {
		m := x.json
		x.json, x.answered = nil, true
		return m, nil
	}
	if x.sse == nil || x.answered {
		return nil, io.EOF
	}
	for range maxSkipped {
		data, err := x.sse.Next()
		if err != nil {
			if !x.resumable(ctx, err) {
				return nil, err
			}
			if err := x.resume(ctx); err != nil {
				return nil, err
			}
			continue
		}
		m, err := jsonrpc.DecodeMessage(data, wire.JSONLimits(x.br.be.MaxBytes()))
		switch {
		case err != nil:
			return nil, x.br.errorf(wire.ErrBadResponse, "event is not a JSON-RPC message")
		case m.IsResponse():
			// An answer under another id is not this request's and is skipped; an error
			// with a null id (the backend could not read the request's) ends it.
			if m.Answers(x.uid) {
				x.answered = true
				return m, nil
			}
		case m.ID != nil:
			if err := x.Answer(ctx, m); err != nil {
				return nil, err
			}
		case m.Method != era.NotifElicitationDone: // dropped: 2026-07-28 has no such notification
			return m, nil
		}
	}
	return nil, x.br.errorf(wire.ErrBadResponse, "too many messages before the response")
}

// resumable reports whether a stream that stopped with err may be resumed: it ended or broke
// after an event id, the caller is still there, and the resume budget is not spent.
func (x *RoundTrip) resumable(ctx context.Context, err error) bool {
	return x.sse.lastID != "" && ctx.Err() == nil && x.resumes < maxResumes &&
		!errors.Is(err, wire.ErrEventTooLarge)
}

// resume reconnects with GET and Last-Event-ID after the backend's retry delay (SEP-1699
// polling, https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#resumability-and-redelivery).
func (x *RoundTrip) resume(ctx context.Context) error {
	x.resumes++
	x.resp.Body.Close()
	if d := min(x.sse.retry, maxResumeDelay); d > 0 {
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return wire.Classify(ctx, x.br.be.Name(), ctx.Err())
		case <-t.C:
		}
	}
	resp, err := x.br.Do(ctx, x.sess, http.MethodGet, nil, nil, x.sse.lastID)
	if err != nil {
		return err
	}
	x.resp = resp
	if _, isSSE := wire.MediaType(resp.Header.Get("Content-Type")); !isSSE || resp.StatusCode/100 != 2 {
		return wire.StatusError(x.br.be.Name(), resp.StatusCode, "resuming the response stream failed")
	}
	x.sse.reset(resp.Body)
	return nil
}

// Answer replies to a request the backend sent on a stream: ping gets {}; elicitation,
// sampling and roots go to the client through the call's ClientRequests (WithClientRequests)
// when it has one, and are refused when it has none (a 2026-07-28 client cannot be asked
// anything mid-call); anything else is an unknown method. A failed reply is logged: the
// backend decides what its request's failure means for the call. Past maxAsks requests nothing
// is answered any more: Answer returns ErrTooManyAsks, which ends the round trip (and End then
// tells the backend its call is cancelled).
func (x *RoundTrip) Answer(ctx context.Context, m *jsonrpc.Message) error {
	if err := x.countAsk(); err != nil {
		return err
	}
	var reply []byte
	switch {
	case m.Method == era.MethodPing:
		reply = jsonrpc.AppendResult(nil, m.ID, json.RawMessage(`{}`))
	case era.IsClientRequest(m.Method):
		reply = x.relay(ctx, m)
	default:
		reply = jsonrpc.AppendError(nil, m.ID, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "Method not found"))
	}
	if ctx.Err() != nil {
		// The caller left while the client was asked: the stream ends, and End tells the
		// backend its call is cancelled.
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, sideTimeout)
	defer cancel()
	resp, err := x.br.Do(ctx, x.sess, http.MethodPost, reply, nil, "")
	if err == nil {
		DrainClose(resp.Body)
		if resp.StatusCode/100 != 2 {
			err = fmt.Errorf("HTTP %d", resp.StatusCode)
		}
	}
	if err != nil {
		x.logAsk(ctx, slog.LevelWarn, "answering a legacy upstream request failed", "method", m.Method, "error", err.Error())
	}
	return nil
}

// ErrTooManyAsks is the error of a call whose backend sent more than maxAsks requests of its
// own: the gateway stops answering them, and the call ends with it rather than going on. It
// is a wire.ErrBadResponse, and says what happened to the client in a JSON-RPC error of its
// own.
var ErrTooManyAsks = fmt.Errorf("%w: %w", wire.ErrBadResponse, jsonrpc.NewError(jsonrpc.CodeUpstreamUnavailable,
	fmt.Sprintf("Backend sent more than %d requests of its own during one call; the gateway cancelled the call", maxAsks)))

// countAsk counts one request of the backend's to be answered, or returns an error when it is
// one too many (maxAsks): ErrTooManyAsks in a call, a bad response on a GET stream.
func (x *RoundTrip) countAsk() error {
	if x.stream {
		if now := x.br.now(); now.Sub(x.asksFrom) >= asksWindow {
			x.asks, x.asksFrom = 0, now
		}
	}
	if x.asks++; x.asks <= maxAsks {
		return nil
	}
	x.refused = true
	if x.stream {
		return fmt.Errorf("%w: %s: more than %d requests within %v on the GET stream", wire.ErrBadResponse, x.br.be.Name(), maxAsks, asksWindow)
	}
	return fmt.Errorf("%w: %s", ErrTooManyAsks, x.br.be.Name())
}

// maxAskLogs bounds the log lines of one round trip about the backend's requests mid-call: a
// backend may send thousands before its response (maxSkipped), each refused or answered by a
// request of the gateway's, and must not make as many log lines of one call.
const maxAskLogs = 4

// logAsk logs what became of a backend's request mid-call, for the first maxAskLogs of the
// round trip; the last one logged says that more are not.
func (x *RoundTrip) logAsk(ctx context.Context, level slog.Level, msg string, args ...any) {
	if x.logged >= maxAskLogs {
		return
	}
	x.logged++
	args = append(args, "upstream", x.br.be.Name())
	if x.logged == maxAskLogs {
		args = append(args, "more", "the backend's further requests in this call are not logged")
	}
	x.br.log.Log(ctx, level, msg, args...)
}

// relay answers a backend's elicitation, sampling or roots request with what the call's client
// said, or refuses it when the call has no client that can be asked.
func (x *RoundTrip) relay(ctx context.Context, m *jsonrpc.Message) []byte {
	ask := ClientRequestsOf(ctx)
	if ask == nil {
		x.logAsk(ctx, slog.LevelWarn, "legacy upstream request refused: the client cannot be asked mid-call", "method", m.Method)
		return jsonrpc.AppendError(nil, m.ID, jsonrpc.NewError(jsonrpc.CodeMethodNotFound,
			m.Method+" is not supported through the gateway for this client"))
	}
	res, err := ask(ctx, m.Method, m.Params)
	if err == nil {
		return jsonrpc.AppendResult(nil, m.ID, res)
	}
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) {
		rpcErr = jsonrpc.NewError(jsonrpc.CodeInternalError, "the client could not be asked")
	}
	x.logAsk(ctx, slog.LevelInfo, "legacy upstream request not answered by the client", "method", m.Method, "code", rpcErr.Code)
	return jsonrpc.AppendError(nil, m.ID, rpcErr)
}

// End ends the round trip. A caller that left before the response (why) is a cancellation the
// backend must be told about: closing a legacy stream is not one
// (https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/cancellation), and so is a call the gateway gave up for the backend's requests (maxAsks).
func (x *RoundTrip) End(ctx context.Context, why Abandon) {
	x.Close()
	if x.answered || (why == NotAbandoned && !x.refused) {
		return
	}
	reason := "the client went away"
	switch {
	case x.refused:
		reason = fmt.Sprintf("the backend sent more than %d requests of its own during the call", maxAsks)
	case why == TimedOut:
		reason = "the gateway's timeout for this backend passed"
	}
	p := append([]byte(`{"requestId":`), x.uid...)
	p = jsonrpc.AppendString(append(p, `,"reason":`...), reason)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sideTimeout)
	defer cancel()
	if err := x.br.notify(ctx, x.sess, era.NotifCancelled, append(p, '}')); err != nil {
		x.br.log.Warn("sending notifications/cancelled to a legacy upstream failed",
			"upstream", x.br.be.Name(), "error", err.Error())
	}
}

// Close closes the response body.
func (x *RoundTrip) Close() {
	if x.resp != nil {
		x.resp.Body.Close()
	}
}

// Free gives back what the round trip's response holds of the replica's budget of response
// bytes in flight (Backend.Results), once its caller has let go of everything read from it.
// Nothing may be read after it; a second call frees nothing.
func (x *RoundTrip) Free() {
	x.body.Release()
	x.body = nil
	if x.sse != nil && !x.freed {
		x.sse.Release()
		x.freed = true
	}
}

// Release gives the session (and the caller's pool) back; once only, from Start's failures or
// when the caller is done with the round trip.
func (x *RoundTrip) Release() {
	if x.pool != nil {
		x.pool.release(x.sess)
		x.pool = nil
	}
	if x.give != nil {
		x.give()
		x.give = nil
	}
}

// Events returns the round trip that reads resp, the GET stream of session s, event by event
// (Event), answering nothing by itself. What its events hold is charged to budget (nil: none)
// as they are read, until Free; an event that does not fit ends the stream with
// bodyread.ErrBudget.
func (br *Bridge) Events(s *Session, resp *http.Response, budget *bodyread.Budget) *RoundTrip {
	x := &RoundTrip{br: br, sess: s, resp: resp, sse: newSSEStream(resp.Body, int(br.be.MaxBytes())), stream: true}
	x.sse.Budget = budget
	return x
}

// Event returns the data of the next event of a GET stream (Events).
func (x *RoundTrip) Event() ([]byte, error) { return x.sse.Next() }
