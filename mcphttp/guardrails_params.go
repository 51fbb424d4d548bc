package mcphttp

import (
	"strings"

	"github.com/mcp-gateway/gateway/internal/era"
	"github.com/mcp-gateway/gateway/internal/guardrails"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/mcpheader"
	"github.com/mcp-gateway/gateway/upstreams"
)

// The argument detectors read everything of a request's params that the backend receives from
// the client, not only its arguments: the client's own _meta members (forwarded as they are),
// an MRTR retry's inputResponses (what a person typed into a form, for the backend) and any
// member the gateway does not know. The resource a request names (a read's uri, a completion's
// ref) is scanned too, block-only (guardrails_uri.go). Left out are a tool's or prompt's name,
// which authorization and routing read exactly (a "name" in any other method, or a "uri" in a
// call, routes nothing and is read like any member); and the requestState, which the gateway
// sealed itself. The _meta members the gateway reads itself, the protocol's it knows and trace
// context's (jsonrpc.ReservedMetaKey: versions, capabilities, the client's name, the handles
// the gateway issued, progress tokens, trace ids), can carry any text to the backend: they are
// read by every detector but high-entropy, which would take their random handles for
// credentials, block-only (handle). The protocol's are forwarded as the client wrote them and
// read so; trace context is forwarded as the gateway validated it, from the client's headers
// or its _meta, in the backend's _meta and headers alike, and read as that (traceMeta). A key
// of the protocol's namespace the gateway does not know is read as the client's own: the
// backend gets it as it was sent. A request routed to a backend configured to speak a pre-2026
// revision is read as that backend receives it (era.ToLegacyRequest): without the MRTR members
// and the _meta keys of the 2026-07-28 shape, which it never sees (legacy). One whose era was
// learnt is read in full: a later answer may change its era before the request goes out.

// skippedParams are the members of params the argument detectors leave alone: the arguments,
// scanned on their own, and the requestState. A call's name is left alone too (skipCallParam).
var skippedParams = [...]string{"arguments", "requestState"}

// paramsScan is the state of one checkParams: the rule, the arguments' report findings join,
// and the first report that blocks.
type paramsScan struct {
	rule    *guardrails.Rule
	rep     *guardrails.Report
	blocked *guardrails.Report
	// method is the request's; backendURI the resource URI (or template) the backend receives
	// for it, in its normal form ("" when it names no resource).
	method, backendURI string
	// nameFound: a detector found something in the member that names the resource.
	nameFound bool
	// uriAt is the path of the URI scanned when it is not a member of the params (listen).
	uriAt string
	// handles is the report handle reuses while the members it reads are clean (nil: allocate
	// one).
	handles *guardrails.Report
	// uri is routing's scan of the URI the request names, which the routed member reuses.
	uri uriScan
	// scanned is railer.uriScanned (nil but in tests).
	scanned func(backendURI string)
	// legacy: the request goes to a backend configured to speak a pre-2026 revision, which
	// receives none of the members era.ToLegacyRequest strips; they are not read.
	legacy bool
}

// checkParams runs the argument detectors over the members of x's params described above.
// Their findings are added to rep (the arguments' report, so the request has one audit line
// and one check in the metrics), with their path from the params; members with redactions
// are replaced in the params forwarded. It returns the report that blocks the request, for the
// refusal to name.
func (g *railer) checkParams(x *request, rule *guardrails.Rule, rep *guardrails.Report) (*guardrails.Report, error) {
	ps := paramsScan{rule: rule, rep: rep, method: x.in.req.Method, handles: &x.rails.handles, scanned: g.uriScanned}
	if x.route.kind == upstreams.KindResource {
		ps.backendURI, ps.uri = x.route.upstreamName, x.route.uriScan
	}
	ps.legacy = x.route.upstream != "" && g.backends != nil && g.backends.PinnedLegacy(x.route.upstream)
	ps.traceMeta(x)
	skip := skipParam
	if x.in.h.nameParam == "name" {
		skip = skipCallParam
		if nothingElse(x) {
			// Only the protocol's _meta members besides what is always skipped: read, never
			// rewritten (handle).
			if x.in.params.Meta != nil {
				_, _, err := ps.members(x.in.params.Meta, "/_meta", skipNone)
				return ps.blocked, err
			}
			return ps.blocked, nil
		}
	}
	params, changed, err := ps.members(x.in.req.Params, "", skip)
	x.rails.nameFound = ps.nameFound
	if err != nil || ps.blocked != nil || !changed {
		return ps.blocked, err
	}
	parsed, err := jsonrpc.ParseParams(params)
	if err != nil {
		return nil, err
	}
	x.in.replaceParams(params, parsed)
	return nil, nil
}

// nothingElse reports, for a method routed by its name (tools/call, prompts/get), whether the
// client's params hold no member that checkParams scans besides the _meta members the gateway
// reads itself (handle), from what stage decode read of them:
// no member besides _meta, name, arguments and requestState, and no _meta member besides the
// ones jsonrpc.ReservedMetaKey names. Most calls: their params are not read again. Params another
// edge built, or that the gateway rebuilt (call_tool's inner call, a redaction, a mutation),
// are read again: the _meta parsed may not be theirs.
func nothingElse(x *request) bool {
	p, m := x.in.params, x.in.meta
	if x.internal || x.viaCallTool || x.in.client != nil || p == nil || m == nil {
		return false
	}
	return !p.Foreign && !p.HasURI && p.InputResponses == nil && !p.HasCursor && p.Ref == nil &&
		(p.Meta == nil || !m.Foreign)
}

func skipParam(key []byte) bool {
	for _, k := range skippedParams {
		if string(key) == k {
			return true
		}
	}
	return false
}

// skipCallParam is skipParam of a method routed by its name (tools/call, prompts/get).
func skipCallParam(key []byte) bool { return string(key) == "name" || skipParam(key) }

// skipNone leaves no member alone: every _meta member is read, the gateway's own by handle.
func skipNone([]byte) bool { return false }

// members scans the members of obj (at path prefix) that skip does not leave alone, _meta
// member by member, and returns obj with the redacted ones replaced.
func (ps *paramsScan) members(obj []byte, prefix string, skip func([]byte) bool) (out []byte, changed bool, err error) {
	type change struct {
		key      string
		old, new []byte
	}
	var changes []change
	err = jsonrpc.Members(obj, func(key, val []byte) error {
		if prefix == "" && ps.routed(key) {
			return ps.routedMember(val, key)
		}
		if skip(key) || ps.strippedForLegacy(key, prefix) {
			return nil
		}
		var nv []byte
		if prefix == "/_meta" && jsonrpc.ReservedMetaKey(key) {
			if !traceKey(key) {
				ps.handle(val, prefix, key)
			}
			return nil // trace context: read as forwarded (traceMeta)
		}
		if prefix == "" && string(key) == "_meta" && len(val) > 0 && val[0] == '{' {
			v, ch, err := ps.members(val, "/_meta", skipNone)
			if err != nil || !ch {
				return err
			}
			nv = v
		} else {
			ps.memberName(key, prefix)
			if nv = ps.scan(val, prefix, key); nv == nil {
				return nil
			}
		}
		changes = append(changes, change{string(key), val, nv})
		return nil
	})
	out = obj
	for _, c := range changes {
		if out, err = spliceMember(out, c.old, c.key, c.new); err != nil {
			return nil, false, err
		}
	}
	return out, len(changes) > 0, err
}

// strippedForLegacy reports whether the member key of the object at path prefix is one a
// pre-2026 backend never receives, for a request that goes to one (legacy): a finding there
// must not refuse a call the backend would get without it.
func (ps *paramsScan) strippedForLegacy(key []byte, prefix string) bool {
	if !ps.legacy {
		return false
	}
	switch prefix {
	case "":
		return era.StrippedForLegacy(string(key))
	case "/_meta":
		return era.IsModernMetaKey(string(key))
	}
	return false
}

// memberName runs the argument detectors over key, the name of a member of the object at path
// prefix that the backend receives: a name reaches it as a value does, and a backend may read
// it (a map of the client's). Block-only, as a name cannot be redacted without changing what
// the member is; the finding's path is the object's, so that a refusal never spells the name.
// Scanned before the member's value, whose findings' paths do spell it: the first that blocks
// is the one a refusal names.
func (ps *paramsScan) memberName(key []byte, prefix string) {
	sub := ps.rule.ScanArguments(jsonrpc.AppendString(nil, string(key)))
	if sub.Clean() {
		return
	}
	redactToBlock(sub)
	ps.add(sub, prefix)
}

// scan runs the argument detectors over val, the member key of the object at path prefix, and
// returns its redacted text, or nil when nothing is redacted.
func (ps *paramsScan) scan(val []byte, prefix string, key []byte) []byte {
	sub := ps.rule.ScanArguments(val)
	if sub.Clean() {
		return nil
	}
	ps.add(sub, prefix+"/"+pointerToken(string(key)))
	if !sub.Redacted() {
		return nil
	}
	return sub.Rewrite(val)
}

// handle runs the detectors other than high-entropy over val, a _meta member the gateway reads
// itself (the protocol's, a progress token, trace context): forwarded as the client sent it, it
// carries to the backend whatever text it holds. Block-only: a value the gateway read is not
// rewritten under it.
func (ps *paramsScan) handle(val []byte, prefix string, key []byte) {
	if ps.blocked != nil {
		return // the report that blocks may be ps.handles: not reused under it
	}
	sub := ps.handles
	if sub == nil {
		sub = &guardrails.Report{}
	}
	ps.rule.ScanHandlesInto(sub, val)
	if sub.Clean() {
		return
	}
	if ps.handles == sub {
		// Kept: the request's report of its own handles is reused by the next member only
		// when this one was clean.
		ps.handles = nil
	}
	redactToBlock(sub)
	ps.add(sub, prefix+"/"+pointerToken(string(key)))
}

// traceMeta reads the trace context the backend receives, in its _meta and its Traceparent,
// Tracestate and Baggage headers alike (withTrace), as handle reads the _meta members the
// gateway reads itself: not the client's _meta members as written, which the gateway replaces
// with it. A header wins over _meta, a value off its W3C grammar is dropped, and a tracestate
// travels only with its traceparent (traceFrom): what the client wrote there and the gateway
// drops reaches no backend, and a header that replaces it does. A traceparent that travels is
// hex digits and dashes: nothing to read.
func (ps *paramsScan) traceMeta(x *request) {
	m := x.in.meta
	if len(x.hdr.Values(mcpheader.Baggage)) == 0 && len(x.hdr.Values(mcpheader.TraceState)) == 0 &&
		(m == nil || m.TraceState == "" && m.Baggage == "") {
		return
	}
	tc := x.trace()
	for _, kv := range [...][2]string{{metaTraceState, tc.state}, {metaBaggage, tc.baggage}} {
		if kv[1] != "" {
			ps.handle(jsonrpc.AppendString(nil, kv[1]), "/_meta", []byte(kv[0]))
		}
	}
}

// traceKey reports whether key is one of the _meta members of trace context, which the gateway
// forwards as the trace context it validated (traceMeta), not as written.
func traceKey(key []byte) bool {
	switch string(key) {
	case metaTraceParent, metaTraceState, metaBaggage:
		return true
	}
	return false
}

// add joins sub's findings, in the member at path at, to the request's report.
func (ps *paramsScan) add(sub *guardrails.Report, at string) {
	for k := range sub.Findings {
		f := &sub.Findings[k]
		f.Path = at + f.Path
		ps.rep.Add(f.Detector, f.Action, f.Path, "")
	}
	if sub.Err != nil && ps.rep.Err == nil {
		ps.rep.Err = sub.Err
	}
	if sub.Blocked() && ps.blocked == nil {
		ps.blocked = sub
	}
}

// pointerToken escapes a member name as one RFC 6901 reference token.
func pointerToken(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
