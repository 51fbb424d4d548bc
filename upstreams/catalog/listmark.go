package catalog

import (
	"bytes"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
	"github.com/mcp-gateway/gateway/upstreams/names"
)

// RequiredScopesMeta is the _meta key of a listed item the caller cannot use yet: the scopes a
// call needs (ListRequest.Discoverable), so a host can ask the user for them before calling.
const RequiredScopesMeta = "io.mcp-gateway/requiredScopes"

// listFilter is what a page shows of the merged list: the items visible allows as they are,
// and those only discoverable marked with the scopes a call needs.
type listFilter struct {
	visible      func(names.Kind, names.Target) bool
	discoverable func(names.Kind, names.Target) []string
}

// each calls fn with every item f shows, in order. A marked item is a fresh copy: the merged
// list is shared by every caller and the cache.
func (f listFilter) each(m *merged, kind names.Kind, fn func(it *listItem)) {
	if f.discoverable == nil || f.visible == nil {
		m.each(kind, f.visible, fn)
		return
	}
	m.each(kind, nil, func(it *listItem) {
		if f.visible(kind, it.target) {
			fn(it)
			return
		}
		scopes := f.discoverable(kind, it.target)
		if len(scopes) == 0 {
			return
		}
		raw, err := withRequiredScopes(it.raw, scopes)
		if err != nil {
			return // not an object (addItems keeps only objects): nothing to mark, so not listed
		}
		marked := newListItem(it.target, raw)
		fn(&marked)
	})
}

// MarkRequiredScopes returns a copy of the list item raw marked with the scopes a call of it
// needs, exactly as a list shows an item that is only discoverable (tool search answers with the
// same view as the list).
func MarkRequiredScopes(raw []byte, scopes []string) ([]byte, error) {
	return withRequiredScopes(raw, scopes)
}

// withRequiredScopes returns a copy of the item object raw whose _meta holds RequiredScopesMeta:
// scopes, replacing a value the backend put there (the key is the gateway's to set) and keeping
// every other member of _meta and of the item as it was.
func withRequiredScopes(raw []byte, scopes []string) ([]byte, error) {
	member := jsonrpc.AppendString(make([]byte, 0, 64), RequiredScopesMeta)
	member = append(member, ":["...)
	for i, s := range scopes {
		if i > 0 {
			member = append(member, ',')
		}
		member = jsonrpc.AppendString(member, s)
	}
	member = append(member, ']')
	found := false
	out, err := wire.EditObject(make([]byte, 0, len(raw)+len(member)+16), raw, func(k, v []byte) ([]byte, bool) {
		if string(k) != "_meta" {
			return nil, false
		}
		found = true
		return mergeMeta(v, member), true
	})
	if err != nil || found {
		return out, err
	}
	end := bytes.LastIndexByte(out, '}')
	sep := ","
	if len(bytes.TrimSpace(out[1:end])) == 0 {
		sep = "" // an empty object
	}
	tail := append([]byte(sep+`"_meta":{`), member...)
	tail = append(tail, "}}"...)
	return append(out[:end], tail...), nil
}

// mergeMeta returns the _meta object meta with member first and every other member after it;
// a _meta that is not an object is replaced.
func mergeMeta(meta, member []byte) []byte {
	out := append(append(make([]byte, 0, len(meta)+len(member)+2), '{'), member...)
	_ = jsonrpc.Members(meta, func(key, val []byte) error {
		if string(key) == RequiredScopesMeta {
			return nil
		}
		out = append(out, ',')
		out = jsonrpc.AppendString(out, string(key))
		out = append(out, ':')
		out = append(out, val...)
		return nil
	})
	return append(out, '}')
}
