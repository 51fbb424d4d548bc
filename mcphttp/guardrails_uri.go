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

// uriScan is the scan of the URI a routed request names, made once where the request is
// resolved: routing needs its verdict for the log lines written before stage guardrails, and
// stage guardrails adds its findings to the request's report instead of scanning the URI again.
type uriScan struct {
	// rule and backend are the rule the URI was scanned under and the backend's URI scanned:
	// stage guardrails reuses the scan only for the same.
	rule    *guardrails.Rule
	backend string
	// rep holds the findings, at /uri (nil: none).
	rep *guardrails.Report
}

// found reports whether the scan found anything (false for no scan).
func (u *uriScan) found() bool { return u.rep != nil }

// scanURI runs the argument detectors of the rule that covers reading x's routed resource over
// the URI it names (sent: as the client sent it, read from the params' own bytes where it was
// written without escapes; and the backend's URI), in the forms resource reads, and returns
// the scan (a zero one when no rule scans it). Routing asks (request.resolve), for
// a read, a completion of a template and a pre-2026 subscription alike, so that the log lines
// written before stage guardrails refuses or logs the request (an interceptor's audit lines, a
// pin's, a denial's) leave the URI out as the later ones do: railName.
func (g *railer) scanURI(x *request, sent string) uriScan {
	rule := g.engine.Rule(guardrails.KindResource, x.route.upstream, x.route.upstreamName)
	if rule == nil || !rule.ScansArguments() {
		return uriScan{}
	}
	var rep guardrails.Report
	rep.Reset(rule.ID(), guardrails.DirArguments)
	ps := paramsScan{rule: rule, rep: &rep, backendURI: x.route.upstreamName, scanned: g.uriScanned}
	ps.resource(sentJSON(x.in.req.Params, sent), []byte("uri"))
	u := uriScan{rule: rule, backend: x.route.upstreamName}
	if ps.nameFound {
		found := rep
		u.rep = &found
	}
	return u
}

// sentJSON returns the JSON string in which the client sent the URI sent, the uri of params or of
// its ref: the params' own bytes when the client wrote it there without escapes, as a client
// does a URI, so that scanning it costs no copy; else sent encoded anew.
func sentJSON(params []byte, sent string) []byte {
	var raw []byte
	var uri func(k, v []byte) error
	uri = func(k, v []byte) error {
		switch {
		case string(k) == "uri":
			raw = v
		case string(k) == "ref" && len(v) > 0 && v[0] == '{':
			_ = jsonrpc.Members(v, uri)
		}
		return nil
	}
	if len(params) > 0 && params[0] == '{' {
		_ = jsonrpc.Members(params, uri)
	}
	if len(raw) == len(sent)+2 && raw[0] == '"' && string(raw[1:len(raw)-1]) == sent {
		return raw
	}
	return jsonrpc.AppendString(make([]byte, 0, len(sent)+8), sent)
}

// reuseURI adds the findings of the routing's scan of the URI (at /uri) to the request's report
// under the routed member key, a read's uri or a completion's ref, and reports whether there
// was such a scan under ps's rule: the member's URI is then not scanned again.
func (ps *paramsScan) reuseURI(key []byte) bool {
	u := ps.uri
	if u.rule == nil || u.rule != ps.rule || u.backend != ps.backendURI {
		return false
	}
	if !u.found() {
		return true
	}
	ps.nameFound = true
	prefix := ""
	if string(key) == "ref" {
		prefix = "/ref"
	}
	for k := range u.rep.Findings {
		f := &u.rep.Findings[k]
		ps.rep.Add(f.Detector, f.Action, prefix+f.Path, "")
	}
	if u.rep.Err != nil && ps.rep.Err == nil {
		ps.rep.Err = u.rep.Err
	}
	if u.rep.Blocked() && ps.blocked == nil {
		blocked := *u.rep
		blocked.Findings = append([]guardrails.Finding(nil), u.rep.Findings...)
		for k := range blocked.Findings {
			blocked.Findings[k].Path = prefix + blocked.Findings[k].Path
		}
		ps.blocked = &blocked
	}
	return true
}

// routedMember scans val, the routed member key: a read's uri, scanned by routing (reuseURI);
// a completion's ref, whose members other than its uri are scanned here, block-only.
func (ps *paramsScan) routedMember(val, key []byte) error {
	if !ps.reuseURI(key) {
		ps.resource(val, key)
		return nil
	}
	if string(key) != "ref" || len(val) == 0 || val[0] != '{' {
		return nil
	}
	// The ref without its uri, as one object: a member's value is read with its name, as in
	// the whole ref.
	rest := []byte{'{'}
	err := jsonrpc.Members(val, func(k, v []byte) error {
		if string(k) == "uri" {
			return nil
		}
		if len(rest) > 1 {
			rest = append(rest, ',')
		}
		rest = append(jsonrpc.AppendString(rest, string(k)), ':')
		rest = append(rest, v...)
		return nil
	})
	if err != nil || len(rest) == 1 {
		return err
	}
	ps.blockOnly(ps.rule.ScanArguments(append(rest, '}')), key, "")
	return nil
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
// Beyond the scan of val itself, nothing is allocated for a URI that the client sent in its
// normal form without escapes: the backend's URI is what val ends with, so it is not scanned
// again, and it has no escape to decode. Routing hands val in as the params' own bytes
// (sentJSON), so no copy of the URI is made either.
func (ps *paramsScan) resource(val, key []byte) {
	if ps.scanned != nil {
		ps.scanned(ps.backendURI)
	}
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
