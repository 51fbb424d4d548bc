package mcphttp

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/mcpheader"
)

// W3C trace context keys as SEP-414 names them in _meta (digest quick reference, "Trace keys").
const (
	metaTraceParent = "traceparent"
	metaTraceState  = "tracestate"
	metaBaggage     = "baggage"
)

// Bounds on propagated trace values. W3C Baggage caps the header at 8192 bytes; tracestate
// allows 32 members of at most 256 characters each, which the same bound covers generously.
// A traceparent is 55 bytes in version 00; a later version may append fields, which W3C Trace
// Context does not bound, so the same bound applies: each value is a header to the backend and
// to each interceptor, and a _meta value is bounded otherwise only by the body's limit.
const (
	maxTraceParentBytes = 8192
	maxTraceStateBytes  = 8192
	maxBaggageBytes     = 8192
)

// errMetaNotObject is returned by injectTraceMeta for params whose _meta is not an object, which
// the decode stage has already refused; it guards callers that skipped it.
var errMetaNotObject = errors.New("mcphttp: params._meta is not an object")

// traceContext is the trace context the gateway forwards: validated, in header form.
type traceContext struct {
	parent, state, baggage string
}

// traceFrom picks the caller's trace context: the HTTP headers win over _meta (SEP-414 mirrors
// the headers into _meta for transports without headers). tracestate travels only with the
// traceparent it came with, since it is meaningless without it (W3C Trace Context §3.3).
// Invalid values are dropped, never repaired.
func traceFrom(h http.Header, meta *jsonrpc.Meta) traceContext {
	var tc traceContext
	if tp := h.Values(mcpheader.TraceParent); len(tp) == 1 && validTraceParent(tp[0]) {
		tc.parent = tp[0]
		tc.state = validListValue(strings.Join(h.Values(mcpheader.TraceState), ","), maxTraceStateBytes, validTraceState)
	} else if len(tp) == 0 && meta != nil && validTraceParent(meta.TraceParent) {
		tc.parent = meta.TraceParent
		tc.state = validListValue(meta.TraceState, maxTraceStateBytes, validTraceState)
	}
	if bg := h.Values(mcpheader.Baggage); len(bg) > 0 {
		tc.baggage = validListValue(strings.Join(bg, ","), maxBaggageBytes, validBaggage)
	} else if meta != nil {
		tc.baggage = validListValue(meta.Baggage, maxBaggageBytes, validBaggage)
	}
	return tc
}

// traceHeaders returns the trace headers to send to the backend: the caller's, or those its
// _meta carried when it sent none. It returns nil when there is no valid trace context.
func traceHeaders(h http.Header, meta *jsonrpc.Meta) http.Header {
	return traceFrom(h, meta).headers()
}

// traceHeadersAsSent returns the trace headers of h as the client sent them, nil when it sent
// none: for a request the gateway builds from another edge's, whose _meta the same traceFrom then
// weighs them against, so that a header off its grammar still wins over _meta (and takes it
// out) there as it does for a 2026-07-28 request.
func traceHeadersAsSent(h http.Header) http.Header {
	var out http.Header
	for _, k := range [...]string{mcpheader.TraceParent, mcpheader.TraceState, mcpheader.Baggage} {
		if v := h.Values(k); len(v) > 0 {
			if out == nil {
				out = make(http.Header, 3)
			}
			out[k] = v
		}
	}
	return out
}

// headers returns tc as the headers to send to the backend, nil when tc is empty.
func (tc traceContext) headers() http.Header {
	if tc == (traceContext{}) {
		return nil
	}
	out := make(http.Header, 3)
	for _, kv := range [...][2]string{
		{mcpheader.TraceParent, tc.parent}, {mcpheader.TraceState, tc.state}, {mcpheader.Baggage, tc.baggage},
	} {
		if kv[1] != "" {
			out[kv[0]] = []string{kv[1]}
		}
	}
	return out
}

// validTraceParent checks the W3C traceparent syntax: version-traceid-parentid-flags in
// lowercase hex, version ff and all-zero ids invalid. A later version may append fields after
// a dash, which must be accepted and passed on (W3C Trace Context §4.3 "Versioning"), up to
// maxTraceParentBytes in all.
func validTraceParent(s string) bool {
	const v0Len = 55 // 2+1+32+1+16+1+2
	if len(s) < v0Len || len(s) > maxTraceParentBytes || s[2] != '-' || s[35] != '-' || s[52] != '-' {
		return false
	}
	version, traceID, parentID, flags := s[0:2], s[3:35], s[36:52], s[53:55]
	if !lowerHex(version) || version == "ff" || !lowerHex(traceID) || !lowerHex(parentID) || !lowerHex(flags) {
		return false
	}
	if strings.Trim(traceID, "0") == "" || strings.Trim(parentID, "0") == "" {
		return false
	}
	if version == "00" {
		return len(s) == v0Len
	}
	return len(s) == v0Len || (s[v0Len] == '-' && visibleASCII(s[v0Len:]))
}

// traceID returns the trace-id field of a valid traceparent, "" otherwise.
func traceID(traceparent string) string {
	if !validTraceParent(traceparent) {
		return ""
	}
	return traceparent[3:35]
}

func lowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// validListValue returns s when it can be sent as a header value (visible ASCII, spaces and
// tabs, bounded) and follows its W3C grammar (tracesyntax.go), "" otherwise: a value taken from
// _meta never breaks the backend request or smuggles a header line, and what travels as trace
// context is keys and values of the narrow alphabet the W3C specifications allow.
func validListValue(s string, limit int, grammar func(string) bool) string {
	if s == "" || len(s) > limit || !visibleASCII(s) || !grammar(s) {
		return ""
	}
	return s
}

func visibleASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 || c > 0x7e) && c != '\t' {
			return false
		}
	}
	return true
}

// injectTraceMeta returns params whose _meta trace members (the SEP-414 keys) are exactly the
// given values: set or added when non-empty, removed when empty. So a backend that reads only
// _meta sees the trace context the caller sent as headers, and never a member the gateway does
// not forward as a header: a traceparent, tracestate or baggage off its W3C grammar, a
// tracestate that came with another traceparent, or a _meta value the headers overrode
// (W3C Trace Context §3.3.1.3: an invalid traceparent is ignored and the receiver starts a new
// trace, so what it carried must not travel on). Everything else stays byte for byte, including
// when nothing needs to change, in which case params itself is returned without allocating.
// params must be strict JSON (it has passed jsonrpc.Decode).
func injectTraceMeta(params json.RawMessage, tp, ts, bg string) (json.RawMessage, error) {
	want := [...]metaString{{metaTraceParent, tp}, {metaTraceState, ts}, {metaBaggage, bg}}
	if params == nil {
		if tp == "" && ts == "" && bg == "" {
			return params, nil
		}
		params = json.RawMessage("{}")
	}
	start, end := -1, -1
	err := jsonrpc.Members(params, func(key, val []byte) error {
		if string(key) != "_meta" {
			return nil
		}
		if val[0] != '{' {
			return errMetaNotObject
		}
		start = offsetIn(params, val)
		end = start + len(val)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if start < 0 {
		if tp == "" && ts == "" && bg == "" {
			return params, nil
		}
		meta := appendMembers([]byte("{}"), 1, true, want[:])
		return appendMembers(params, bytes.LastIndexByte(params, '}'), isEmptyObject(params),
			[]metaString{{"_meta", string(meta)}}), nil
	}
	meta, changed, err := setMetaStrings(params[start:end], want[:])
	if err != nil || !changed {
		return params, err
	}
	out := make([]byte, 0, len(params)-(end-start)+len(meta))
	out = append(append(append(out, params[:start]...), meta...), params[end:]...)
	return out, nil
}

// metaString is one _meta member to set: a string value, or for the _meta member itself raw
// JSON (see appendMembers).
type metaString struct{ key, val string }

// wantIndex returns the index of key in want, -1 when it is not there.
func wantIndex(want []metaString, key []byte) int {
	for i, w := range want {
		if string(key) == w.key {
			return i
		}
	}
	return -1
}

// setMetaStrings returns meta whose wanted keys hold exactly their values: a member replaced in
// place, a missing one appended, and a member whose wanted value is empty removed. changed is
// false, and nothing allocated, when meta already agrees.
func setMetaStrings(meta []byte, want []metaString) ([]byte, bool, error) {
	var found [3]bool
	changed := false
	err := jsonrpc.Members(meta, func(key, val []byte) error {
		if i := wantIndex(want, key); i >= 0 {
			found[i] = true
			changed = changed || want[i].val == "" || !jsonStringEquals(val, want[i].val)
		}
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	var missing []metaString
	for i, w := range want {
		if w.val != "" && !found[i] {
			missing, changed = append(missing, w), true
		}
	}
	if !changed {
		return meta, false, nil
	}
	out, kept := rewriteMembers(meta, want)
	return appendMembers(out, bytes.LastIndexByte(out, '}'), kept == 0, missing), true, nil
}

// rewriteMembers copies the object meta with each wanted key's differing value replaced, or the
// member removed when its wanted value is empty, keeping every other byte (keys as spelt, white space,
// order). kept is the number of members left.
func rewriteMembers(meta []byte, want []metaString) (out []byte, kept int) {
	open := bytes.IndexByte(meta, '{') + 1
	out = make([]byte, 0, len(meta)+len(want)*64)
	out = append(out, meta[:open]...)
	prev := open // where the previous member's value ended
	_ = jsonrpc.Members(meta, func(key, val []byte) error {
		vstart := offsetIn(meta, val)
		kstart := prev + bytes.IndexByte(meta[prev:], '"')
		sep := meta[prev:kstart] // white space, and the comma unless this is the first member
		prev = vstart + len(val)
		i := wantIndex(want, key)
		if i >= 0 && want[i].val == "" {
			return nil
		}
		if kept == 0 {
			if c := bytes.IndexByte(sep, ','); c >= 0 {
				out = append(out, sep[:c]...)
				sep = sep[c+1:]
			}
		}
		out = append(append(out, sep...), meta[kstart:vstart]...)
		if i >= 0 && !jsonStringEquals(val, want[i].val) {
			out = appendJSONString(out, want[i].val)
		} else {
			out = append(out, val...)
		}
		kept++
		return nil
	})
	return append(out, meta[prev:]...), kept
}

// appendMembers returns obj with the non-empty members of add inserted before the closing brace
// at end. The "_meta" member carries raw JSON; every other value is a string.
func appendMembers(obj []byte, end int, empty bool, add []metaString) []byte {
	out := make([]byte, 0, len(obj)+len(add)*80)
	out = append(out, obj[:end]...)
	for _, m := range add {
		if m.val == "" {
			continue
		}
		if !empty {
			out = append(out, ',')
		}
		empty = false
		out = appendJSONString(out, m.key)
		out = append(out, ':')
		if m.key == "_meta" {
			out = append(out, m.val...)
		} else {
			out = appendJSONString(out, m.val)
		}
	}
	return append(out, obj[end:]...)
}

func isEmptyObject(obj []byte) bool {
	empty := true
	_ = jsonrpc.Members(obj, func(_, _ []byte) error {
		empty = false
		return nil
	})
	return empty
}

// offsetIn returns where inner, a subslice that jsonrpc.Members handed out, starts in outer:
// a subslice shares outer's backing array up to its capacity.
func offsetIn(outer, inner []byte) int { return cap(outer) - cap(inner) }

// jsonStringEquals reports whether the raw JSON value val is the string s.
func jsonStringEquals(val []byte, s string) bool {
	if len(val) < 2 || val[0] != '"' {
		return false
	}
	if bytes.IndexByte(val, '\\') < 0 {
		return string(val[1:len(val)-1]) == s
	}
	var dec string
	return json.Unmarshal(val, &dec) == nil && dec == s
}

// appendJSONString appends s as a JSON string. Validated trace values and the keys are plain
// ASCII needing no escapes, which skips the encoder.
func appendJSONString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(s) // a string always marshals
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// withTrace returns params carrying the caller's trace context in _meta (SEP-414), so a backend
// reading either the headers or _meta sees the same trace; call it on what is forwarded.
func (x *request) withTrace(params json.RawMessage) (json.RawMessage, error) {
	tc := x.trace()
	return injectTraceMeta(params, tc.parent, tc.state, tc.baggage)
}
