package pins

import (
	"slices"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

// Served returns the listed item (a scanned JSON object, as the backend sent it) reduced to the
// members its fingerprint covers (coveredFields, and of _meta only uiMetaKeys, for the kinds
// whose fingerprint covers them): what a pinned backend's item is served as. Every member the
// pin does not cover is left out, so nothing a client or its model reads can change under an
// unchanged pin: an unknown member ("instructions", "x-note"), and the _meta members that are
// not pinned because they change without the item changing (a vendor's template or status
// text that some hosts show or obey). Covered members keep their value bytes as sent; member
// names are written in their plain spelling, the name the fingerprint judged.
func Served(kind Kind, item []byte) ([]byte, error) {
	fields := coveredFields[kind]
	out := make([]byte, 0, len(item))
	out = append(out, '{')
	err := jsonrpc.Members(item, func(key, val []byte) error {
		switch {
		case string(key) == "_meta" && uiMetaKinds[kind]:
			meta, err := servedMeta(val)
			if err != nil || len(meta) == 0 {
				return err
			}
			out = jsonrpc.AppendMember(out, key, meta)
		case slices.Contains(fields, string(key)):
			out = jsonrpc.AppendMember(out, key, val)
		}
		return nil
	})
	return append(out, '}'), err
}

// servedMeta is a _meta value holding only uiMetaKeys; nil when it holds none (or is not an
// object).
func servedMeta(val []byte) ([]byte, error) {
	if len(val) == 0 || val[0] != '{' {
		return nil, nil
	}
	var out []byte
	err := jsonrpc.Members(val, func(key, v []byte) error {
		if slices.Contains(uiMetaKeys, string(key)) {
			if out == nil {
				out = append(out, '{')
			}
			out = jsonrpc.AppendMember(out, key, v)
		}
		return nil
	})
	if out == nil || err != nil {
		return nil, err
	}
	return append(out, '}'), nil
}
