package era

import "github.com/mcp-gateway/gateway/internal/jsonrpc"

// FilterObject appends the JSON object obj to dst keeping only the members fn keeps, with the
// values it returns, in their order.
func FilterObject(dst, obj []byte, fn func(key []byte, val []byte) ([]byte, bool)) ([]byte, error) {
	dst = append(dst, '{')
	n := 0
	err := jsonrpc.Members(obj, func(key, val []byte) error {
		v, keep := fn(key, val)
		if !keep {
			return nil
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		dst = append(jsonrpc.AppendString(dst, key), ':')
		dst = append(dst, v...)
		return nil
	})
	return append(dst, '}'), err
}

// InsertMembers adds members (`"k":v,...`) at the end of the scanned JSON object obj.
func InsertMembers(obj, members []byte) []byte {
	end := len(obj) - 1
	for end > 0 && obj[end] != '}' {
		end--
	}
	empty := skipWS(obj, 1) == end
	out := make([]byte, 0, len(obj)+len(members)+1)
	out = append(out, obj[:end]...)
	if !empty {
		out = append(out, ',')
	}
	out = append(out, members...)
	return append(out, obj[end:]...)
}

func appendMember(dst []byte, member string) []byte {
	if len(dst) > 0 {
		dst = append(dst, ',')
	}
	return append(dst, member...)
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}
