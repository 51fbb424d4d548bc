package upstreams

import (
	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
	"github.com/mcp-gateway/gateway/upstreams/names"
)

// Kind is the kind of a namespaced item (see package names).
type Kind = names.Kind

// The kinds of items the gateway namespaces.
const (
	// KindTool is a tool name (tools/list, tools/call).
	KindTool = names.KindTool
	// KindPrompt is a prompt name (prompts/list, prompts/get).
	KindPrompt = names.KindPrompt
	// KindResource is a resource URI or URI template (resources/*, completion ref/resource).
	KindResource = names.KindResource
)

// Target is an item as the backend knows it: the backend name and the backend-side name or URI
// (see package names).
type Target = names.Target

// HiddenResourceMessage is the JSON-RPC error message (code -32602, HTTP 400) for a resource
// that does not exist or that the caller may not read (see names.HiddenResourceMessage).
const HiddenResourceMessage = names.HiddenResourceMessage

// UnknownResourceMessage is the JSON-RPC error message for a read of uri, as the caller sent
// it, that names no resource or one the caller may not read (see names.UnknownResourceMessage).
func UnknownResourceMessage(uri string) string { return names.UnknownResourceMessage(uri) }

// EchoName is name as an unknown-name answer quotes it back to its caller: bounded, quoted,
// its control characters escaped (see names.Echo).
func EchoName(name string) string { return names.Echo(name) }

// ErrHiddenResource: a resources/read result names only resources the caller may not see (see
// names.ErrHiddenResource); it is answered as a hidden resource is.
var ErrHiddenResource = names.ErrHiddenResource

// ClientResult checks the resource URIs of a result already in the client's namespace (one an
// interceptor changed) exactly as the URIs of a backend's result are checked: against the
// caller's read policy (visible) for a read's contents, its deny rules (embedded) for the
// resources of a tool or prompt result; see names.Rewriter.ClientResult.
func (r *Registry) ClientResult(method string, result []byte, visible, embedded func(Kind, Target) bool) ([]byte, error) {
	return names.Rewriter{Space: r.ns, Visible: visible, Embedded: embedded}.ClientResult(method, result)
}

// MCP method names the forwarder treats specially.
const (
	MethodToolsCall         = wire.MethodToolsCall
	MethodPromptsGet        = wire.MethodPromptsGet
	MethodResourcesRead     = wire.MethodResourcesRead
	MethodComplete          = wire.MethodComplete
	MethodToolsList         = wire.MethodToolsList
	MethodPromptsList       = wire.MethodPromptsList
	MethodResourcesList     = wire.MethodResourcesList
	MethodResourceTemplates = wire.MethodResourceTemplates
	MethodDiscover          = wire.MethodDiscover
	MethodListen            = wire.MethodListen
)

// NormalizeResource returns the normal form of a backend-side resource URI, or of a URI
// template when s holds a '{'. It is what policy sees and what the backend receives; an error
// wraps ErrBadURI and says why, without quoting s.
func NormalizeResource(s string) (string, error) { return names.NormalizeResource(s) }

// Resolve maps a namespaced name or URI to the backend that owns it and the backend-side name.
// A name that does not decode to a configured backend is ErrUnknownName: a client must never reach
// one backend by naming another's item.
func (r *Registry) Resolve(kind Kind, namespaced string) (Target, error) {
	return r.ns.Resolve(kind, names.Namespaced(namespaced))
}

// Namespaced is the inverse of Resolve: the namespaced name of a backend-side item.
func (r *Registry) Namespaced(kind Kind, t Target) string { return string(r.ns.Name(kind, t)) }

// ClientParams is a routed request's params (of method, routed to t, an item of kind) with the
// name or URI that routed it written as Namespaced spells t: a URI in the normal form the
// backend receives, whatever spelling of it the client sent (another case of its scheme, an
// escaped unreserved character, a dot segment). Everything else is copied byte for byte. It is
// the request as whatever judges it in the client's terms (an interceptor) must read it.
func (r *Registry) ClientParams(params []byte, method string, kind Kind, t Target) ([]byte, error) {
	return names.RewriteParams(nil, params, method, Target{Upstream: t.Upstream, Name: r.Namespaced(kind, t)})
}

// ClientResource maps a backend URI of upstream (in a result, an error, a notification) to
// what the client may see: its normal form and its client URI, or false when the URI cannot be
// normalised or visible (the caller's policy; nil allows all) hides it. Whatever is under such a
// URI is not relayed.
func (r *Registry) ClientResource(upstream, backendURI string, visible func(Kind, Target) bool) (Target, string, bool) {
	t, n, ok := r.ns.ClientResource(upstream, backendURI, visible)
	return t, string(n), ok
}
