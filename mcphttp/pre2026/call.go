package pre2026

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/mcp-gateway/gateway/internal/era"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/outcome"
	"github.com/mcp-gateway/gateway/mcphttp"
	"github.com/mcp-gateway/gateway/upstreams"
)

// A translated request (docs/protocol.md §9.3). The edge builds the 2026-07-28 request its
// client's request stands for, directly: the params as they were decoded, with the modern _meta
// built from the session (the client's own io.modelcontextprotocol/* keys dropped, its
// progressToken and trace context kept, the session's log level added), and runs it through the
// pipeline from stage method on as the caller it authenticated, under the admission it took for
// the whole client request. No header is synthesised: the 2026-07-28 wire checks are for
// 2026-07-28 clients, and stage bind-headers gives a backend the Mcp-Param-* headers of the tool
// it calls once that call is authorized. Its answer goes to a roundSink (sink.go), which relays
// progress at once and writes the last message in the 2025 shape, except an input_required
// result, which becomes requests to the client (ask.go) and another round.

// call serves a translated request: as many pipeline rounds as the client's input needs, with
// at most legacy.maxRounds rounds of that input (the gateway's confirmation and a backend's
// rounds alike), cancelled when the client goes away or cancels it.
func (q *clientReq) call() error {
	ctx, cancel := context.WithCancel(q.in.Context())
	defer cancel()
	if sessionBound(q.sess) {
		defer q.e.asks.track(q.sess, q.msg.ID, cancel)()
	}
	base := q.msg.Params
	if q.p != nil && (q.p.HasState || q.p.InputResponses != nil) {
		// Stage decode found the members exactly as the client wrote them (a case variant is
		// refused there), so params without them need no pass.
		var err error
		if base, err = stripMRTRParams(base); err != nil {
			return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: params must be an object")
		}
	}
	// A pre-2026 backend's mid-call requests reach this client (backendrequests.go).
	ctx = upstreams.WithClientRequests(ctx, q.backendRequests())
	inner, err := q.inner(ctx, base, nil, "")
	if err != nil {
		return err
	}
	// The client's answers a round carries on stay charged (roundLimits) until the request
	// that carries them has ended.
	held := func() {}
	defer func() { held() }()
	// pages: the URL-mode elicitations the client accepted last round, whose repeat the call
	// waits out rather than asking again (pagewait.go); answers, charged: the round's answers
	// and how much of their copy in the params is charged with them.
	var pages *pageWait
	var answers *heldAnswers
	var charged int64
	for round := 1; ; round++ {
		sink, end, err := runRound(ctx, q, inner, base, pages, answers, &charged)
		if end {
			return err
		}
		held()
		held = func() {}
		// round is also the round of client input this run's requests would be: the rounds
		// answered so far are round-1, and at most legacy.maxRounds are asked in a call.
		if err != nil || sink.asked == nil || round > q.e.cfg.MaxRounds {
			sink.letGo() // no requests to write
		}
		if err != nil && ctx.Err() == nil && !mcphttp.IsClientWrite(err) && q.c.Failed() == nil {
			// A stage's error, in the 2025 shape, as the sink writes the gateway's errors.
			err = sink.Error(mcphttp.MapError(err))
		}
		if err != nil {
			return q.cancelled(ctx, err)
		}
		if sink.asked == nil {
			return nil // the last message is written
		}
		if round > q.e.cfg.MaxRounds {
			return q.failed("the call needed more than " + roundsOf(q.e.cfg.MaxRounds) + " of client input")
		}
		// The URL-mode elicitations are read before the ask lets the result go.
		urls, _, _ := urlPages(q, sink.asked)
		responses, state, roundAnswers, done, err := q.ask(ctx, sink.asked, sink.letGo)
		answers, held, charged = roundAnswers, roundAnswers.release, 0
		if err != nil || done {
			return q.cancelled(ctx, err)
		}
		pages = waitForPages(q, urls, responses)
		// Each round answers the last round's requests only: its answers and state replace
		// the previous round's, they never pile up in the params.
		if inner, err = q.inner(ctx, base, responses, state); err != nil {
			return err
		}
		// The next round holds the answers twice: the inputResponses object (inner.Parsed) and
		// the params that carry it on, a copy. The copy is charged with the answers, to the
		// caller's share and the replica's budget, until the request that carries them has
		// ended (TestLegacyRoundParamsCharged).
		charged = int64(len(inner.Params))
		if err := answers.take(charged); err != nil {
			return q.askFailed(err)
		}
	}
}

// roundsOf says n rounds in words: "1 round", "10 rounds".
func roundsOf(n int) string {
	if n == 1 {
		return "1 round"
	}
	return strconv.Itoa(n) + " rounds"
}

// runRound runs one round's request inner and, while the client's answers to the round before
// were URL-mode pages whose repeat the call waits out (pagewait.go), waits for them and runs the
// round again with their answers, charging answers with params that grew (charged is what they
// carry already). It returns the last run's sink and error; with end, err is instead the call's
// own end (cancelled, the page not finished, its answers over their bound).
func runRound(ctx context.Context, q *clientReq, inner *mcphttp.Inner, base json.RawMessage, pages *pageWait,
	answers *heldAnswers, charged *int64) (sink *roundSink, end bool, err error) {
	sink = &roundSink{q: q}
	err = q.in.Run(inner, sink)
	for err == nil {
		state, again := pages.again(q, sink.asked)
		if !again {
			break
		}
		sink.letGo()
		if !pages.pause(ctx, q) {
			if ctx.Err() != nil {
				return nil, true, q.cancelled(ctx, context.Canceled)
			}
			return nil, true, q.failed("the user did not finish the page they were sent to within " + q.e.cfg.AskTimeout.String())
		}
		if inner, err = q.inner(ctx, base, pages.responses, state); err != nil {
			return nil, true, err
		}
		if n := int64(len(inner.Params)); n > *charged {
			if err := answers.take(n - *charged); err != nil {
				return nil, true, q.askFailed(err)
			}
			*charged = n
		}
		sink = &roundSink{q: q}
		err = q.in.Run(inner, sink)
	}
	return sink, false, err
}

// inner is the 2026-07-28 request of one round: the client's params without MRTR members
// (base), the modern _meta, and this round's answers and state (none in the first round).
func (q *clientReq) inner(ctx context.Context, base, responses json.RawMessage, state string) (*mcphttp.Inner, error) {
	caps := q.sess.Caps
	if len(caps) == 0 {
		caps = json.RawMessage(`{}`)
	}
	m := era.Meta{ProtocolVersion: mcphttp.ProtocolVersion, ClientCapabilities: caps,
		ClientInfo: clientInfoJSON(q.sess.ClientInfo), LogLevel: q.logLevel}
	params, err := era.ToModernParams(withInput(base, responses, state), m)
	if err != nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: params must be an object")
	}
	// What stage decode read of the client's params stands for these params too: the members
	// are the same bytes. The MRTR members are this round's, never the client's own.
	parsed := *q.p
	parsed.Meta = nil
	parsed.RequestState, parsed.HasState, parsed.InputResponses = state, state != "", responses
	meta := &jsonrpc.Meta{ProtocolVersion: mcphttp.ProtocolVersion, HasVersion: true, ClientCapabilities: caps,
		ClientInfo: m.ClientInfo, LogLevel: q.logLevel}
	if cm := q.in.Meta(); cm != nil {
		meta.ProgressToken, meta.TraceParent, meta.TraceState, meta.Baggage = cm.ProgressToken, cm.TraceParent, cm.TraceState, cm.Baggage
		// A denial's handle the client echoes (SEP-2643): the gateway's log ties the retry to
		// the denial. The backend is not sent it: era.ToModernParams drops the client's
		// io.modelcontextprotocol/* keys, this one with the others.
		meta.AuthorizationContextID = cm.AuthorizationContextID
	}
	// A 2025-11-25 client's accept of the gateway's approval page says only that its user was
	// sent there: the retry waits for the page's decision as long as the client would be waited
	// for (Inner.AwaitDecision), rather than sending it the same page round after round.
	return &mcphttp.Inner{Ctx: ctx, ID: q.msg.ID, Method: q.msg.Method, Params: params, Parsed: &parsed, Meta: meta,
		AwaitDecision: q.e.cfg.AskTimeout}, nil
}

// cancelled ends a call its client cancelled (notifications/cancelled) while it is still
// connected: the response it no longer waits for is an in-band error rather than a bare status
// it could not read. Any other error is returned as it is.
func (q *clientReq) cancelled(ctx context.Context, err error) error {
	if err == nil || ctx.Err() == nil || q.in.Context().Err() != nil || q.c.Failed() != nil || mcphttp.IsClientWrite(err) {
		return err
	}
	return q.c.JSON(http.StatusOK, jsonrpc.AppendError(nil, q.msg.ID, cancelledByClient()), outcome.Canceled)
}

// cancelledByClient is the error of a request its client cancelled.
func cancelledByClient() *jsonrpc.Error {
	return jsonrpc.NewError(jsonrpc.CodeInternalError, "Request cancelled by the client")
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
	b := make([]byte, 0, len(label)+len(`{"name":"","version":""}`)+8)
	b = jsonrpc.AppendString(append(b, `{"name":`...), name)
	b = jsonrpc.AppendString(append(b, `,"version":`...), version)
	return append(b, '}')
}

// stripMRTRParams drops requestState and inputResponses from a client's params: they are the
// gateway's business on this path, never the client's.
func stripMRTRParams(params json.RawMessage) (json.RawMessage, error) {
	if len(params) == 0 {
		return nil, nil
	}
	return era.FilterObject(nil, params, func(k []byte, v []byte) ([]byte, bool) {
		return v, string(k) != "requestState" && string(k) != "inputResponses"
	})
}

// withInput is base with a round's answers and sealed requestState; base itself when there are
// none (the first round).
func withInput(base, responses json.RawMessage, state string) json.RawMessage {
	if responses == nil && state == "" {
		return base
	}
	if len(base) == 0 {
		base = json.RawMessage(`{}`)
	}
	var m []byte
	if responses != nil {
		m = append([]byte(`"inputResponses":`), responses...)
	}
	if state != "" {
		if m != nil {
			m = append(m, ',')
		}
		m = jsonrpc.AppendString(append(m, `"requestState":`...), state)
	}
	return era.InsertMembers(base, m)
}

// failed ends a call the gateway could not complete: isError text for tools/call, an in-band
// -32603 for the other methods.
func (q *clientReq) failed(why string) error {
	what := q.msg.Method
	if q.p != nil && q.p.Name != "" {
		what = q.p.Name
	}
	text := "The call to " + what + " " + why
	if !strings.HasPrefix(why, "requires") {
		text = "The call to " + what + " failed: " + why
	}
	if q.msg.Method == upstreams.MethodToolsCall {
		res := []byte(`{"content":[{"type":"text","text":`)
		res = jsonrpc.AppendString(res, text)
		res = append(res, `}],"isError":true}`...)
		return q.c.JSON(http.StatusOK, jsonrpc.AppendResult(nil, q.msg.ID, res), outcome.ClientError)
	}
	return q.c.JSON(http.StatusOK, jsonrpc.AppendError(nil, q.msg.ID,
		jsonrpc.NewError(jsonrpc.CodeInternalError, text)), outcome.ClientError)
}

// noCapability answers a call that needs capabilities (era's Cap* names) the client did not
// declare: a failed tool call for tools/call (so the model sees why), -32603 otherwise. Nothing
// was forwarded. Each is named as the client would know it (capabilityWord: "URL-mode
// elicitation" to a client that declared form mode, not "elicitation", which it did declare),
// and one its protocol version has no way to declare is said to be missing from that version
// rather than from the client: not the client's omission.
func (q *clientReq) noCapability(capabilities ...string) error {
	var declared json.RawMessage
	if q.sess != nil {
		declared = q.sess.Caps
	}
	var missing, words []string
	for _, c := range capabilities {
		if !era.Declares(declared, c) {
			missing = append(missing, c)
		}
	}
	if len(missing) == 0 {
		missing = capabilities
	}
	inVersion := false
	for _, c := range missing {
		words = append(words, capabilityWord(c, declared, q.version))
		inVersion = inVersion || versionHas(q.version, c)
	}
	what := "a client capability"
	if len(words) > 0 {
		what = joinSorted(words)
	}
	if len(missing) > 0 && !inVersion {
		return q.failed("requires " + what + ", which MCP " + q.version + " (the version this client speaks) does not have")
	}
	return q.failed("requires " + what + ", which this client did not declare")
}

// versionHas reports whether a client of version can declare capability at all.
func versionHas(version, capability string) bool {
	all := era.ClientCaps{ElicitationForm: true, ElicitationURL: true, Roots: true, Sampling: true,
		SamplingContext: true, SamplingTools: true}
	return all.ForVersion(version).Has(capability)
}

// requiredCapabilities reads what a -32021 error's data says the call needs, as era's Cap*
// names; none when the data names nothing the gateway knows.
func requiredCapabilities(data json.RawMessage) []string {
	var d struct {
		RequiredCapabilities json.RawMessage `json:"requiredCapabilities"`
	}
	if json.Unmarshal(data, &d) != nil {
		return nil
	}
	c, err := era.ParseClientCaps(d.RequiredCapabilities)
	if err != nil {
		return nil
	}
	var out []string
	add := func(name string) {
		if c.Has(name) {
			out = append(out, name)
		}
	}
	add(era.CapElicitationForm)
	add(era.CapElicitationURL)
	add(era.CapRoots)
	// Sampling with context or tools needs sampling itself: the detail names the need.
	n := len(out)
	add(era.CapSamplingContext)
	add(era.CapSamplingTools)
	if len(out) == n {
		add(era.CapSampling)
	}
	return out
}
