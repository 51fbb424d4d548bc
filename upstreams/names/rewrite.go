package names

import (
	"bytes"
	"errors"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
)

// errCaseVariant is returned by RewriteParams for params holding a member whose name differs
// from the routed one only in case or punctuation (jsonrpc.FoldEqual). jsonrpc.Decode already
// refuses such requests; this keeps the rewrite from ever producing a body in which a
// case-insensitive decoder would find a second, unrewritten name.
var errCaseVariant = errors.New("a member differs from the routed one only in case or punctuation")

// RewriteParams appends the client's params to dst with only the routed name changed to the
// backend-side one: params.name (tools/call, prompts/get), params.uri (resources/read) or
// params.ref.name / params.ref.uri (completion/complete). Everything else, _meta, arguments,
// requestState and inputResponses included, is copied byte for byte.
//
// The params are edited rather than rebuilt from what the gateway parsed: members the gateway
// does not know (extensions) must reach the backend as sent, and the edit is unambiguous
// because no member may be a spelling variant of a routed one (refused by jsonrpc.Decode and
// checked again here), so the member replaced is the one every decoder reads.
func RewriteParams(dst, params []byte, method string, t Target) ([]byte, error) {
	if len(params) == 0 {
		return append(dst, "{}"...), nil
	}
	var key string
	switch method {
	case wire.MethodToolsCall, wire.MethodPromptsGet:
		key = "name"
	case wire.MethodResourcesRead:
		key = "uri"
	case wire.MethodComplete:
		var bad error
		out, err := wire.EditObject(dst, params, func(k, val []byte) ([]byte, bool) {
			if string(k) != "ref" {
				if jsonrpc.FoldEqual(k, []byte("ref")) {
					bad = errCaseVariant
				}
				return nil, false
			}
			if val[0] != '{' {
				return nil, false
			}
			out, err := wire.EditObject(nil, val, func(k, v []byte) ([]byte, bool) {
				if (string(k) == "name" || string(k) == "uri") && v[0] == '"' {
					return jsonrpc.AppendString(nil, t.Name), true
				}
				if jsonrpc.FoldEqual(k, []byte("name")) || jsonrpc.FoldEqual(k, []byte("uri")) {
					bad = errCaseVariant
				}
				return nil, false
			})
			return out, err == nil
		})
		if err == nil {
			err = bad
		}
		return out, err
	default:
		return append(dst, params...), nil
	}
	var bad error
	out, err := wire.EditObject(dst, params, func(k, val []byte) ([]byte, bool) {
		if string(k) != key {
			if jsonrpc.FoldEqual(k, []byte(key)) {
				bad = errCaseVariant
			}
			return nil, false
		}
		return jsonrpc.AppendString(nil, t.Name), true
	})
	if err == nil {
		err = bad
	}
	return out, err
}

// Rewriter maps the resource URIs a backend returns to what the client may see
// (Space.ClientResource): each is normalised, checked against the caller's policy, and
// namespaced. What sits under a URI that cannot be normalised or that the caller may not read
// is not relayed:
//
//   - resources/read: such contents items are dropped; when none is left the whole answer is
//     the one a hidden resource gets (ErrHiddenResource), so a read that a backend resolves to a
//     hidden resource looks exactly like a read of that resource.
//   - tools/call content and prompts/get messages: an embedded resource or a resource_link is
//     dropped (and a prompt message whose only content it was) when its URI cannot be
//     normalised or a deny rule covers it for the caller. The tool's or prompt's own rule
//     authorised the call and governs its output, so a resource no rule grants is relayed;
//     an explicit deny on a resource holds wherever the backend puts it.
//   - notifications/resources/updated on a response stream: dropped.
//   - error data.uri (SEP-2164 resource not found): namespaced; when hidden or not
//     normalisable, a resources/read error becomes the hidden-resource answer, and any other
//     method's error loses its data.
type Rewriter struct {
	// Space namespaces the backend URIs.
	Space *Space
	// Upstream is the backend name of the backend whose answer is rewritten.
	Upstream string
	// Visible is the caller's read policy (nil: no policy, every normalisable URI is shown);
	// Embedded says whether a resource may appear in a tool or prompt result (nil: all may).
	Visible, Embedded func(Kind, Target) bool
	// Completion, for a completion/complete of a resource template, lets the values naming a
	// resource Visible hides be dropped (complete.go); nil relays a completion as it is.
	Completion *Completion
	// client: the URIs are in the client's namespace already (ClientResult).
	client bool
}

// ErrHiddenResource: the backend answered a resources/read with contents the caller may not see
// and nothing else. backend.Stream turns it into the same error a hidden resource gets.
var ErrHiddenResource = errors.New("upstreams: every resource in the result is hidden")

// HiddenResourceMessage is the JSON-RPC error message (code -32602, HTTP 400) for a resource
// that does not exist or that the caller may not read, when its URI is not known; with the URI
// the caller sent, the answer names it (UnknownResourceMessage). The gateway's answer and a
// relayed result reduced to nothing must be the same bytes.
const HiddenResourceMessage = "Invalid params: unknown resource"

// clientURI maps one backend URI; false when it must not be relayed.
func (u Rewriter) clientURI(s string) (string, bool) { return u.mapURI(s, u.Visible) }

// embeddedURI is clientURI for a resource in a tool or prompt result.
func (u Rewriter) embeddedURI(s string) (string, bool) { return u.mapURI(s, u.Embedded) }

// mapURI maps one URI under policy. A URI in the client's namespace is resolved to its
// backend first, exactly as a client's read of it would be.
func (u Rewriter) mapURI(s string, policy func(Kind, Target) bool) (string, bool) {
	up := u.Upstream
	if u.client {
		t, err := u.Space.Resolve(KindResource, Namespaced(s))
		if err != nil {
			return "", false
		}
		up, s = t.Upstream, t.Name
	}
	_, n, ok := u.Space.ClientResource(up, s, policy)
	return string(n), ok
}

// ClientResult checks the resource URIs of a result that is in the client's namespace already
// (one an interceptor changed after Result) as Result checks a backend's: each URI is resolved
// as a client's read of it would be, checked against the caller's policy and written in its
// namespaced normal form, and what sits under one that does not resolve or that the caller may
// not see is dropped, or the whole read is ErrHiddenResource. Any backend's URI may be there:
// Upstream is not used. An MCP App tool's UI resource in _meta is left to the UI checks.
func (u Rewriter) ClientResult(method string, res []byte) ([]byte, error) {
	if method != wire.MethodResourcesRead && !mayNameURI(res) {
		return res, nil
	}
	u.client = true
	return u.rewriteResult(method, res)
}

// Result rewrites the URIs in the result of the decoded response m to method (for a tools/call,
// the UI resource its _meta may name, too: RewriteUIMeta). Most tool and prompt results name no
// resource, and the scan that decoded m has told so
// (jsonrpc.Message.MayHaveURIKey): they are relayed as they are, without another pass. A
// resources/read result is always parsed: each of its items must carry a "uri" to be relayed.
func (u Rewriter) Result(method string, m *jsonrpc.Message) ([]byte, error) {
	if method == wire.MethodComplete && u.Completion != nil && u.Visible != nil {
		return u.completionResult(m.Result)
	}
	if method != wire.MethodResourcesRead && !m.MayHaveURIKey() {
		return m.Result, nil
	}
	return u.rewriteResult(method, m.Result)
}

// mayNameURI reports whether the scanned JSON b may have a member named "uri": a member name
// decodes to "uri" only when spelled so or with a \u escape, so b without either has none.
func mayNameURI(b []byte) bool {
	return bytes.Contains(b, []byte(`"uri"`)) || bytes.Contains(b, []byte(`\u`))
}

// rewriteResult parses the result of method and rewrites the URIs of its resources.
func (u Rewriter) rewriteResult(method string, res []byte) ([]byte, error) {
	var member string
	var elem func([]byte) ([]byte, bool)
	switch method {
	case wire.MethodToolsCall:
		member, elem = "content", u.content
	case wire.MethodPromptsGet:
		member, elem = "messages", u.message
	case wire.MethodResourcesRead:
		member, elem = "contents", u.contents
	default:
		return res, nil
	}
	var ferr error
	out, err := wire.EditObject(make([]byte, 0, len(res)+64), res, func(k, val []byte) ([]byte, bool) {
		if method == wire.MethodToolsCall && jsonrpc.FoldEqual(k, keyMeta) && !u.client {
			// An MCP App tool's result may name its UI resource (names/ui.go).
			repl, ok, err := u.Space.uiMeta(val, u.Upstream)
			if err != nil {
				ferr = err
			}
			return repl, ok
		}
		if string(k) != member || val[0] != '[' {
			return nil, false
		}
		out, dropped, err := filterArray(nil, val, elem)
		if err != nil {
			ferr = err
			return nil, false
		}
		if method == wire.MethodResourcesRead && dropped > 0 && len(out) == 2 {
			ferr = ErrHiddenResource
		}
		return out, true
	})
	if err == nil {
		err = ferr
	}
	return out, err
}

// ErrorData rewrites data.uri of a backend's error (SEP-2164: resource not found carries the
// URI). False: the URI is hidden or not normalisable, and the error must not be relayed as is.
func (u Rewriter) ErrorData(data []byte) ([]byte, bool) {
	if len(data) == 0 || data[0] != '{' || !mayNameURI(data) {
		return data, true
	}
	out, found, keep := u.editURI(data, u.clientURI)
	switch {
	case !found:
		return data, true
	case !keep:
		return nil, false
	}
	return out, true
}

// contents rewrites one item of a resources/read result; false drops it.
func (u Rewriter) contents(item []byte) ([]byte, bool) { return u.uriMember(item, u.clientURI) }

// uriMember rewrites the "uri" member of an object (resource contents); false when it has none,
// or one that must not be relayed.
func (u Rewriter) uriMember(obj []byte, mapURI func(string) (string, bool)) ([]byte, bool) {
	out, found, keep := u.editURI(obj, mapURI)
	return out, found && keep
}

// editURI rewrites the "uri" member of an object, the name compared once its escapes are
// decoded (jsonrpc.Members): found says whether there is one, keep false when obj must not be
// relayed (no object, or a URI that cannot be normalised or is hidden).
func (u Rewriter) editURI(obj []byte, mapURI func(string) (string, bool)) (out []byte, found, keep bool) {
	if obj[0] != '{' {
		return nil, false, false
	}
	keep = true
	out, err := wire.EditObject(make([]byte, 0, len(obj)+16), obj, func(k, val []byte) ([]byte, bool) {
		if string(k) != "uri" {
			return nil, false
		}
		found = true
		s, ok := wire.JSONString(val)
		if !ok {
			keep = false
			return nil, false
		}
		n, ok := mapURI(s)
		if !ok {
			keep = false
			return nil, false
		}
		return jsonrpc.AppendString(nil, n), true
	})
	return out, found, err == nil && keep
}

// content rewrites a content block: resource_link carries "uri", an embedded resource carries
// "resource":{"uri":…}. Other block types, and these without a "uri", are kept as they are;
// false drops the block. Member names are compared with their escapes decoded, as a client reads
// them.
func (u Rewriter) content(block []byte) ([]byte, bool) {
	if block[0] != '{' || !mayNameURI(block) {
		return nil, true
	}
	var typ string
	_ = jsonrpc.Members(block, func(k, v []byte) error {
		if string(k) == "type" {
			typ, _ = wire.JSONString(v)
		}
		return nil
	})
	switch typ {
	case "resource_link":
		if out, found, keep := u.editURI(block, u.embeddedURI); found {
			return out, keep
		}
	case "resource":
		var found, keep bool
		out, err := wire.EditObject(nil, block, func(k, val []byte) ([]byte, bool) {
			if string(k) != "resource" {
				return nil, false
			}
			var o []byte
			o, found, keep = u.editURI(val, u.embeddedURI)
			return o, found && keep
		})
		if found {
			return out, err == nil && keep
		}
	}
	return nil, true
}

// message rewrites the content of a prompt message, an object or (tolerated) an array of
// blocks; false drops the message (its only content was dropped).
func (u Rewriter) message(msg []byte) ([]byte, bool) {
	if msg[0] != '{' || !mayNameURI(msg) {
		return nil, true
	}
	keep := true
	out, err := wire.EditObject(nil, msg, func(k, val []byte) ([]byte, bool) {
		if string(k) != "content" {
			return nil, false
		}
		if val[0] == '[' {
			o, dropped, err := filterArray(nil, val, u.content)
			keep = err == nil && !(dropped > 0 && len(o) == 2)
			return o, err == nil
		}
		o, ok := u.content(val)
		keep = ok
		return o, ok && o != nil
	})
	return out, err == nil && keep
}
