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
const (
	maxTraceStateBytes = 8192
	maxBaggageBytes    = 8192
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
// a dash, which must be accepted and passed on (W3C Trace Context §4.3 "Versioning").
func validTraceParent(s string) bool {
	const v0Len = 55 // 2+1+32+1+16+1+2
	if len(s) < v0Len || s[2] != '-' || s[35] != '-' || s[52] != '-' {
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

// injectTraceMeta returns params whose _meta carries the given trace values under the SEP-414
// keys, so a backend that reads only _meta sees the trace context the caller sent as headers.
// Empty values are left alone. Everything else stays byte for byte, including when nothing
// needs to change, in which case params itself is returned without allocating. params must be
// strict JSON (it has passed jsonrpc.Decode).
func injectTraceMeta(params json.RawMessage, tp, ts, bg string) (json.RawMessage, error) {
	want := [...]metaString{{metaTraceParent, tp}, {metaTraceState, ts}, {metaBaggage, bg}}
	if tp == "" && ts == "" && bg == "" {
		return params, nil
	}
	if params == nil {
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

// setMetaStrings returns meta with every non-empty wanted key holding its value: existing
// members replaced in place, missing ones appended. changed is false, and nothing allocated,
// when meta already holds them all.
func setMetaStrings(meta []byte, want []metaString) ([]byte, bool, error) {
	// stale holds where each wanted key's differing value lies in meta, {-1,-1} when it is
	// absent or already right.
	stale := [3][2]int{{-1, -1}, {-1, -1}, {-1, -1}}
	var found [3]bool
	members, changed := 0, false
	err := jsonrpc.Members(meta, func(key, val []byte) error {
		members++
		for i, w := range want {
			if w.val == "" || string(key) != w.key {
				continue
			}
			found[i] = true
			if !jsonStringEquals(val, w.val) {
				off := offsetIn(meta, val)
				stale[i], changed = [2]int{off, off + len(val)}, true
			}
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
	out := replaceValues(meta, want, stale[:])
	return appendMembers(out, bytes.LastIndexByte(out, '}'), members == 0, missing), true, nil
}

// replaceValues copies meta with the values at spans replaced by the wanted strings, keeping
// each member's key bytes and position. Spans of {-1,-1} are skipped.
func replaceValues(meta []byte, want []metaString, spans [][2]int) []byte {
	out := make([]byte, 0, len(meta)+len(want)*64)
	prev := 0
	for {
		next := -1
		for i, sp := range spans {
			if sp[0] >= prev && (next < 0 || sp[0] < spans[next][0]) {
				next = i
			}
		}
		if next < 0 {
			return append(out, meta[prev:]...)
		}
		out = append(out, meta[prev:spans[next][0]]...)
		out = appendJSONString(out, want[next].val)
		prev = spans[next][1]
	}
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
