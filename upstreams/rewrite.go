package upstreams

import (
	"bytes"
	"errors"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

// MCP method names the forwarder treats specially.
const (
	MethodToolsCall           = "tools/call"
	MethodPromptsGet          = "prompts/get"
	MethodResourcesRead       = "resources/read"
	MethodComplete            = "completion/complete"
	MethodToolsList           = "tools/list"
	MethodPromptsList         = "prompts/list"
	MethodResourcesList       = "resources/list"
	MethodResourceTemplates   = "resources/templates/list"
	MethodDiscover            = "server/discover"
	MethodListen              = "subscriptions/listen"
	notifResourcesUpdated     = "notifications/resources/updated"
	notifToolsListChanged     = "notifications/tools/list_changed"
	notifPromptsListChanged   = "notifications/prompts/list_changed"
	notifResourcesListChanged = "notifications/resources/list_changed"
	notifAcknowledged         = "notifications/subscriptions/acknowledged"
)

// errCaseVariant is returned by rewriteParams for params holding a member whose name differs
// from the routed one only in case or punctuation (jsonrpc.FoldEqual). jsonrpc.Decode already
// refuses such requests; this keeps the rewrite from ever producing a body in which a
// case-insensitive decoder would find a second, unrewritten name.
var errCaseVariant = errors.New("a member differs from the routed one only in case or punctuation")

// rewriteParams appends the client's params to dst with only the routed name changed to the
// backend-side one: params.name (tools/call, prompts/get), params.uri (resources/read) or
// params.ref.name / params.ref.uri (completion/complete). Everything else, _meta, arguments,
// requestState and inputResponses included, is copied byte for byte.
//
// The params are edited rather than rebuilt from what the gateway parsed: members the gateway
// does not know (extensions) must reach the backend as sent, and the edit is unambiguous
// because no member may be a spelling variant of a routed one (refused by jsonrpc.Decode and
// checked again here), so the member replaced is the one every decoder reads.
func rewriteParams(dst, params []byte, method string, t Target) ([]byte, error) {
	if len(params) == 0 {
		return append(dst, "{}"...), nil
	}
	var key string
	switch method {
	case MethodToolsCall, MethodPromptsGet:
		key = "name"
	case MethodResourcesRead:
		key = "uri"
	case MethodComplete:
		var bad error
		out, err := editObject(dst, params, func(k, val []byte) ([]byte, bool) {
			if string(k) != "ref" {
				if jsonrpc.FoldEqual(k, []byte("ref")) {
					bad = errCaseVariant
				}
				return nil, false
			}
			if val[0] != '{' {
				return nil, false
			}
			out, err := editObject(nil, val, func(k, v []byte) ([]byte, bool) {
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
	out, err := editObject(dst, params, func(k, val []byte) ([]byte, bool) {
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

// uriRewriter maps the resource URIs a backend returns to what the client may see
// (namespace.clientResource): each is normalised, checked against the caller's policy, and
// namespaced. What sits under a URI that cannot be normalised or that the caller may not read
// is not relayed:
//
//   - resources/read: such contents items are dropped; when none is left the whole answer is
//     the one a hidden resource gets (errHiddenResource), so a read that a backend resolves to a
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
type uriRewriter struct {
	ns       *namespace
	upstream string
	// visible is the caller's read policy (nil: no policy, every normalisable URI is shown);
	// embedded says whether a resource may appear in a tool or prompt result (nil: all may).
	visible, embedded func(Kind, Target) bool
}

// errHiddenResource: the backend answered a resources/read with contents the caller may not see
// and nothing else. Stream.render turns it into the same error a hidden resource gets.
var errHiddenResource = errors.New("upstreams: every resource in the result is hidden")

// HiddenResourceMessage is the JSON-RPC error message (code -32602, HTTP 400) for a resource
// that does not exist or that the caller may not read: the gateway's answer and a relayed
// result reduced to nothing must be the same bytes.
const HiddenResourceMessage = "Invalid params: unknown resource"

// clientURI maps one backend URI; false when it must not be relayed.
func (u uriRewriter) clientURI(s string) (string, bool) {
	_, n, ok := u.ns.clientResource(u.upstream, s, u.visible)
	return n, ok
}

// embeddedURI is clientURI for a resource in a tool or prompt result.
func (u uriRewriter) embeddedURI(s string) (string, bool) {
	_, n, ok := u.ns.clientResource(u.upstream, s, u.embedded)
	return n, ok
}

// resultOf rewrites the URIs in the result of the decoded response m to method. Most tool and
// prompt results name no resource, and the scan that decoded m has told so
// (jsonrpc.Message.MayHaveURIKey): they are relayed as they are, without another pass. A
// resources/read result is always parsed: each of its items must carry a "uri" to be relayed.
func (u uriRewriter) resultOf(method string, m *jsonrpc.Message) ([]byte, error) {
	if method != MethodResourcesRead && !m.MayHaveURIKey() {
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
func (u uriRewriter) rewriteResult(method string, res []byte) ([]byte, error) {
	var member string
	var elem func([]byte) ([]byte, bool)
	switch method {
	case MethodToolsCall:
		member, elem = "content", u.content
	case MethodPromptsGet:
		member, elem = "messages", u.message
	case MethodResourcesRead:
		member, elem = "contents", u.contents
	default:
		return res, nil
	}
	var ferr error
	out, err := editObject(make([]byte, 0, len(res)+64), res, func(k, val []byte) ([]byte, bool) {
		if string(k) != member || val[0] != '[' {
			return nil, false
		}
		out, dropped, err := filterArray(nil, val, elem)
		if err != nil {
			ferr = err
			return nil, false
		}
		if method == MethodResourcesRead && dropped > 0 && len(out) == 2 {
			ferr = errHiddenResource
		}
		return out, true
	})
	if err == nil {
		err = ferr
	}
	return out, err
}

// notification rewrites params.uri of notifications/resources/updated; false drops the
// notification.
func (u uriRewriter) notification(method string, params []byte) ([]byte, bool) {
	if method != notifResourcesUpdated {
		return params, true
	}
	if params == nil || params[0] != '{' {
		return nil, false
	}
	return u.uriMember(params, u.clientURI)
}

// errorData rewrites data.uri of a backend's error (SEP-2164: resource not found carries the
// URI). False: the URI is hidden or not normalisable, and the error must not be relayed as is.
func (u uriRewriter) errorData(data []byte) ([]byte, bool) {
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
func (u uriRewriter) contents(item []byte) ([]byte, bool) { return u.uriMember(item, u.clientURI) }

// uriMember rewrites the "uri" member of an object (resource contents); false when it has none,
// or one that must not be relayed.
func (u uriRewriter) uriMember(obj []byte, mapURI func(string) (string, bool)) ([]byte, bool) {
	out, found, keep := u.editURI(obj, mapURI)
	return out, found && keep
}

// editURI rewrites the "uri" member of an object, the name compared once its escapes are
// decoded (jsonrpc.Members): found says whether there is one, keep false when obj must not be
// relayed (no object, or a URI that cannot be normalised or is hidden).
func (u uriRewriter) editURI(obj []byte, mapURI func(string) (string, bool)) (out []byte, found, keep bool) {
	if obj[0] != '{' {
		return nil, false, false
	}
	keep = true
	out, err := editObject(make([]byte, 0, len(obj)+16), obj, func(k, val []byte) ([]byte, bool) {
		if string(k) != "uri" {
			return nil, false
		}
		found = true
		s, ok := jsonString(val)
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
func (u uriRewriter) content(block []byte) ([]byte, bool) {
	if block[0] != '{' || !mayNameURI(block) {
		return nil, true
	}
	var typ string
	_ = jsonrpc.Members(block, func(k, v []byte) error {
		if string(k) == "type" {
			typ, _ = jsonString(v)
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
		out, err := editObject(nil, block, func(k, val []byte) ([]byte, bool) {
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
func (u uriRewriter) message(msg []byte) ([]byte, bool) {
	if msg[0] != '{' || !mayNameURI(msg) {
		return nil, true
	}
	keep := true
	out, err := editObject(nil, msg, func(k, val []byte) ([]byte, bool) {
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
