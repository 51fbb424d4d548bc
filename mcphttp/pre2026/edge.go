// Package pre2026 serves MCP clients of the 2025 revisions (2025-11-25, 2025-06-18 and
// 2025-03-26, with its JSON-RPC batches: batch.go) on the gateway's endpoint, beside 2026-07-28
// clients, from any replica and without sticky sessions (docs/protocol.md §9). It is a client of the pipeline of package mcphttp: the HTTP edge hands
// it each request of its era right after the strict decode; it authenticates and admits it with
// the pipeline's own stages, answers at the edge what 2026-07-28 has no method for (initialize,
// ping, logging/setLevel, resources/subscribe, notifications, its client's answers), and runs
// everything else through the pipeline as a 2026-07-28 request it builds directly, with a Sink of
// its own (sink.go) that writes the 2025 shape once.
//
// Words: a "session" here is a pre-2026 client's sealed Mcp-Session-Id (internal/legacysession),
// never a session with a backend (upstreams/legacy); an "ask" is a request the gateway writes to
// its client on the client's POST stream (elicitation, sampling, roots) whose answer may be
// POSTed to any replica (asks.go); a "backend request" is such a request a pre-2026 backend sends
// in the middle of a call, relayed to the client the same way (backendrequests.go).
package pre2026

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/mcp-gateway/gateway/internal/era"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/legacysession"
	"github.com/mcp-gateway/gateway/internal/mcpheader"
	"github.com/mcp-gateway/gateway/internal/outcome"
	"github.com/mcp-gateway/gateway/internal/seal"
	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/mcphttp"
	"github.com/mcp-gateway/gateway/metrics"
)

// Deps are what the edge needs besides its configuration.
type Deps struct {
	// Keys is the sealing key ring: session ids, answer ids and the sessions' stored state
	// are sealed under keys of their own purpose derived from it. Required.
	Keys *seal.KeyRing
	// Notices carries a client's answers and cancellations to the replica that waits for
	// them, and tells replicas of a session's changed state; nil with a single replica.
	Notices store.Notices
	// State keeps what a session sets (its log level, its resource subscriptions) where every
	// replica reads it; nil keeps it in this process (one replica).
	State StateStore
	// Metrics records the edge's metrics; nil records nothing.
	Metrics *metrics.Recorder
	// Logger receives the edge's warnings. Required.
	Logger *slog.Logger
	// Clock returns the current time; default time.Now.
	Clock func() time.Time
}

// Edge serves pre-2026 clients: an mcphttp.EraEdge.
type Edge struct {
	cfg      Config
	sessions *legacysession.Codec
	// state keeps what a session sets for its later requests in the shared store (state.go).
	state *sessionState
	// asks carries the gateway's requests to a client and their answers and cancellations
	// between replicas (asks.go).
	asks    *asks
	log     *slog.Logger
	metrics *metrics.Recorder
	now     func() time.Time
	// getRetry, when positive, is the reconnection delay a GET stream's event id asks of its
	// client (the SSE retry field); none is asked otherwise, and clients keep their own backoff
	// and its jitter, which spreads the reconnections of the streams a drain ends together.
	// Tests set it, so that a client reconnects at once.
	getRetry time.Duration
}

var _ mcphttp.EraEdge = (*Edge)(nil)

// New builds the edge from validated configuration (cfg with its defaults).
func New(cfg Config, d Deps) (*Edge, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if d.Keys == nil || d.Logger == nil {
		return nil, errors.New("pre2026: Keys and Logger are required")
	}
	if d.Clock == nil {
		d.Clock = time.Now
	}
	state, err := newSessionState(d.State, d.Keys, d.Notices, d.Logger, d.Clock, d.Metrics.LegacyLevelEviction)
	if err != nil {
		return nil, err
	}
	e := &Edge{
		cfg:      cfg,
		sessions: legacysession.New(d.Keys, cfg.SessionTTL, d.Clock),
		state:    state,
		log:      d.Logger,
		metrics:  d.Metrics,
		now:      d.Clock,
	}
	// Answer ids are sealed under a key of their own purpose; d.Notices (nil with one replica)
	// hands an answer to the replica that waits for it.
	e.asks = newAsks(asksConfig{Timeout: cfg.AskTimeout, MaxPendingPerSession: cfg.MaxPendingPerSession,
		MaxPendingPerCaller: cfg.MaxPendingPerCaller},
		d.Keys, d.Notices, d.Metrics, d.Clock)
	return e, nil
}

// Start subscribes to the notices through which replicas hand clients' answers and
// cancellations to each other and tell each other of a session's new log level or
// subscriptions, until ctx ends. Without it a single replica still serves everything.
func (e *Edge) Start(ctx context.Context) {
	e.asks.start(ctx)
	e.state.start(ctx)
}

// Versions are the pre-2026 revisions the edge negotiates (legacy.versions), newest first.
func (e *Edge) Versions() []string { return slices.Clone(e.cfg.Versions) }

// clientReq is one pre-2026 request as the edge serves it.
type clientReq struct {
	e  *Edge
	in *mcphttp.Incoming
	c  *mcphttp.ClientSink
	// msg and p are the decoded request and its params; msg is nil for a client's answer.
	msg *jsonrpc.Request
	p   *jsonrpc.Params
	// sess is the session the request belongs to, once opened (a stand-in for a session-less
	// request); version the negotiated version.
	sess    *legacysession.Session
	version string
	// logLevel is the session's logging/setLevel level its translated request asks the
	// backend for and relays from ("" for none).
	logLevel string
	// relayed counts the requests a pre-2026 backend sent in the middle of this call and the
	// edge relayed to the client (backendRequests), at most legacy.maxRounds.
	// A plain int32 (atomic.AddInt32): the struct is copied (a subscription's probe read).
	relayed int32
}

// ServePost serves a POST of a pre-2026 client and reports true; any other POST is left to the
// 2026-07-28 pipeline, decodeErr included, exactly as before. A JSON-RPC response (the client's
// answer to one of the gateway's requests), which the strict decode refuses, is read here.
func (e *Edge) ServePost(in *mcphttp.Incoming, decodeErr error) (bool, error) {
	if decodeErr != nil && isBatch(in.Body()) {
		return e.serveBatch(in)
	}
	served := e.cfg.Versions
	q := &clientReq{e: e, in: in, c: in.Client(), msg: in.Message(), p: in.Params()}
	var answer *jsonrpc.Message
	var class class
	switch {
	case decodeErr != nil && q.msg != nil:
		// The message decoded but its params did not (a _meta key of the wrong type): a
		// pre-2026 client gets the error in-band, as any invalid params.
		class = classify(q.msg.Method, nil, in.Header(), served)
		if !class.pre2026() {
			return false, nil
		}
		q.label()
		var rpc *jsonrpc.Error
		if !errors.As(decodeErr, &rpc) || rpc.Code != jsonrpc.CodeInvalidParams {
			return true, decodeErr
		}
		return true, q.rpcError(rpc)
	case decodeErr != nil:
		// The response the body is, read by the one strict decode that refused it only for
		// being one (Incoming.Answer): never decoded again here.
		m := in.Answer()
		if m == nil && !isResponseRefusal(decodeErr) {
			return false, nil
		}
		if class = classify("", nil, in.Header(), served); class != classSession && class != classSessionless {
			return false, nil
		}
		if m == nil {
			// A 2025 client does send responses: it is told what this one lacks, never
			// that clients must not send them.
			q.label()
			return true, errUnreadableAnswer
		}
		answer = m
	default:
		class = classify(q.msg.Method, in.Meta(), in.Header(), served)
	}
	if class == classModern || (class == classNoVersion && answer == nil && q.msg.IsNotification()) {
		// A notification without a session or version is accepted (202) as it always was.
		return false, nil
	}
	q.label()
	return true, q.inBand(q.serve(class, answer))
}

// errUnreadableAnswer is the refusal of a pre-2026 client's response that is not one the gateway
// can read as an answer: a result that is not an object, an error that is not one, or both.
var errUnreadableAnswer = jsonrpc.NewError(jsonrpc.CodeInvalidRequest, `Invalid Request: this answer cannot be read: `+
	`a response needs a "result" object or an "error" object with a "code" and a "message", not both`)

// isResponseRefusal reports whether the strict decode refused the body for being a response.
func isResponseRefusal(decodeErr error) bool {
	var rpc *jsonrpc.Error
	return errors.As(decodeErr, &rpc) && rpc.Code == jsonrpc.CodeInvalidRequest &&
		rpc.Message == "Invalid Request: clients must not send responses"
}

// label tells the access log and the metrics the request is a pre-2026 one.
func (q *clientReq) label() {
	session := ""
	if q.sess != nil && sessionBound(q.sess) {
		session = q.sess.LogKey() // never the session id itself
	}
	q.in.SetEra(q.version, session)
}

// serve serves a pre-2026 request: authenticated first, exactly like any request (a 401
// challenge is what starts a pre-2026 client's OAuth discovery), then admitted (every request
// counts against the caller's slots and rate limit, whatever the edge does with it), then the
// handshake, or the session opened against this request's principal.
func (q *clientReq) serve(class class, answer *jsonrpc.Message) error {
	if class == classNoVersion && !q.e.serves(era.V20250326) {
		// 2025-03-26, which a missing header means (2025-06-18 transports), is not served.
		return jsonrpc.NewError(jsonrpc.CodeInvalidRequest,
			"Invalid Request: MCP-Protocol-Version header required (this gateway serves "+q.e.servedVersions()+")")
	}
	if err := q.in.Authenticate(); err != nil {
		return err
	}
	if err := q.admit(class, answer); err != nil {
		return err
	}
	if class == classInitialize {
		return q.initialize()
	}
	sess, err := q.openSession(class)
	if err != nil || sess == nil {
		return err
	}
	q.sess, q.version = sess, sess.Version
	q.label()
	switch {
	case answer != nil:
		return q.deliver(answer)
	case q.msg.IsNotification():
		q.notification()
		return nil
	}
	if err := q.checkMirrors(); err != nil {
		return err
	}
	return q.request()
}

// admit admits the request (Incoming.Admit), except an answer that names a request of its
// session still waiting for it, which takes no in-flight slot (Incoming.AdmitAnswer): the
// waiting calls hold their caller's slots, and must not keep out the answers that end them.
// The check costs one AEAD open of the session id and one of the answer id; anything that does
// not pass it (a forged, used, expired or foreign id) is admitted like any request.
func (q *clientReq) admit(class class, answer *jsonrpc.Message) error {
	if answer != nil && class == classSession {
		if ids := q.in.Header().Values(mcpheader.SessionID); len(ids) == 1 {
			sess, err := q.e.sessions.Open(ids[0], q.principal())
			if err == nil && q.e.serves(sess.Version) && q.e.asks.answerable(&sess, answer) {
				return q.in.AdmitAnswer()
			}
		}
	}
	return q.in.Admit()
}

// servedVersions names every version the endpoint speaks, for refusals a client shows its user.
func (e *Edge) servedVersions() string {
	out := mcphttp.ProtocolVersion
	for _, v := range e.cfg.Versions {
		out += ", " + v
	}
	return out
}

// checkMirrors checks the 2026-07-28 Mcp-Method, Mcp-Name and Mcp-Param-* headers whenever a
// pre-2026 client sends them: they are not its protocol, but something between it and the
// gateway may route on them, and what that reads must be what the gateway serves. A
// contradiction is an HTTP error, as intermediaries must answer header-validation failures
// (SEP-2243). Here the Mcp-Param-* headers are checked for form and method; the request this
// edge builds carries them, and stage bind-headers holds each to its argument. A header named as
// one of these with '_' (or another character but a letter or a digit) for '-', which some
// servers read as that header, is refused first.
func (q *clientReq) checkMirrors() error {
	h := q.in.Header()
	if err := mcphttp.CheckHeaderNames(h); err != nil {
		return err
	}
	if err := mcphttp.CheckParamSyntax(h, q.msg.Method); err != nil {
		return err
	}
	method, ok, err := mcphttp.HeaderValue(h, mcpheader.Method)
	if err != nil {
		return err
	}
	if ok && method != q.msg.Method {
		return jsonrpc.NewError(jsonrpc.CodeHeaderMismatch,
			"Header mismatch: Mcp-Method header does not match the body's method")
	}
	switch q.msg.Method {
	case "tools/call", "prompts/get":
		return mcphttp.CheckNameHeader(h, q.p.Name, false)
	case "resources/read", era.MethodSubscribe, "resources/unsubscribe":
		return mcphttp.CheckNameHeader(h, q.p.URI, false)
	}
	if _, ok, _ := mcphttp.HeaderValue(h, mcpheader.Name); ok {
		return jsonrpc.NewError(jsonrpc.CodeHeaderMismatch,
			"Header mismatch: Mcp-Name header is present but "+q.msg.Method+" names nothing")
	}
	return nil
}

// translated are the pre-2026 methods that run through the pipeline as 2026-07-28 requests; the
// other methods a pre-2026 client may send are answered at the edge (request).
var translated = map[string]bool{
	"tools/list": true, "prompts/list": true, "resources/list": true, "resources/templates/list": true,
	"tools/call": true, "prompts/get": true, "resources/read": true, "completion/complete": true,
}

// request answers what the edge answers itself and translates the rest.
func (q *clientReq) request() error {
	switch m := q.msg.Method; {
	case m == "ping":
		// Answered at once, by the gateway (2025-11-25 lifecycle).
		return q.result([]byte(`{}`))
	case m == "logging/setLevel":
		return q.setLevel()
	case m == era.MethodSubscribe, m == "resources/unsubscribe":
		if q.e.cfg.GetStream {
			return q.subscribe()
		}
	case translated[m]:
		q.logLevel = q.e.state.level(q.in.Context(), q.sess, stateCaller(q.sess, q.in))
		return q.call()
	}
	// tasks/*, anything else (resources/subscribe without the GET stream that would deliver
	// its updates): in-band, since a 404 would tell a 2025 client its session is gone.
	return q.rpcError(jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "Method not found"))
}

// notification accepts a client notification (202); notifications/cancelled cancels the call
// it names, on whichever replica runs it.
func (q *clientReq) notification() {
	if q.msg.Method == era.NotifCancelled && sessionBound(q.sess) {
		if id := cancelledID(q.msg.Params); len(id) > 0 {
			q.e.asks.cancel(q.in.Context(), q.sess, q.in.BoundKey(), id)
		}
	}
	q.c.Accepted()
}

// deliver hands a client's answer to one of the gateway's requests to the replica waiting for
// it: 202, or the refusal answerRefused says.
func (q *clientReq) deliver(answer *jsonrpc.Message) error {
	if !sessionBound(q.sess) {
		return answerRefused(errBadAnswer, q.in.Limited)
	}
	if err := q.e.asks.deliver(q.in.Context(), q.sess, q.in.BoundKey(), answer); err != nil {
		return answerRefused(err, q.in.Limited)
	}
	q.c.Accepted()
	return nil
}

// answerRefused is the error a client's answer gets when it was not delivered. Every refusal is
// final for that POST (nothing of it takes effect later); only the two that are not the client's
// fault invite sending the same answer again: too many of the caller's answers already on their
// way to other replicas (429), or the shared store refusing to carry it (503). Anything else is an
// answer nobody waits for (forged, used, expired, another session's, for a replica that is gone):
// 400. limited builds the 429 in the shape the server's draftErrors select (Incoming.Limited).
func answerRefused(err error, limited func(time.Duration, string) *mcphttp.Error) error {
	var bad *badResultError
	switch {
	case errors.As(err, &bad):
		// The answer's own shape: the request it answers still waits for a good one.
		return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: "+bad.Error())
	case errors.Is(err, errAsksBusy):
		return limited(time.Second, "Too many of this caller's answers are on their way "+
			"to other replicas of the gateway; send this one again shortly")
	case errors.Is(err, errAsksUnavailable):
		return &mcphttp.Error{Status: http.StatusServiceUnavailable, Outcome: outcome.Unavailable,
			Header: http.Header{"Retry-After": {"1"}},
			RPC: jsonrpc.NewError(jsonrpc.CodeUnavailable, "The replica of the gateway waiting for this answer "+
				"cannot be reached now; send it again shortly")}
	}
	return jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "Invalid Request: no request awaits this answer")
}

// id is the JSON-RPC id the client's request carries.
func (q *clientReq) id() json.RawMessage {
	if q.msg == nil {
		return nil
	}
	return q.msg.ID
}

// result answers with a plain JSON-RPC result: no resultType and no gateway _meta, which 2025
// results do not have.
func (q *clientReq) result(result []byte) error {
	return q.c.JSON(http.StatusOK, jsonrpc.AppendResult(nil, q.id(), result), outcome.OK)
}

// rpcError answers with a JSON-RPC error in-band, with HTTP 200 (2025 norms).
func (q *clientReq) rpcError(e *jsonrpc.Error) error {
	return q.c.JSON(http.StatusOK, jsonrpc.AppendError(nil, q.id(), e), outcome.ClientError)
}

// inBand writes err in-band with 200 unless its status is one a pre-2026 client acts on, or
// nothing more can be written; what it does not write it returns, for the HTTP edge to write
// with its status.
func (q *clientReq) inBand(err error) error {
	if err == nil || mcphttp.IsClientWrite(err) || q.c.Failed() != nil {
		return err
	}
	if cut := mcphttp.CutBy(q.in.Context()); cut != nil {
		err = cut // the gateway cancelled the request (shutting down), whatever error that left
	}
	e := mcphttp.MapError(err)
	if e.RPC == nil || keepStatus(e.Status, e.RPC.Code) {
		return err
	}
	method := ""
	if q.msg != nil {
		method = q.msg.Method
	}
	return q.c.JSON(http.StatusOK, jsonrpc.AppendError(nil, q.id(), era.LegacyClientError(method, e.Legacy())), e.Outcome)
}

// keepStatus reports whether an error keeps its HTTP status for a pre-2026 client: the
// challenges, transport refusals, header contradictions and back-off statuses 2025 clients act
// on. Everything else (unknown names, bad params, backend failures, -32601) goes in-band with
// 200: a 404 would tell the client its session is gone.
func keepStatus(status, code int) bool {
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusRequestTimeout,
		http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType,
		http.StatusTooManyRequests, http.StatusServiceUnavailable:
		return true
	case http.StatusBadRequest:
		return code == jsonrpc.CodeParseError || code == jsonrpc.CodeInvalidRequest || code == jsonrpc.CodeHeaderMismatch
	}
	return false
}

// logSession logs a session id that did not open, with its reason, never the id.
func (q *clientReq) logSession(reason string) {
	q.e.log.LogAttrs(q.in.Context(), slog.LevelWarn, "legacy session refused",
		slog.String("request_id", q.in.RequestID()), slog.String("reason", reason),
		slog.String("subject", q.in.Subject()))
}
