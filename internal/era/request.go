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
	// pre-2026 peer sends as notifications/message whatever the request says.
	Logs bool
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
