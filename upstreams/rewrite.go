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
					return appendString(nil, t.Name), true
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
		return appendString(nil, t.Name), true
	})
	if err == nil {
		err = bad
	}
	return out, err
}

// uriRewriter maps backend-side resource URIs found in results back to namespaced form.
type uriRewriter struct {
	ns       *namespace
	upstream string
}

const quotedURI = `"uri"`

// result rewrites the URIs in the result of method, or returns it unchanged when there are none
// to rewrite (most results: checked with one bytes.Contains before any parsing).
func (u uriRewriter) result(method string, res []byte) ([]byte, error) {
	if u.ns.noPrefix || !bytes.Contains(res, []byte(quotedURI)) {
		return res, nil
	}
	var member string
	var elem func([]byte) ([]byte, bool)
	switch method {
	case MethodToolsCall:
		member, elem = "content", u.content
	case MethodPromptsGet:
		member, elem = "messages", u.message
	case MethodResourcesRead:
		member, elem = "contents", u.uriMember
	default:
		return res, nil
	}
	return editObject(make([]byte, 0, len(res)+64), res, func(k, val []byte) ([]byte, bool) {
		if string(k) != member || val[0] != '[' {
			return nil, false
		}
		out, err := editArray(nil, val, elem)
		return out, err == nil
	})
}

// notification rewrites params.uri of notifications/resources/updated.
func (u uriRewriter) notification(method string, params []byte) []byte {
	if method != notifResourcesUpdated || u.ns.noPrefix || params == nil || params[0] != '{' {
		return params
	}
	if out, ok := u.uriMember(params); ok {
		return out
	}
	return params
}

// uriMember rewrites the "uri" member of an object (resource contents, resource_link).
func (u uriRewriter) uriMember(obj []byte) ([]byte, bool) {
	if obj[0] != '{' {
		return nil, false
	}
	out, err := editObject(make([]byte, 0, len(obj)+16), obj, func(k, val []byte) ([]byte, bool) {
		if string(k) != "uri" {
			return nil, false
		}
		s, ok := jsonString(val)
		if !ok {
			return nil, false
		}
		return appendString(nil, u.ns.name(KindResource, Target{Upstream: u.upstream, Name: s})), true
	})
	return out, err == nil
}

// content rewrites a content block: resource_link carries "uri", an embedded resource carries
// "resource":{"uri":…} (digest §5.2). Other block types have neither member.
func (u uriRewriter) content(block []byte) ([]byte, bool) {
	if block[0] != '{' || !bytes.Contains(block, []byte(quotedURI)) {
		return nil, false
	}
	out, ok := u.uriMember(block)
	if !ok {
		return nil, false
	}
	out, err := editObject(nil, out, func(k, val []byte) ([]byte, bool) {
		if string(k) != "resource" {
			return nil, false
		}
		return u.uriMember(val)
	})
	return out, err == nil
}

// message rewrites the content of a prompt message, an object or (tolerated) an array of blocks.
func (u uriRewriter) message(msg []byte) ([]byte, bool) {
	if msg[0] != '{' || !bytes.Contains(msg, []byte(quotedURI)) {
		return nil, false
	}
	out, err := editObject(nil, msg, func(k, val []byte) ([]byte, bool) {
		if string(k) != "content" {
			return nil, false
		}
		if val[0] == '[' {
			o, err := editArray(nil, val, u.content)
			return o, err == nil
		}
		return u.content(val)
	})
	return out, err == nil
}
