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
	lr.Params, err = FilterObject(nil, params, func(key string, val []byte) ([]byte, bool) {
		switch key {
		case "inputResponses", "requestState":
			return nil, false
		case "_meta":
			if val[0] != '{' {
				return val, true
			}
			meta, err := FilterObject(nil, val, func(k string, v []byte) ([]byte, bool) {
				if k == jsonrpc.MetaLogLevel {
					lr.Logs = true
					_ = json.Unmarshal(v, &lr.LogLevel)
				}
				return v, !IsModernMetaKey(k)
			})
			return meta, err == nil && string(meta) != "{}"
		}
		return val, true
	})
	return lr, err
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
	// LogLevels); empty asks for none. A pre-2026 session's logging/setLevel becomes this key
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
	add := appendMeta(nil, m)
	if len(params) == 0 {
		return InsertMembers([]byte(`{}`), appendMetaMember(nil, add)), nil
	}
	hasMeta := false
	out, err := FilterObject(make([]byte, 0, len(params)+len(add)+16), params, func(key string, val []byte) ([]byte, bool) {
		if key != "_meta" {
			return val, true
		}
		hasMeta = true
		if len(val) == 0 || val[0] != '{' {
			// Not an object (null, say): replaced, so the request has one _meta.
			return append(append([]byte{'{'}, add...), '}'), true
		}
		meta, err := FilterObject(nil, val, func(k string, v []byte) ([]byte, bool) { return v, !IsProtocolMetaKey(k) })
		if err != nil {
			return val, true
		}
		return InsertMembers(meta, add), true
	})
	if err != nil {
		return nil, err
	}
	if !hasMeta {
		out = InsertMembers(out, appendMetaMember(nil, add))
	}
	return out, nil
}

// appendMeta appends m's members, comma-separated.
func appendMeta(dst []byte, m Meta) []byte {
	member := func(key string, val []byte) {
		if len(val) == 0 {
			return
		}
		if len(dst) > 0 {
			dst = append(dst, ',')
		}
		dst = append(jsonrpc.AppendString(dst, key), ':')
		dst = append(dst, val...)
	}
	if m.ProtocolVersion != "" {
		member(jsonrpc.MetaProtocolVersion, jsonrpc.AppendString(nil, m.ProtocolVersion))
	}
	member(jsonrpc.MetaClientCapabilities, m.ClientCapabilities)
	member(jsonrpc.MetaClientInfo, m.ClientInfo)
	if m.LogLevel != "" {
		member(jsonrpc.MetaLogLevel, jsonrpc.AppendString(nil, m.LogLevel))
	}
	return dst
}

func appendMetaMember(dst, members []byte) []byte {
	dst = append(dst, `"_meta":{`...)
	return append(append(dst, members...), '}')
}

// logLevels are the syslog severities MCP logging uses, least severe first.
var logLevels = map[string]int{
	"debug": 0, "info": 1, "notice": 2, "warning": 3, "error": 4, "critical": 5, "alert": 6, "emergency": 7,
}

// LogAtLeast reports whether a notifications/message with params is at level min or above. A
// message whose level cannot be read, or an unknown min, is let through: the level only filters.
func LogAtLeast(params json.RawMessage, min string) bool {
	floor, ok := logLevels[min]
	if !ok {
		return true
	}
	var p struct {
		Level string `json:"level"`
	}
	if json.Unmarshal(params, &p) != nil {
		return true
	}
	got, ok := logLevels[p.Level]
	return !ok || got >= floor
}
