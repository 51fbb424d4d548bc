package tracing

import (
	"encoding/hex"

	"go.opentelemetry.io/otel/trace"
)

// traceParentLen is the length of a version-00 traceparent: 2+1+32+1+16+1+2.
const traceParentLen = 55

// parseTraceParent reads the trace id, parent id and flags of a W3C traceparent. Later
// versions may append fields, which are ignored (W3C Trace Context §4.3 "Versioning"); the
// caller has validated the syntax, this only refuses what cannot be a span context.
func parseTraceParent(s string) (trace.SpanContext, bool) {
	if len(s) < traceParentLen || s[2] != '-' || s[35] != '-' || s[52] != '-' || s[:2] == "ff" {
		return trace.SpanContext{}, false
	}
	tid, err := trace.TraceIDFromHex(s[3:35])
	if err != nil {
		return trace.SpanContext{}, false
	}
	sid, err := trace.SpanIDFromHex(s[36:52])
	if err != nil {
		return trace.SpanContext{}, false
	}
	var flags [1]byte
	if _, err := hex.Decode(flags[:], []byte(s[53:55])); err != nil {
		return trace.SpanContext{}, false
	}
	return trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: tid, SpanID: sid, Remote: true,
		// Only the flags this version defines travel on, as the SDK's own propagator does.
		TraceFlags: trace.TraceFlags(flags[0]) & (trace.FlagsSampled | trace.FlagsRandom),
	}), true
}

// formatTraceParent returns sc as a version-00 traceparent, "" when sc is not valid.
func formatTraceParent(sc trace.SpanContext) string {
	if !sc.IsValid() {
		return ""
	}
	var b [traceParentLen]byte
	tid, sid := sc.TraceID(), sc.SpanID()
	b[0], b[1], b[2] = '0', '0', '-'
	hex.Encode(b[3:35], tid[:])
	b[35] = '-'
	hex.Encode(b[36:52], sid[:])
	b[52] = '-'
	flags := sc.TraceFlags() & (trace.FlagsSampled | trace.FlagsRandom)
	hex.Encode(b[53:55], []byte{byte(flags)})
	return string(b[:])
}
