package pre2026

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"unicode/utf8"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/era"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/legacysession"
	"github.com/mcp-gateway/gateway/internal/mcpheader"
	"github.com/mcp-gateway/gateway/internal/outcome"
	"github.com/mcp-gateway/gateway/mcphttp"
	"github.com/mcp-gateway/gateway/metrics"
)

// principal is what a session is bound to: the verified issuer and subject of this request,
// never a token (which changes on every refresh).
func (q *clientReq) principal() string { return principalOf(q.in.Principal()) }

// principalOf is what a session of caller p is bound to: Anonymous without authentication.
func principalOf(p *authz.Principal) string {
	if p == nil {
		return legacysession.Anonymous
	}
	return legacysession.Bind(p.Issuer, p.Subject)
}

// stateCaller is the caller whose record keeps the state (state.go) of session s, for request
// in: the authenticated caller, or, for a session without authentication, the client address
// group it was opened from (its sealed Home), so that a client whose address changes (a dual-stack
// client reaching one replica over IPv4 and another over IPv6) keeps its level and
// subscriptions, and the sessions opened from one address share that address's bound. Within
// the record each session's state is its own, by session key: clients behind one address do
// not share theirs. A session minted before Home existed keeps the address of the request.
func stateCaller(s *legacysession.Session, in *mcphttp.Incoming) string {
	if s != nil && s.Principal == legacysession.Anonymous && s.Home != ([16]byte{}) {
		return "home:" + hex.EncodeToString(s.Home[:])
	}
	return in.BoundKey()
}

// initialize answers initialize from the gateway's merged server/discover data (cached per
// backend: no backend is asked anything per client), negotiates the version and mints the sealed
// session id that carries the client's declared capabilities.
func (q *clientReq) initialize() error {
	e := q.e
	var p struct {
		ProtocolVersion string          `json:"protocolVersion"`
		Capabilities    json.RawMessage `json:"capabilities"`
		ClientInfo      struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"clientInfo"`
	}
	if len(q.msg.Params) > 0 {
		if err := json.Unmarshal(q.msg.Params, &p); err != nil {
			return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: initialize params are malformed")
		}
	}
	q.version = era.NegotiateVersion(p.ProtocolVersion, e.cfg.Versions)
	q.label()
	caps, err := era.NormalizeClientCaps(p.Capabilities, p.ProtocolVersion)
	if err != nil {
		return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: capabilities: "+err.Error())
	}
	disc, err := q.in.Discover()
	if err != nil {
		return err
	}
	res, err := era.InitializeResult(q.version, disc, era.InitializeOptions{ResourceSubscribe: e.cfg.GetStream})
	if err != nil {
		return err
	}
	info := clientInfoLabel(p.ClientInfo.Name, p.ClientInfo.Version)
	var id string
	var sess legacysession.Session
	if principal := q.principal(); principal == legacysession.Anonymous {
		// Its state is kept under the address it opens the session from, which its later
		// requests may not share (stateCaller).
		id, sess, err = e.sessions.MintAnonymous(q.version, caps, info, legacysession.HomeOf(q.in.BoundKey()))
	} else {
		id, sess, err = e.sessions.Mint(q.version, caps, info, principal)
	}
	if err != nil {
		return err
	}
	q.sess = &sess
	q.label()
	e.metrics.LegacySession(metrics.LegacySessionInitialized)
	q.c.Header().Set(mcpheader.SessionID, id)
	return q.result(res)
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

// openSession opens the request's session id against this request's principal, or stands in a
// session-less one for a client that never echoes the id. It returns nil, nil when it has
// answered the request itself (404).
func (q *clientReq) openSession(class class) (*legacysession.Session, error) {
	e := q.e
	h := q.in.Header()
	hdr, hasHdr, _ := headerValue(h, mcpheader.ProtocolVersion) // classification read it once
	if class == classSessionless || class == classNoVersion {
		if e.cfg.RequireSession {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidRequest,
				"Invalid Request: Mcp-Session-Id required; send initialize first")
		}
		if !hasHdr {
			// No session and no header: 2025-03-26, as the later transports say to assume.
			hdr = era.V20250326
		}
		q.version = hdr
		return &legacysession.Session{Version: hdr, Caps: json.RawMessage(`{}`), Principal: q.principal()}, nil
	}
	ids := h.Values(mcpheader.SessionID)
	var sess legacysession.Session
	err := errors.New("more than one Mcp-Session-Id")
	if len(ids) == 1 {
		sess, err = e.sessions.Open(ids[0], q.principal())
	}
	if err == nil && !e.serves(sess.Version) {
		// Negotiated before legacy.versions stopped naming its version (a reload, or a replica
		// of a rolling update on the new configuration): gone, so the client initializes
		// again at a version served now, rather than being served at one the operator removed.
		err = &legacysession.OpenError{Reason: legacysession.ReasonVersion}
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
		e.metrics.LegacySession(event)
		q.logSession(reason)
		return nil, q.c.JSON(http.StatusNotFound, jsonrpc.AppendError(nil, nil, errSessionGone), outcome.ClientError)
	}
	e.metrics.LegacySession(metrics.LegacySessionOpened)
	if hasHdr && hdr != sess.Version {
		q.version = sess.Version
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidRequest,
			"Invalid Request: MCP-Protocol-Version "+quote(hdr)+" is not the version negotiated for this session ("+sess.Version+")")
	}
	return &sess, nil
}

// sessionBound reports whether sess came from a session id. Session-less requests share the
// zero nonce, so nothing is keyed by it for them: one session-less caller must not cancel, or
// answer for, another's call. (They declare no capabilities, so nothing is ever asked of them.)
func sessionBound(sess *legacysession.Session) bool {
	return sess.Nonce != [len(sess.Nonce)]byte{}
}

// headerValue is mcphttp's: the single value of a header, a repeated one refused.
func headerValue(h http.Header, name string) (string, bool, error) {
	return mcphttp.HeaderValue(h, name)
}

// quote is a short, JSON-escaped rendering of a client's value for an error message.
func quote(s string) string {
	if len(s) > 128 {
		s = s[:128] + "…"
	}
	b, _ := json.Marshal(s)
	return "'" + string(b[1:len(b)-1]) + "'"
}
