package jsonrpc

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// AppendResult appends a JSON-RPC success response for id with the raw result object.
func AppendResult(dst []byte, id, result json.RawMessage) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = appendID(dst, id)
	dst = append(dst, `,"result":`...)
	dst = append(dst, result...)
	return append(dst, '}')
}

// AppendResultHead appends the start of a success response for id, up to and including
// `"result":`; the caller appends the result object and the closing brace.
func AppendResultHead(dst []byte, id json.RawMessage) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = appendID(dst, id)
	return append(dst, `,"result":`...)
}

// AppendError appends a JSON-RPC error response for id (null when id is nil, as for a parse
// error where the id could not be read).
func AppendError(dst []byte, id json.RawMessage, e *Error) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = appendID(dst, id)
	dst = append(dst, `,"error":{"code":`...)
	dst = strconv.AppendInt(dst, int64(e.Code), 10)
	dst = append(dst, `,"message":`...)
	msg, _ := json.Marshal(e.Message)
	dst = append(dst, msg...)
	if len(e.Data) > 0 {
		dst = append(dst, `,"data":`...)
		dst = append(dst, e.Data...)
	}
	return append(dst, "}}"...)
}

// AppendNotification appends a JSON-RPC notification with raw params (omitted when nil).
func AppendNotification(dst []byte, method string, params json.RawMessage) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","method":`...)
	dst = AppendString(dst, method)
	if params != nil {
		dst = append(dst, `,"params":`...)
		dst = append(dst, params...)
	}
	return append(dst, '}')
}

func appendID(dst []byte, id json.RawMessage) []byte {
	if id == nil {
		return append(dst, "null"...)
	}
	return append(dst, id...)
}

// AppendMember appends the member "key":val to the object being written in dst, after a comma
// unless dst ends with the object's '{' (a member's value never ends with '{'). key is a decoded
// member name, as Members gives it, written as AppendString writes it; val is a raw JSON value.
// The rewriters that keep some members of an object write them with it.
func AppendMember(dst, key, val []byte) []byte {
	if len(dst) > 0 && dst[len(dst)-1] != '{' {
		dst = append(dst, ',')
	}
	dst = AppendString(dst, key)
	dst = append(dst, ':')
	return append(dst, val...)
}

const hexDigits = "0123456789abcdef"

// AppendString appends s (a string or its bytes) as a JSON string, as every rewriter of
// messages writes one: only what JSON requires is escaped, non-ASCII text is kept as UTF-8, and
// invalid UTF-8 is replaced, as encoding/json does.
func AppendString[S string | []byte](dst []byte, s S) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		case c < utf8.RuneSelf:
			dst = append(dst, c)
		default:
			// At most four bytes: the conversion of a []byte stays on the stack.
			r, size := utf8.DecodeRuneInString(string(s[i:min(len(s), i+utf8.UTFMax)]))
			if r == utf8.RuneError && size == 1 {
				dst = append(dst, `\ufffd`...)
			} else {
				dst = append(dst, s[i:i+size]...)
			}
			i += size
			continue
		}
		i++
	}
	return append(dst, '"')
}
