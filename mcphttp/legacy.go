package mcphttp

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/mcp-gateway/gateway/internal/era"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/legacysession"
	"github.com/mcp-gateway/gateway/internal/mcpheader"
	"github.com/mcp-gateway/gateway/metrics"
)

// Pre-2026 clients at the edge (docs/protocol.md §9). A 2025-11-25 or 2025-06-18 client is
// served on the same endpoint as a 2026-07-28 one: its era is decided once per POST, right after
// the strict decode, and its requests are translated into internal 2026-07-28 requests that run
// the same pipeline (legacyadapter.go). The 2026-07-28 path is not touched: a request with the
// modern _meta or a 2026-07-28 version header never reaches this file.

// legacyEdge is what the server keeps to serve pre-2026 clients; nil when legacy.enabled is off.
type legacyEdge struct {
	cfg      LegacyConfig
	sessions *legacysession.Codec
	// state keeps what a session sets for its later requests (log level, resource
	// subscriptions) in the shared store (legacystate.go).
	state *sessionState
	// asker carries the gateway's requests to a legacy client (elicitation, sampling, roots)
	// and their answers and cancellations between replicas. Nil until one is connected: a call
	// that needs the client's input then ends as if the client had not declared the capability.
	asker legacyAsker
	// bridge is asker when it is the gateway's own bridge, which Server.Start subscribes.
	bridge *bridge
}

// legacyState is what the access log and the metrics read of a pre-2026 request.
type legacyState struct {
	version string                 // the negotiated (or header) version
	sess    *legacysession.Session // nil before it is opened, and for initialize
	// logLevel is the session's logging/setLevel level its translated request asks the
	// backend for, and relays from ("" for none).
	logLevel string
	// waited is the time spent waiting for the client's answers to input rounds (legacyAsk):
	// a person's think time, which the latency metrics leave out.
	waited time.Duration
}

// legacyClass is the era path of one POST (docs/protocol.md §9.1).
type legacyClass uint8

const (
	// classModern is today's 2026-07-28 path, unchanged (refusals included).
	classModern legacyClass = iota
	// classInitialize is the legacy handshake.
	classInitialize
	// classSession carries a Mcp-Session-Id to open.
	classSession
	// classSessionless carries a served pre-2026 version header but no session id.
	classSessionless
	// classNoVersion is neither: no session, no version header, not initialize.
	classNoVersion
)

// legacyClassify decides the era of a request from what the strict decode read (the method, ""
// for a posted response, and the _meta of its params, nil when absent or unread) and its headers.
// served are the pre-2026 versions the edge negotiates. It is a pure function of its inputs, so
// the fuzz target can hold it to the rules of docs/protocol.md §9.1.
func legacyClassify(method string, meta *jsonrpc.Meta, h http.Header, served []string) legacyClass {
	if meta != nil && meta.HasVersion {
		return classModern // rule 1: the modern _meta decides, Mcp-Session-Id is ignored
	}
	hdr, hasHdr, err := headerValue(h, mcpheader.ProtocolVersion)
	switch {
	case err != nil:
		return classModern // a duplicated header: checkVersion refuses it as it always has
	case hasHdr && hdr >= ProtocolVersion:
		return classModern // rule 2: today's "_meta required"
	case method == "initialize":
		return classInitialize
	case len(h.Values(mcpheader.SessionID)) > 0:
		return classSession
	case hasHdr && slices.Contains(served, hdr):
		return classSessionless
	case hasHdr:
		return classModern // a version nobody serves: today's -32022, naming what is served
	}
	return classNoVersion
}

// legacyDispatch is the classification hook of request.run, after stage 2. It reports whether the
// request is a pre-2026 one, which it then serves; a modern request is left to the pipeline with
// decodeErr, exactly as before. A JSON-RPC response (a legacy client's answer to the gateway's
// request), which the strict decode refuses, is read here first.
func (x *request) legacyDispatch(decodeErr error) (bool, error) {
	served := x.s.legacy.cfg.Versions
	var answer *jsonrpc.Message
	var class legacyClass
	if decodeErr != nil && x.in.req != nil && x.in.req.Method != "" {
		// The message decoded but its params did not (a _meta key of the wrong type): a legacy
		// client gets the error in-band, as any invalid params.
		class = legacyClassify(x.in.req.Method, nil, x.r.Header, served)
		if class != classInitialize && class != classSession && class != classSessionless {
			return false, nil
		}
		x.legacy = &legacyState{}
		var rpc *jsonrpc.Error
		if !errors.As(decodeErr, &rpc) || rpc.Code != jsonrpc.CodeInvalidParams {
			return true, decodeErr
		}
		x.writeLegacyError(rpc)
		return true, nil
	}
	if decodeErr != nil {
		if !refusedAsResponse(decodeErr) {
			return false, nil
		}
		m, err := jsonrpc.DecodeMessage(x.in.body, x.s.limits)
		if err != nil || !m.IsResponse() || m.ID == nil {
			return false, nil
		}
		class = legacyClassify("", nil, x.r.Header, served)
		if class != classSession && class != classSessionless {
			return false, nil
		}
		answer = m
	} else {
		class = legacyClassify(x.in.req.Method, x.in.meta, x.r.Header, served)
	}
	if class == classModern || (class == classNoVersion && answer == nil && x.in.req.IsNotification()) {
		// A notification without a session or version is accepted (202) as it always was.
		return false, nil
	}
	return true, x.serveLegacy(class, answer)
}

// refusedAsResponse reports whether the strict decode refused the body only for being a
// JSON-RPC response: it passed every other check (strict scanning included), so it may be read
// as a legacy client's answer.
func refusedAsResponse(err error) bool {
	var rpc *jsonrpc.Error
	return errors.As(err, &rpc) && rpc.Code == jsonrpc.CodeInvalidRequest &&
		rpc.Message == "Invalid Request: clients must not send responses"
}

// legacyTranslated are the pre-2026 methods that become an internal 2026-07-28 request; the
// other methods a legacy client may send are answered at the edge (serveLegacyRequest).
var legacyTranslated = map[string]bool{
	"tools/list": true, "prompts/list": true, "resources/list": true, "resources/templates/list": true,
	"tools/call": true, "prompts/get": true, "resources/read": true, "completion/complete": true,
}

// serveLegacy serves a pre-2026 request: authenticated first, exactly like any request (a 401
// challenge is what starts a legacy client's OAuth discovery); then the handshake, or the
// session opened against this request's principal.
func (x *request) serveLegacy(class legacyClass, answer *jsonrpc.Message) error {
	x.legacy = &legacyState{}
	if class == classNoVersion {
		// 2025-03-26 (which a missing header would mean) is not served.
		return rpcError(jsonrpc.NewError(jsonrpc.CodeInvalidRequest,
			"Invalid Request: MCP-Protocol-Version header required (this gateway serves "+x.servedVersions()+")"))
	}
	if err := x.authenticate(); err != nil {
		return err
	}
	principal := x.legacyPrincipal()
	if class == classInitialize {
		// Admitted like a request of the pipeline (stage 5): it may ask the backends for their
		// discover data when it is not cached. A translated request is admitted by its
		// internal request instead, so it is counted once.
		release, err := x.s.inflight.acquire()
		if err != nil {
			return err
		}
		defer release()
		releaseCaller, err := x.s.inflight.acquireCaller(x.subject())
		if err != nil {
			return err
		}
		defer releaseCaller()
		if err := x.limitCaller(); err != nil {
			return err
		}
		return x.legacyInitialize(principal)
	}
	sess, err := x.legacySession(class, principal)
	if err != nil || sess == nil {
		return err
	}
	x.legacy.sess, x.legacy.version = sess, sess.Version
	switch {
	case answer != nil:
		return x.legacyAnswer(sess, answer)
	case x.in.req.IsNotification():
		x.legacyNotification(sess)
		return nil
	}
	return x.serveLegacyRequest(sess)
}

// servedVersions names every version the endpoint speaks, for refusals a client shows its user.
func (x *request) servedVersions() string {
	out := ProtocolVersion
	for _, v := range x.s.legacy.cfg.Versions {
		out += ", " + v
	}
	return out
}

// legacyPrincipal is what a session is bound to: the verified issuer and subject of this
// request, never a token (which changes on every refresh).
func (x *request) legacyPrincipal() string {
	p := x.caller.principal
	if p == nil {
		return legacysession.Anonymous
	}
	return legacysession.Bind(p.Issuer, p.Subject)
}

// legacyInitialize answers initialize from the gateway's merged server/discover data (cached per
// backend: no backend is asked anything per client), negotiates the version and mints the sealed
// session id that carries the client's declared capabilities.
func (x *request) legacyInitialize(principal string) error {
	s, le := x.s, x.s.legacy
	var p struct {
		ProtocolVersion string          `json:"protocolVersion"`
		Capabilities    json.RawMessage `json:"capabilities"`
		ClientInfo      struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"clientInfo"`
	}
	if len(x.in.req.Params) > 0 {
		if err := json.Unmarshal(x.in.req.Params, &p); err != nil {
			return invalidParams("Invalid params: initialize params are malformed")
		}
	}
	version := era.NegotiateVersion(p.ProtocolVersion, le.cfg.Versions)
	x.legacy.version = version
	caps, err := era.NormalizeClientCaps(p.Capabilities)
	if err != nil {
		return invalidParams("Invalid params: capabilities: " + err.Error())
	}
	disc, err := x.discoverResult(s.serverInfo)
	if err != nil {
		return err
	}
	res, err := era.InitializeResult(version, disc, era.InitializeOptions{ResourceSubscribe: le.cfg.GetStream})
	if err != nil {
		return err
	}
	id, sess, err := le.sessions.Mint(version, caps, clientInfoLabel(p.ClientInfo.Name, p.ClientInfo.Version), principal)
	if err != nil {
		return err
	}
	x.legacy.sess = &sess
	s.metrics.LegacySession(metrics.LegacySessionInitialized)
	x.w.Header().Set(mcpheader.SessionID, id)
	x.writeLegacyResult(res)
	return nil
}

// clientInfoLabel is the client's name@version as a session keeps it, for logs only: at most 64
// bytes, cut on a character boundary.
func clientInfoLabel(name, version string) string {
	l := name + "@" + version
	if len(l) <= 64 {
		return l
	}
	l = l[:64]
	for len(l) > 0 && !utf8.ValidString(l) {
		l = l[:len(l)-1]
	}
	return l
}

// errSessionGone is the one answer for a session id that does not open (tampered, truncated,
// sealed with a key no longer in the ring, expired, or another caller's): 404, which makes a
// 2025 client initialize again, with an id-less error.
var errSessionGone = jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "Session not found; re-initialize")

// legacySession opens the request's session id against this request's principal, or stands in
// a session-less one for a client that never echoes the id. It returns nil, nil when it has
// answered the request itself (404).
func (x *request) legacySession(class legacyClass, principal string) (*legacysession.Session, error) {
	s, le := x.s, x.s.legacy
	hdr, hasHdr, _ := headerValue(x.r.Header, mcpheader.ProtocolVersion) // classification read it once
	if class == classSessionless {
		if le.cfg.RequireSession {
			return nil, rpcError(jsonrpc.NewError(jsonrpc.CodeInvalidRequest,
				"Invalid Request: Mcp-Session-Id required; send initialize first"))
		}
		x.legacy.version = hdr
		return &legacysession.Session{Version: hdr, Caps: json.RawMessage(`{}`), Principal: principal}, nil
	}
	ids := x.r.Header.Values(mcpheader.SessionID)
	var sess legacysession.Session
	err := errors.New("more than one Mcp-Session-Id")
	if len(ids) == 1 {
		sess, err = le.sessions.Open(ids[0], principal)
	}
	if err != nil {
		reason := "malformed"
		var oe *legacysession.OpenError
		if errors.As(err, &oe) {
			reason = oe.Reason
		}
		event := metrics.LegacySessionRejected
		if reason == "expired" {
			event = metrics.LegacySessionExpired
		}
		s.metrics.LegacySession(event)
		s.log.LogAttrs(x.ctx, slog.LevelWarn, "legacy session refused",
			slog.String("request_id", x.requestID), slog.String("reason", reason),
			slog.String("subject", x.subject()))
		x.out.outcome = outcomeClientError
		_ = x.writeJSON(http.StatusNotFound, jsonrpc.AppendError(nil, nil, errSessionGone))
		return nil, nil
	}
	s.metrics.LegacySession(metrics.LegacySessionOpened)
	if hasHdr && hdr != sess.Version {
		x.legacy.version = sess.Version
		return nil, rpcError(jsonrpc.NewError(jsonrpc.CodeInvalidRequest,
			"Invalid Request: MCP-Protocol-Version "+quote(hdr)+" is not the version negotiated for this session ("+sess.Version+")"))
	}
	return &sess, nil
}

// serveLegacyRequest answers what the edge answers itself and translates the rest.
func (x *request) serveLegacyRequest(sess *legacysession.Session) error {
	switch m := x.in.req.Method; {
	case m == "ping":
		// Answered at once, by the gateway (2025-11-25 lifecycle).
		x.writeLegacyResult([]byte(`{}`))
		return nil
	case m == "logging/setLevel":
		return x.legacySetLevel(sess)
	case m == "resources/subscribe", m == "resources/unsubscribe":
		if x.s.legacy.cfg.GetStream {
			return x.legacySubscribe(sess)
		}
	case legacyTranslated[m]:
		x.legacy.logLevel = x.s.legacy.state.level(x.ctx, sess)
		return x.legacyCall(sess)
	}
	// tasks/*, anything else (resources/subscribe without the GET stream that would deliver
	// its updates): in-band, since a 404 would tell a 2025 client its session is gone.
	x.writeLegacyError(jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "Method not found"))
	return nil
}

// legacyNotification accepts a client notification (202); notifications/cancelled cancels the
// call it names, on whichever replica runs it.
func (x *request) legacyNotification(sess *legacysession.Session) {
	if x.in.req.Method == "notifications/cancelled" && x.s.legacy.asker != nil && sessionBound(sess) {
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if json.Unmarshal(x.in.req.Params, &p) == nil && len(p.RequestID) > 0 {
			x.s.legacy.asker.cancel(x.ctx, sess, p.RequestID)
		}
	}
	x.w.WriteHeader(http.StatusAccepted)
	x.out.status, x.out.outcome = http.StatusAccepted, outcomeOK
}

// legacyAnswer hands a client's answer to one of the gateway's requests to the replica waiting
// for it: 202, or 400 for an answer nobody waits for (forged, used, expired, another session's).
func (x *request) legacyAnswer(sess *legacysession.Session, answer *jsonrpc.Message) error {
	le := x.s.legacy
	if le.asker == nil || !sessionBound(sess) || le.asker.deliver(x.ctx, sess, answer) != nil {
		return rpcError(jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "Invalid Request: no request awaits this answer"))
	}
	x.w.WriteHeader(http.StatusAccepted)
	x.out.status, x.out.outcome = http.StatusAccepted, outcomeOK
	return nil
}

// writeLegacyResult answers a legacy request with a plain JSON-RPC result: no resultType and no
// gateway _meta, which 2025 results do not have.
func (x *request) writeLegacyResult(result []byte) {
	_ = x.writeJSON(http.StatusOK, jsonrpc.AppendResult(nil, x.in.req.ID, result))
	x.out.outcome = outcomeOK
}

// writeLegacyError answers with a JSON-RPC error in-band, with HTTP 200 (2025 norms).
func (x *request) writeLegacyError(e *jsonrpc.Error) {
	_ = x.writeJSON(http.StatusOK, jsonrpc.AppendError(nil, x.in.req.ID, e))
	x.out.outcome = outcomeClientError
}

// Values of the access log's era attribute.
const (
	eraModern = "modern"
	eraLegacy = "legacy"
)
