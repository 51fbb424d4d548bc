package wire

import (
	"encoding/json"
	"errors"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

// The helpers below edit JSON that has already passed jsonrpc.Scan, copying every byte they do
// not replace, so unknown members, number spellings and key order reach the other side exactly
// as they were sent.

// errNotArray is returned when a member that must be an array is not.
var errNotArray = errors.New("expected a JSON array")

// EditObject appends obj to dst with the value of each member for which fn returns ok replaced
// by repl. obj must be a scanned JSON object.
func EditObject(dst, obj []byte, fn func(key, val []byte) (repl []byte, ok bool)) ([]byte, error) {
	last := 0
	err := jsonrpc.Members(obj, func(key, val []byte) error {
		repl, ok := fn(key, val)
		if !ok {
			return nil
		}
		// val is a subslice of obj, so the capacity difference is its offset.
		off := cap(obj) - cap(val)
		dst = append(dst, obj[last:off]...)
		dst = append(dst, repl...)
		last = off + len(val)
		return nil
	})
	if err != nil {
		return dst, err
	}
	return append(dst, obj[last:]...), nil
}

// ForEachElem calls fn with each element of the scanned JSON array arr and its offset.
func ForEachElem(arr []byte, fn func(elem []byte, off int) error) error {
	i := skipWS(arr, 0)
	if i >= len(arr) || arr[i] != '[' {
		return errNotArray
	}
	i = skipWS(arr, i+1)
	for i < len(arr) && arr[i] != ']' {
		end := skipValue(arr, i)
		if err := fn(arr[i:end], i); err != nil {
			return err
		}
		i = skipWS(arr, end)
		if i < len(arr) && arr[i] == ',' {
			i = skipWS(arr, i+1)
		}
	}
	return nil
}

// skipValue returns the offset just after the scanned JSON value starting at i.
func skipValue(b []byte, i int) int { return jsonrpc.ValueEnd(b, i) }

// skipString returns the offset after the scanned JSON string starting at i.
func skipString(b []byte, i int) int { return jsonrpc.StringEnd(b, i) }

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// StringLiteral returns a copy of val when it is a scanned JSON string, escapes and all,
// undecoded: the form in which the gateway keeps a backend's opaque value (a list cursor) that it
// sends back, so that the backend gets the bytes it wrote, which decoding and re-encoding would
// not give (a lone surrogate escape decodes to U+FFFD).
func StringLiteral(val []byte) ([]byte, bool) {
	if len(val) < 2 || val[0] != '"' {
		return nil, false
	}
	return append([]byte(nil), val...), true
}

// JSONString decodes a scanned JSON string value.
func JSONString(val []byte) (string, bool) {
	if len(val) < 2 || val[0] != '"' {
		return "", false
	}
	for _, c := range val[1 : len(val)-1] {
		if c == '\\' {
			var s string
			if json.Unmarshal(val, &s) != nil {
				return "", false
			}
			return s, true
		}
	}
	return string(val[1 : len(val)-1]), true
}
