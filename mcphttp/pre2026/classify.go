package pre2026

import (
	"net/http"
	"slices"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/mcpheader"
	"github.com/mcp-gateway/gateway/mcphttp"
)

// class is the era path of one POST (docs/protocol.md §9.1).
type class uint8

const (
	// classModern is the 2026-07-28 path, unchanged (refusals included).
	classModern class = iota
	// classInitialize is the pre-2026 handshake.
	classInitialize
	// classSession carries a Mcp-Session-Id to open.
	classSession
	// classSessionless carries a served pre-2026 version header but no session id.
	classSessionless
	// classNoVersion is neither: no session, no version header, not initialize.
	classNoVersion
)

// pre2026 reports whether c is one of the classes the edge serves whatever else the request
// is.
func (c class) pre2026() bool {
	return c == classInitialize || c == classSession || c == classSessionless
}

// classify decides the era of a request from what the strict decode read (the method, "" for a
// posted response, and the _meta of its params, nil when absent or unread) and its headers.
// served are the pre-2026 versions the edge negotiates. It is a pure function of its inputs, so
// the fuzz target can hold it to the rules of docs/protocol.md §9.1.
func classify(method string, meta *jsonrpc.Meta, h http.Header, served []string) class {
	if meta != nil && meta.HasVersion {
		return classModern // rule 1: the modern _meta decides, Mcp-Session-Id is ignored
	}
	hdr, hasHdr, err := headerValue(h, mcpheader.ProtocolVersion)
	switch {
	case err != nil:
		return classModern // a duplicated header: stage version refuses it as it always has
	case hasHdr && hdr >= mcphttp.ProtocolVersion:
		return classModern // rule 2: the 2026-07-28 "_meta required"
	case method == "initialize":
		return classInitialize
	case len(h.Values(mcpheader.SessionID)) > 0:
		return classSession
	case hasHdr && slices.Contains(served, hdr):
		return classSessionless
	case hasHdr:
		return classModern // a version nobody serves: the -32022 naming what is served
	}
	return classNoVersion
}

// ClaimsGet reports whether a GET is a pre-2026 client's stream: with a session id and an
// Accept that takes an event stream, when the stream is on. Any other GET is 405, as before.
func (e *Edge) ClaimsGet(r *http.Request) bool {
	return e.cfg.GetStream && len(r.Header.Values(mcpheader.SessionID)) > 0 && acceptsSSE(r.Header.Values("Accept"))
}

// KeepsStream reports whether a GET stream opened by r goes on under this edge for p (a reload
// asks the edge of the configuration replacing the stream's): the stream is still on and the
// session still opens for p at a version this edge serves. Once legacy.versions stops naming a
// session's version every request of the session is 404 (openSession); its stream must not go
// on relaying to a session the gateway no longer knows, so it ends, and its client, refused,
// initializes again at a version served now.
func (e *Edge) KeepsStream(r *http.Request, p *authz.Principal) bool {
	ids := r.Header.Values(mcpheader.SessionID)
	if !e.ClaimsGet(r) || len(ids) != 1 {
		return false
	}
	sess, err := e.sessions.Open(ids[0], principalOf(p))
	return err == nil && e.serves(sess.Version)
}
