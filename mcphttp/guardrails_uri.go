package mcphttp

import (
	"net/url"
	"strings"

	"github.com/mcp-gateway/gateway/internal/guardrails"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/upstreams"
)

// The resource a request names is part of what the backend acts on: a credential in a read's
// uri (file:///x?token=…, https://h/p#…) reaches the backend, its logs and whatever it fetches
// as surely as one in the arguments. The argument detectors read it in every form a backend may
// act on: as the client sent it (its JSON escapes decoded), in the normal form the backend
// receives (escapes of unreserved characters decoded, the scheme and host lower-cased), and that
// normal form percent-decoded as the backend decodes its path and query ('+' read as a space
// too, as a form decoder reads a query). The normal form has no double encoding (refused when
// the request was routed), so one decoding is what a backend can make of it.
//
// A finding there can only refuse the request: the routed URI is what the backend receives
// whatever the params say, and a URI with a marker in it would read another resource. A rule
// that redacts what the detector finds blocks it here; log stays log. The refusal names the
// detector and the member (/uri, /ref/uri), never the text.

// uriFound reports whether the argument detectors of the rule that covers reading x's routed
// resource find anything in the URI it names (sent: as the client sent it; and the backend's
// URI), in the forms resource reads. Routing asks (request.resolve), for a read, a completion
// of a template and a pre-2026 subscription alike, so that the log lines written before stage
// guardrails refuses or logs the request (an interceptor's audit lines, a pin's, a denial's)
// leave the URI out as the later ones do: railName.
func (g *railer) uriFound(x *request, sent string) bool {
	rule := g.engine.Rule(guardrails.KindResource, x.route.upstream, x.route.upstreamName)
	if rule == nil || !rule.ScansArguments() {
		return false
	}
	var rep guardrails.Report
	rep.Reset(rule.ID(), guardrails.DirArguments)
	ps := paramsScan{rule: rule, rep: &rep, backendURI: x.route.upstreamName}
	ps.resource(jsonrpc.AppendString(nil, sent), []byte("uri"))
	return ps.nameFound
}

// routed reports whether key is the member of the params that names what the request is
// routed to, other than a tool's or prompt's name: a read's uri, a completion's ref.
func (ps *paramsScan) routed(key []byte) bool {
	switch ps.method {
	case upstreams.MethodResourcesRead:
		return string(key) == "uri"
	case upstreams.MethodComplete:
		return string(key) == "ref"
	}
	return false
}

// resource scans val, the routed member key, and the forms of the backend's URI, block-only.
// Nothing is allocated for a URI that the client sent in its normal form without escapes.
func (ps *paramsScan) resource(val, key []byte) {
	ps.blockOnly(ps.rule.ScanArguments(val), key, "")
	u := ps.backendURI
	if u == "" {
		return
	}
	sub := ""
	if string(key) == "ref" {
		sub = "/uri"
	}
	if !jsonStringEndsWith(val, u) {
		ps.blockOnly(ps.rule.ScanArguments(jsonrpc.AppendString(nil, u)), key, sub)
	}
	if strings.IndexByte(u, '%') >= 0 {
		if d, err := url.PathUnescape(u); err == nil && d != u {
			ps.blockOnly(ps.rule.ScanArguments(jsonrpc.AppendString(nil, d)), key, sub)
		}
	}
	if strings.IndexByte(u, '+') >= 0 {
		if d, err := url.QueryUnescape(u); err == nil {
			ps.blockOnly(ps.rule.ScanArguments(jsonrpc.AppendString(nil, d)), key, sub)
		}
	}
}

// jsonStringEndsWith reports whether the JSON string val ends with s spelt without escapes:
// the client's URI is the backend's after the backend's prefix, and its scan covered it.
func jsonStringEndsWith(val []byte, s string) bool {
	n := len(val)
	m := n - 1 - len(s)
	return m >= 1 && val[0] == '"' && val[n-1] == '"' && string(val[m:n-1]) == s
}

// blockOnly adds rep's findings, in the member key (and sub-path under it), to the request's
// report, a redaction made a refusal.
func (ps *paramsScan) blockOnly(rep *guardrails.Report, key []byte, sub string) {
	if rep.Clean() {
		return
	}
	ps.nameFound = true
	redactToBlock(rep)
	at := ps.uriAt
	if at == "" {
		at = "/" + pointerToken(string(key)) + sub
	}
	ps.add(rep, at)
}

// redactToBlock makes rep's redactions refusals: what it was found in cannot be rewritten.
func redactToBlock(rep *guardrails.Report) {
	for k := range rep.Findings {
		if f := &rep.Findings[k]; f.Action == guardrails.Redact {
			f.Action = guardrails.Block
		}
	}
	if rep.Action == guardrails.Redact {
		rep.Action = guardrails.Block
	}
}
