package names

import (
	"bytes"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
)

// MCP Apps (SEP-1865, ext-apps specification 2026-01-26) link a tool to its UI resource through
// the tool's _meta: _meta.ui.resourceUri, and the flat _meta["ui/resourceUri"] the
// specification deprecates but the official server helpers still write next to it. A tools/call
// result may carry the same members. Both name a resource of the tool's backend, so they are
// namespaced exactly as that resource's own URI (Space.Name), or the host would read a URI the
// gateway cannot route. Everything else in _meta.ui (visibility, and a resource's csp,
// permissions, domain, prefersBorder) is the backend's and passes byte for byte: CSP domains
// name the backend's origins, not the gateway's.
//
// The member names are compared as the widest client decoder reads them (jsonrpc.FoldEqual):
// a host built on a decoder that matches names case-insensitively (Go's encoding/json, .NET's
// web defaults) reads "_META", "UI" or "resourceURI" as the member of that name, so each such
// spelling is namespaced too. Otherwise a backend could link its tool to another backend's UI
// resource for those hosts ("_META":{"ui":{"resourceUri":"ui://other/view"}}) while the gateway
// namespaced only the exact spelling.

// MayHaveUIMeta reports whether the scanned JSON obj may name a UI resource in a _meta member: a
// member whose name folds to resourceUri or ui/resourceUri is spelled with a \u escape, with a
// rune outside ASCII, or with the ASCII letters of "resourceuri" in any case, '_' and '-'
// between them (jsonrpc.FoldEqual ignores those).
func MayHaveUIMeta(obj []byte) bool {
	return bytes.Contains(obj, []byte(`\u`)) || mayFoldTo(obj, "resourceuri")
}

// MayHaveUI reports whether the scanned JSON obj may hold a member some decoder reads as ui
// (_meta.ui or the flat _meta["ui/resourceUri"]): one spelt with a \u escape, with a rune
// outside ASCII, or with "ui" in any case, '_' and '-' between them (jsonrpc.FoldEqual).
func MayHaveUI(obj []byte) bool {
	return bytes.Contains(obj, []byte(`\u`)) || mayFoldTo(obj, "ui")
}

// mayFoldTo reports whether b holds a byte outside ASCII or, ignoring '_' and '-' and ASCII case,
// the lower-case ASCII word.
func mayFoldTo(b []byte, word string) bool {
	for i := range b {
		if b[i] >= 0x80 {
			return true
		}
		if b[i]|0x20 != word[0] {
			continue
		}
		k := 0
		for j := i; j < len(b) && k < len(word); j++ {
			switch c := b[j]; {
			case c >= 0x80:
				return true
			case c == '_' || c == '-':
			case c|0x20 == word[k] && (c|0x20 >= 'a' && c|0x20 <= 'z'):
				k++
			default:
				j = len(b)
			}
		}
		if k == len(word) {
			return true
		}
	}
	return false
}

// Member names of the MCP Apps link, compared with jsonrpc.FoldEqual.
var (
	keyMeta        = []byte("_meta")
	keyUI          = []byte("ui")
	keyResourceURI = []byte("resourceUri")
	keyFlatURI     = []byte("ui/resourceUri")
)

// RewriteUIMeta appends obj, a tool definition or a tools/call result of backend upstream (a
// scanned JSON object), to dst with the UI resource URIs of its _meta namespaced: _meta.ui.
// resourceUri and _meta["ui/resourceUri"]. A URI that cannot be normalised is replaced by null:
// no read of it could be routed, and a host shows the tool's text instead. Member names are
// compared with their escapes decoded, as a client reads them.
func (ns *Space) RewriteUIMeta(dst, obj []byte, upstream string) ([]byte, error) {
	if len(obj) == 0 || obj[0] != '{' || !MayHaveUIMeta(obj) {
		return append(dst, obj...), nil
	}
	var inner error
	out, err := wire.EditObject(dst, obj, func(k, meta []byte) ([]byte, bool) {
		if !jsonrpc.FoldEqual(k, keyMeta) {
			return nil, false
		}
		repl, ok, err := ns.uiMeta(meta, upstream)
		if err != nil {
			inner = err
		}
		return repl, ok
	})
	if err == nil {
		err = inner
	}
	return out, err
}

// uiMeta rewrites the UI resource URIs of a _meta object (RewriteUIMeta); false when meta is not
// an object or does not parse.
func (ns *Space) uiMeta(meta []byte, upstream string) ([]byte, bool, error) {
	if meta[0] != '{' {
		return nil, false, nil
	}
	var inner error
	repl, err := wire.EditObject(make([]byte, 0, len(meta)+16), meta, func(k, v []byte) ([]byte, bool) {
		switch {
		case jsonrpc.FoldEqual(k, keyFlatURI):
			return ns.uiURI(v, upstream)
		case jsonrpc.FoldEqual(k, keyUI) && v[0] == '{':
			o, err := wire.EditObject(make([]byte, 0, len(v)+16), v, func(k, v []byte) ([]byte, bool) {
				if !jsonrpc.FoldEqual(k, keyResourceURI) {
					return nil, false
				}
				return ns.uiURI(v, upstream)
			})
			if err != nil {
				inner = err
				return nil, false
			}
			return o, true
		}
		return nil, false
	})
	if err == nil {
		err = inner
	}
	return repl, err == nil, err
}

// uiURI namespaces one resourceUri value: null when it cannot be normalised; a value that is not
// a string is no URI and is left as it is.
func (ns *Space) uiURI(val []byte, upstream string) ([]byte, bool) {
	s, ok := wire.JSONString(val)
	if !ok {
		return nil, false
	}
	n, err := NormalizeResource(s)
	if err != nil {
		return []byte("null"), true
	}
	return jsonrpc.AppendString(nil, string(ns.Name(KindResource, Target{Upstream: upstream, Name: n}))), true
}
