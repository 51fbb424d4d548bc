package era

import (
	"encoding/json"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

// Request is a 2026-07-28 request taken apart for a pre-2026 peer.
type Request struct {
	Method string
	// Params are the request's params without what a pre-2026 peer must not see; nil when the
	// request had none.
	Params json.RawMessage
	// Logs: the request asked for log notifications (io.modelcontextprotocol/logLevel), which a
	// pre-2026 peer sends as notifications/message at the level set on its session, whatever
	// the request says.
	Logs bool
	// LogLevel is the level the request asked for; messages below it are not the request's.
	LogLevel string
}

// ToLegacyRequest takes a 2026-07-28 JSON-RPC request apart and strips what a pre-2026 peer
// must not see: the modern _meta keys (IsModernMetaKey), which make an SDK treat the request
// as modern, and the MRTR members (requestState, inputResponses), which no pre-2026 peer
// issued. progressToken, trace keys and every other member stay, in order; a _meta left empty
// is dropped. The id is not part of Request: a pre-2026 session needs its own.
func ToLegacyRequest(body []byte) (*Request, error) {
	lr := &Request{}
	var params json.RawMessage
	err := jsonrpc.Members(body, func(key, val []byte) error {
		switch string(key) {
		case "method":
			return json.Unmarshal(val, &lr.Method)
		case "params":
			params = val
		}
		return nil
	})
	if err != nil || params == nil || params[0] != '{' {
		return lr, err
	}
	lr.Params, err = FilterObject(nil, params, func(key []byte, val []byte) ([]byte, bool) {
		if StrippedForLegacy(string(key)) {
			return nil, false
		}
		switch string(key) {
		case "_meta":
			if val[0] != '{' {
				return val, true
			}
			meta, err := FilterObject(nil, val, func(k []byte, v []byte) ([]byte, bool) {
				if string(k) == jsonrpc.MetaLogLevel {
					lr.Logs = true
					_ = json.Unmarshal(v, &lr.LogLevel)
				}
				return v, !IsModernMetaKey(string(k))
			})
			return meta, err == nil && string(meta) != "{}"
		}
		return val, true
	})
	return lr, err
}

// StrippedForLegacy reports whether ToLegacyRequest drops the params member named member: the
// MRTR members, which no pre-2026 peer issued or reads. With IsModernMetaKey for _meta it says
// exactly what of a request a pre-2026 peer never receives, so that what the gateway checks of
// a request (its guardrails) is what such a peer acts on.
func StrippedForLegacy(member string) bool {
	return member == "inputResponses" || member == "requestState"
}

// IsModernMetaKey reports whether k is one of the _meta keys by which a 2026-07-28 request
// declares its era, capabilities, client and log level (the per-request replacement of
// initialize).
func IsModernMetaKey(k string) bool {
	switch k {
	case jsonrpc.MetaProtocolVersion, jsonrpc.MetaClientCapabilities, jsonrpc.MetaClientInfo, jsonrpc.MetaLogLevel:
		return true
	}
	return false
}

// Meta is what a 2026-07-28 request declares in params._meta in place of a pre-2026 session's
// initialize: each field is a JSON value, and an empty one is left out.
type Meta struct {
	ProtocolVersion    string
	ClientCapabilities json.RawMessage
	ClientInfo         json.RawMessage
	// LogLevel is the lowest level of notifications/message the request asks for (one of
	// jsonrpc.LogLevels); empty asks for none. A pre-2026 session's logging/setLevel becomes this key
	// on each of its later requests.
	LogLevel string
}

// ToModernParams is the reverse of ToLegacyRequest for params: it returns the params object of
// a pre-2026 request (nil or an object) with m's keys added to its _meta. Every reserved
// io.modelcontextprotocol/* key the pre-2026 peer put in _meta itself, in any spelling a
// decoder folds to one (IsProtocolMetaKey), is dropped first, so only m declares the era,
// capabilities and client; every other member, and every other _meta key (progressToken,
// trace context), stays in order.
func ToModernParams(params json.RawMessage, m Meta) (json.RawMessage, error) {
	if len(params) == 0 {
		params = json.RawMessage(`{}`)
	}
	// One pass into one buffer: a translated request pays for its params once.
	out := make([]byte, 0, len(params)+metaLen(m)+len(`,"_meta":{}`))
	out = append(out, '{')
	n, hasMeta := 0, false
	err := jsonrpc.Members(params, func(key, val []byte) error {
		if n > 0 {
			out = append(out, ',')
		}
		n++
		out = append(jsonrpc.AppendString(out, key), ':')
		if string(key) != "_meta" {
			out = append(out, val...)
			return nil
		}
		hasMeta = true
		out = append(out, '{')
		kept := 0
		if len(val) > 0 && val[0] == '{' {
			// The client's own members, less the reserved keys; anything else (null, say) is
			// replaced, so the request has one _meta.
			err := jsonrpc.Members(val, func(mk, mv []byte) error {
				if IsProtocolMetaKey(string(mk)) {
					return nil
				}
				if kept > 0 {
					out = append(out, ',')
				}
				kept++
				out = append(append(jsonrpc.AppendString(out, mk), ':'), mv...)
				return nil
			})
			if err != nil {
				return err
			}
		}
		if kept > 0 && metaLen(m) > 0 {
			out = append(out, ',')
		}
		out = append(appendMeta(out, m), '}')
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !hasMeta {
		if n > 0 {
			out = append(out, ',')
		}
		out = append(appendMeta(append(out, `"_meta":{`...), m), '}')
	}
	return append(out, '}'), nil
}

// appendMeta appends m's members, comma-separated.
func appendMeta(dst []byte, m Meta) []byte {
	n := 0
	member := func(dst []byte, key string) []byte {
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		return append(jsonrpc.AppendString(dst, key), ':')
	}
	if m.ProtocolVersion != "" {
		dst = jsonrpc.AppendString(member(dst, jsonrpc.MetaProtocolVersion), m.ProtocolVersion)
	}
	if len(m.ClientCapabilities) > 0 {
		dst = append(member(dst, jsonrpc.MetaClientCapabilities), m.ClientCapabilities...)
	}
	if len(m.ClientInfo) > 0 {
		dst = append(member(dst, jsonrpc.MetaClientInfo), m.ClientInfo...)
	}
	if m.LogLevel != "" {
		dst = jsonrpc.AppendString(member(dst, jsonrpc.MetaLogLevel), m.LogLevel)
	}
	return dst
}

// metaLen is about the length appendMeta appends for m (exactly, unless a string needs escapes).
func metaLen(m Meta) int {
	n := 0
	if m.ProtocolVersion != "" {
		n += len(jsonrpc.MetaProtocolVersion) + len(m.ProtocolVersion) + 6
	}
	if len(m.ClientCapabilities) > 0 {
		n += len(jsonrpc.MetaClientCapabilities) + len(m.ClientCapabilities) + 4
	}
	if len(m.ClientInfo) > 0 {
		n += len(jsonrpc.MetaClientInfo) + len(m.ClientInfo) + 4
	}
	if m.LogLevel != "" {
		n += len(jsonrpc.MetaLogLevel) + len(m.LogLevel) + 6
	}
	return n
}
