package mcphttp

import (
	"encoding/json"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

// The gateway's results get resultType defaulted to "complete" (digest §6: required on every
// result) and the gateway's serverInfo in _meta (SHOULD on every result), replacing a backend's:
// clients talk to one server, the gateway. Every other member is copied byte for byte.

// appendResponse appends a JSON-RPC success response for id around the decorated result, in one
// buffer.
func (s *Server) appendResponse(dst, id, result []byte) []byte {
	dst = jsonrpc.AppendResultHead(dst, id)
	dst = s.appendDecorated(dst, result)
	return append(dst, '}')
}

// appendDecorated appends result with resultType and the gateway's serverInfo.
func (s *Server) appendDecorated(out, result []byte) []byte {
	out = append(out, '{')
	var hasType, hasMeta bool
	_ = jsonrpc.Members(result, func(key, val []byte) error {
		switch string(key) {
		case "resultType":
			hasType = true
		case "_meta":
			hasMeta = true
			out = appendKey(out, key)
			out = s.appendMeta(out, val)
			return nil
		}
		out = appendKey(out, key)
		out = append(out, val...)
		return nil
	})
	if !hasType {
		out = appendKey(out, []byte("resultType"))
		out = append(out, `"complete"`...)
	}
	if !hasMeta {
		out = appendKey(out, []byte("_meta"))
		out = s.appendMeta(out, []byte("{}"))
	}
	return append(out, '}')
}

// appendMeta copies a _meta object without any serverInfo and adds the gateway's.
func (s *Server) appendMeta(out, meta []byte) []byte {
	out = append(out, '{')
	_ = jsonrpc.Members(meta, func(key, val []byte) error {
		if string(key) == jsonrpc.MetaServerInfo {
			return nil
		}
		out = appendKey(out, key)
		out = append(out, val...)
		return nil
	})
	out = appendKey(out, []byte(jsonrpc.MetaServerInfo))
	out = append(out, s.serverInfo...)
	return append(out, '}')
}

// appendKey appends a member name and colon, preceded by a comma unless it opens the object.
func appendKey(out, key []byte) []byte {
	if n := len(out); n > 0 && out[n-1] != '{' {
		out = append(out, ',')
	}
	if plainKey(key) {
		out = append(out, '"')
		out = append(out, key...)
		out = append(out, '"', ':')
		return out
	}
	q, _ := json.Marshal(string(key))
	out = append(out, q...)
	return append(out, ':')
}

func plainKey(key []byte) bool {
	for _, c := range key {
		if c < 0x20 || c == '"' || c == '\\' || c >= 0x7f {
			return false
		}
	}
	return true
}
