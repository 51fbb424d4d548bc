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

// MayHaveUIMeta reports whether the scanned JSON obj may name a UI resource in a _meta member: a
// member named resourceUri or ui/resourceUri is spelled so or with a \u escape.
func MayHaveUIMeta(obj []byte) bool {
	return bytes.Contains(obj, []byte("resourceUri")) || bytes.Contains(obj, []byte(`\u`))
}

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
		if string(k) != "_meta" {
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
		case string(k) == "ui/resourceUri":
			return ns.uiURI(v, upstream)
		case string(k) == "ui" && v[0] == '{':
			o, err := wire.EditObject(make([]byte, 0, len(v)+16), v, func(k, v []byte) ([]byte, bool) {
				if string(k) != "resourceUri" {
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
