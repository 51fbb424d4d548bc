package mcphttp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/mcp-gateway/gateway/internal/era"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/legacysession"
	"github.com/mcp-gateway/gateway/internal/mcpheader"
	"github.com/mcp-gateway/gateway/upstreams"
)

// The legacy adapter (docs/protocol.md §9.3). A translated pre-2026 request becomes an internal
// 2026-07-28 request that runs request.run in this process, every stage included: the body
// carries the modern _meta built from the session, the headers are the ones a 2026-07-28 client
// would send (so stages 3 and 4 check them and pass), and stage 5 keeps the principal this
// request already proved, so the token is verified once. Its response goes to a legacyCodec,
// which relays progress and keep-alives to the legacy client as they come and keeps the last
// message, which the adapter reshapes for the negotiated version, or, for input_required, turns
// into requests to the client (legacymrtr.go) and another round.

// resultLimits bound the re-reading of a message the pipeline wrote: it has been checked once
// already (a backend's message by upstreams, the gateway's own by construction), so only the
// depth is bounded, not the size of a string.
var resultLimits = jsonrpc.Limits{MaxDepth: 1 << 10, MaxTokenBytes: 1 << 30}

// innerOutcome is what one run of the internal request ended with.
type innerOutcome struct {
	status  int
	header  http.Header
	msg     *jsonrpc.Message
	outcome string
}

// legacyCall serves a translated request: as many pipeline rounds as the client's input needs,
// at most legacy.maxRounds, cancelled when the client goes away or cancels it. An error the
// rounds return themselves (a backend's invalid response, params that cannot be translated)
// follows the statuses of docs/protocol.md §9.4 like the pipeline's own.
func (x *request) legacyCall(sess *legacysession.Session) error {
	return x.legacyInBand(x.legacyRounds(sess))
}

// sessionBound reports whether sess came from a session id. Session-less requests share the
// zero nonce, so nothing is keyed by it for them: one session-less caller must not cancel, or
// answer for, another's call. (They declare no capabilities, so nothing is ever asked of them.)
func sessionBound(sess *legacysession.Session) bool {
	return sess.Nonce != [len(sess.Nonce)]byte{}
}

// legacyInBand writes err in-band with 200 unless its status is one a legacy client keeps, or
// nothing more can be written.
func (x *request) legacyInBand(err error) error {
	if err == nil || errors.Is(err, errClientWrite) || x.out.writeErr != nil {
		return err
	}
	e := mapError(err)
	if e.RPC == nil || keepLegacyStatus(e.Status, e.RPC.Code) {
		return err
	}
	x.out.outcome = e.Outcome
	return x.legacyEmitLast(jsonrpc.AppendError(nil, x.in.req.ID, era.LegacyClientError(x.in.req.Method, e.RPC)), http.StatusOK, nil)
}

// legacyRounds runs the rounds of legacyCall.
func (x *request) legacyRounds(sess *legacysession.Session) error {
	le := x.s.legacy
	ctx, cancel := context.WithCancel(x.ctx)
	defer cancel()
	if le.asker != nil && sessionBound(sess) {
		defer le.asker.track(sess, x.in.req.ID, cancel)()
	}
	params, err := stripMRTRParams(x.in.req.Params)
	if err != nil {
		return invalidParams("Invalid params: params must be an object")
	}
	for round := 1; ; round++ {
		out, err := x.legacyRound(ctx, sess, params)
		if err != nil {
			return x.legacyCancelled(ctx, err)
		}
		if out.msg.Result == nil || !inputRequired(out.msg.Result) {
			return x.legacyFinish(sess, out)
		}
		if round >= le.cfg.MaxRounds {
			return x.legacyFailed("the call needed more than " + itoa(le.cfg.MaxRounds) + " rounds of client input")
		}
		responses, state, done, err := x.legacyAsk(ctx, sess, out.msg.Result)
		if err != nil || done {
			return x.legacyCancelled(ctx, err)
		}
		params = withInput(params, responses, state)
	}
}

// legacyCancelled ends a call its client cancelled (notifications/cancelled) while it is still
// connected: the response it no longer waits for is an in-band error rather than a bare status
// it could not read. Any other error is returned as it is.
func (x *request) legacyCancelled(ctx context.Context, err error) error {
	if err == nil || ctx.Err() == nil || x.ctx.Err() != nil || x.out.writeErr != nil || errors.Is(err, errClientWrite) {
		return err
	}
	x.out.outcome = outcomeCanceled
	return x.legacyEmitLast(jsonrpc.AppendError(nil, x.in.req.ID,
		jsonrpc.NewError(jsonrpc.CodeInternalError, "Request cancelled by the client")), http.StatusOK, nil)
}

// legacyRound runs the internal request once and returns its last message.
func (x *request) legacyRound(ctx context.Context, sess *legacysession.Session, params json.RawMessage) (*innerOutcome, error) {
	// A pre-2026 backend's mid-call requests reach this client (legacyrelay.go).
	ctx = upstreams.WithClientRequests(ctx, x.legacyRelay(sess))
	r, err := x.legacyInnerRequest(ctx, sess, params)
	if err != nil {
		return nil, err
	}
	c := &legacyCodec{x: x, h: http.Header{}}
	y := &request{s: x.s, w: c, r: r, ctx: ctx, start: x.start,
		requestID: x.requestID, requestIDValue: x.requestIDValue, set: x.set}
	// Stage 5 keeps what this request proved: the token is not verified twice.
	y.caller.principal, y.caller.token = x.caller.principal, x.caller.token
	err = y.run()
	y.stopKeepAlive()
	y.in.bodyBuf.Release()
	if y.out.streamClosed != nil {
		y.out.streamClosed()
	}
	x.route = y.route
	x.out.outcome = y.out.outcome
	if y.out.writeErr != nil || errors.Is(err, errClientWrite) || x.out.writeErr != nil {
		return nil, errClientWrite
	}
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, context.Canceled) {
			err = context.Canceled
		}
		e := mapError(err)
		if e.RPC == nil {
			return nil, e
		}
		y.writeError(e)
	}
	final := c.final
	if !c.sse {
		final = c.buf
	}
	if len(final) == 0 {
		return nil, errors.New("mcphttp: the internal request wrote no last message")
	}
	msg, err := jsonrpc.DecodeMessage(final, resultLimits)
	if err != nil || (msg.Result == nil && msg.Error == nil) {
		return nil, upstreams.ErrBadResponse
	}
	return &innerOutcome{status: c.status, header: c.h, msg: msg, outcome: y.out.outcome}, nil
}

// legacyInnerRequest synthesises the internal 2026-07-28 request: the modern _meta from the
// session (the client's own io.modelcontextprotocol/* keys dropped, its progressToken and trace
// context kept, the session's log level added), and the headers a 2026-07-28 client sends,
// Mcp-Param-* included.
func (x *request) legacyInnerRequest(ctx context.Context, sess *legacysession.Session, params json.RawMessage) (*http.Request, error) {
	caps := sess.Caps
	if len(caps) == 0 {
		caps = json.RawMessage(`{}`)
	}
	mp, err := era.ToModernParams(params, era.Meta{ProtocolVersion: ProtocolVersion,
		ClientCapabilities: caps, ClientInfo: clientInfoJSON(sess.ClientInfo), LogLevel: x.legacy.logLevel})
	if err != nil {
		return nil, invalidParams("Invalid params: params must be an object")
	}
	method := x.in.req.Method
	body := make([]byte, 0, len(mp)+len(method)+64)
	body = append(body, `{"jsonrpc":"2.0","id":`...)
	body = append(body, x.in.req.ID...)
	body = append(jsonrpc.AppendString(append(body, `,"method":`...), method), `,"params":`...)
	body = append(append(body, mp...), '}')

	h := make(http.Header, 8)
	h["Content-Type"] = contentTypeJSON
	h["Accept"] = []string{"application/json, text/event-stream"}
	h[mcpheader.ProtocolVersion] = []string{ProtocolVersion}
	h[mcpheader.Method] = []string{method}
	switch p := x.in.params; {
	case (method == "tools/call" || method == "prompts/get") && p.HasName:
		h[mcpheader.Name] = []string{mcpheader.Encode(p.Name)}
	case method == "resources/read" && p.HasURI:
		h[mcpheader.Name] = []string{mcpheader.Encode(p.URI)}
	}
	for _, k := range []string{"Origin", mcpheader.TraceParent, mcpheader.TraceState, mcpheader.Baggage} {
		if v := x.r.Header[k]; v != nil {
			h[k] = v
		}
	}
	if method == upstreams.MethodToolsCall {
		x.legacyParamHeaders(ctx, h)
	}
	r := x.r.WithContext(ctx)
	r.Method, r.Header, r.ContentLength = http.MethodPost, h, int64(len(body))
	r.Body = io.NopCloser(bytes.NewReader(body))
	return r, nil
}

// legacyParamHeaders adds the Mcp-Param-* header of every x-mcp-header argument of the called
// tool, as its backend's tools/list declares it: a 2026-07-28 backend refuses a call whose
// mirrored argument has no header. Nothing is added for a tool that cannot be resolved, or an
// argument that cannot be mirrored: the pipeline then answers as it would any client.
func (x *request) legacyParamHeaders(ctx context.Context, h http.Header) {
	p := x.in.params
	if !p.HasName {
		return
	}
	target, err := x.s.backends.Resolve(upstreams.KindTool, p.Name)
	if err != nil {
		return
	}
	th, err := x.s.backends.ToolHeaders(ctx, &upstreams.ToolHeaderQuery{
		ProtocolVersion: ProtocolVersion,
		Header:          http.Header{},
		CacheKey:        x.subject(),
		SubjectToken:    x.subjectToken(target.Upstream),
		Fetch:           true,
	}, target)
	if err != nil || th == nil || th.Invalid != "" {
		return
	}
	for _, bd := range th.Bindings {
		val, err := argumentAt(p.Arguments, bd.Path)
		if err != nil || val == nil {
			continue
		}
		if v, ok := mirrored(val); ok {
			h[bd.Header] = []string{mcpheader.Encode(v)}
		}
	}
}

// clientInfoJSON turns a session's name@version back into a clientInfo object; nil when the
// session has none (session-less requests).
func clientInfoJSON(label string) json.RawMessage {
	if label == "" {
		return nil
	}
	name, version := label, ""
	if i := strings.LastIndexByte(label, '@'); i >= 0 {
		name, version = label[:i], label[i+1:]
	}
	b, _ := json.Marshal(struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}{name, version})
	return b
}

// stripMRTRParams drops requestState and inputResponses from a legacy client's params: they are
// the gateway's business on this path, never the client's.
func stripMRTRParams(params json.RawMessage) (json.RawMessage, error) {
	if len(params) == 0 {
		return nil, nil
	}
	return era.FilterObject(nil, params, func(k string, v []byte) ([]byte, bool) {
		return v, k != "requestState" && k != "inputResponses"
	})
}

// withInput is params for the next round: the client's answers and the sealed requestState.
func withInput(params, responses json.RawMessage, state string) json.RawMessage {
	if len(params) == 0 {
		params = json.RawMessage(`{}`)
	}
	m := append([]byte(`"inputResponses":`), responses...)
	if state != "" {
		m = jsonrpc.AppendString(append(m, `,"requestState":`...), state)
	}
	return era.InsertMembers(params, m)
}

// legacyFinish writes the last message for the negotiated version: a result reshaped (no
// resultType, ttlMs or cacheScope; 2025-06-18's object-only structured content), an error
// in-band with 200 unless its status is one a 2025 client acts on (docs/protocol.md §9.4).
func (x *request) legacyFinish(sess *legacysession.Session, out *innerOutcome) error {
	method := x.in.req.Method
	x.out.outcome = out.outcome
	if e := out.msg.Error; e != nil {
		if e.Code == jsonrpc.CodeMissingRequiredClientCapability {
			// The gateway's confirmation or a backend needs what the client did not declare.
			return x.legacyNoCapability(requiredCapabilities(e.Data))
		}
		status, hdr := http.StatusOK, http.Header(nil)
		if keepLegacyStatus(out.status, e.Code) {
			status = out.status
			for _, k := range []string{"Www-Authenticate", "Retry-After", "Connection"} {
				if v := out.header[k]; v != nil {
					if hdr == nil {
						hdr = http.Header{}
					}
					hdr[k] = v
				}
			}
		}
		return x.legacyEmitLast(jsonrpc.AppendError(nil, x.in.req.ID, era.LegacyClientError(method, e)), status, hdr)
	}
	res, err := era.ToLegacyClientResult(method, sess.Version, out.msg.Result)
	if err != nil {
		return upstreams.ErrBadResponse
	}
	return x.legacyEmitLast(jsonrpc.AppendResult(nil, x.in.req.ID, res), http.StatusOK, nil)
}

// keepLegacyStatus reports whether an error keeps its HTTP status for a legacy client: the
// challenges, transport refusals and back-off statuses 2025 clients act on. Everything else
// (unknown names, bad params, backend failures, -32601) goes in-band with 200: a 404 would tell
// the client its session is gone.
func keepLegacyStatus(status, code int) bool {
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusRequestTimeout,
		http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType,
		http.StatusTooManyRequests, http.StatusServiceUnavailable:
		return true
	case http.StatusBadRequest:
		return code == jsonrpc.CodeParseError || code == jsonrpc.CodeInvalidRequest
	}
	return false
}

// legacyEmitLast writes the legacy client's last message: JSON with status when nothing has been
// written yet, else the stream's last event.
func (x *request) legacyEmitLast(body []byte, status int, hdr http.Header) error {
	x.out.mu.Lock()
	defer x.out.mu.Unlock()
	x.stopKeepAliveLocked()
	if x.out.sse {
		return x.writeEvent(body)
	}
	for k, v := range hdr {
		x.w.Header()[k] = v
	}
	return x.writeJSON(status, body)
}

// requiredCapabilities names what a -32021 error's data says the client lacks.
func requiredCapabilities(data json.RawMessage) string {
	var d struct {
		RequiredCapabilities map[string]json.RawMessage `json:"requiredCapabilities"`
	}
	if json.Unmarshal(data, &d) != nil || len(d.RequiredCapabilities) == 0 {
		return "a client capability"
	}
	names := make([]string, 0, len(d.RequiredCapabilities))
	for k := range d.RequiredCapabilities {
		names = append(names, k)
	}
	return joinSorted(names)
}

// legacyCodec is the http.ResponseWriter of an internal request. It relays what may reach the
// legacy client at once (notifications/progress and other notifications, keep-alive comments)
// through the client's request, and keeps the last message for the adapter: an input_required
// result must never reach a legacy client. notifications/message is relayed only at or above
// the session's log level (legacylog.go), and no SSE id: line is ever written, so no client tries to resume a stream that
// cannot be resumed statelessly. Flush is the client writer's (each relayed event is flushed);
// SetWriteDeadline and the other http.ResponseController methods reach the client's writer
// through Unwrap, so the write deadlines of the pipeline keep working.
type legacyCodec struct {
	x      *request // the legacy client's request
	h      http.Header
	status int
	sse    bool
	buf    []byte // the JSON body, or the SSE bytes not yet making a whole event
	final  []byte // the SSE stream's last message
	listen bool   // the internal request is the listen of a GET stream (legacyget.go)
}

func (c *legacyCodec) Header() http.Header { return c.h }

func (c *legacyCodec) WriteHeader(status int) {
	if c.status != 0 {
		return
	}
	c.status = status
	ct, _, _ := strings.Cut(c.h.Get("Content-Type"), ";")
	c.sse = strings.EqualFold(strings.TrimSpace(ct), "text/event-stream")
}

func (c *legacyCodec) Write(b []byte) (int, error) {
	if c.status == 0 {
		c.WriteHeader(http.StatusOK)
	}
	c.buf = append(c.buf, b...)
	if !c.sse {
		return len(b), nil
	}
	rest := c.buf
	for {
		i := bytes.Index(rest, eventTail)
		if i < 0 {
			break
		}
		if err := c.event(rest[:i]); err != nil {
			return 0, err
		}
		rest = rest[i+len(eventTail):]
	}
	c.buf = append(c.buf[:0], rest...)
	return len(b), nil
}

// event handles one whole SSE event of the internal response.
func (c *legacyCodec) event(ev []byte) error {
	for len(ev) > 0 {
		var line []byte
		line, ev, _ = bytes.Cut(ev, []byte("\n"))
		switch {
		case len(line) > 0 && line[0] == ':':
			if err := c.x.emitComment(); err != nil {
				return err
			}
		case bytes.HasPrefix(line, []byte("data: ")):
			if err := c.message(line[len("data: "):]); err != nil {
				return err
			}
		}
	}
	return nil
}

// message handles one JSON-RPC message of the internal response's stream.
func (c *legacyCodec) message(msg []byte) error {
	m, err := jsonrpc.DecodeMessage(msg, resultLimits)
	switch {
	case err != nil:
		return nil // the pipeline writes valid messages; nothing else is relayed
	case m.IsResponse():
		c.final = bytes.Clone(msg)
		return nil
	case m.ID != nil:
		// Server-to-client requests never come this way (they are MRTR input requests).
		return nil
	case m.Method == era.NotifMessage:
		// Only what the session's level asked for, and never on a GET stream (a 2026 listen
		// carries none).
		if c.listen || !logPasses(m.Params, c.x.legacy.logLevel) {
			return nil
		}
	case c.listen:
		if msg = listenNotification(m, msg); msg == nil {
			return nil
		}
	}
	return c.x.emit(msg)
}

// FlushError is what http.ResponseController.Flush calls: every relayed event is flushed by the
// client's writer already.
func (c *legacyCodec) FlushError() error { return c.x.out.writeErr }

// Unwrap gives http.ResponseController the client's writer (write and read deadlines).
func (c *legacyCodec) Unwrap() http.ResponseWriter { return c.x.w }

// emitComment writes a keep-alive comment to the client, starting the stream if needed.
func (x *request) emitComment() error {
	x.out.mu.Lock()
	defer x.out.mu.Unlock()
	if !x.out.sse {
		x.startSSE()
	}
	x.writeDeadline(len(keepAliveComment))
	if err := x.write(keepAliveComment); err != nil {
		return err
	}
	if err := http.NewResponseController(x.w).Flush(); err != nil {
		x.writeFailed(err)
		return x.out.writeErr
	}
	return nil
}
