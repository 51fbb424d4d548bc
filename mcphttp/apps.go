package mcphttp

import (
	"encoding/json"
	"errors"
	"strconv"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/pins"
	"github.com/mcp-gateway/gateway/upstreams"
)

// MCP Apps at stage route (docs/apps.md), with the apps switch on (upstreams.AppsConfig):
//
//   - A tools/call that names a tool by its namespaced name is the model's path: the name the
//     gateway lists. A tool whose visibility leaves out "model" is refused there exactly as an
//     unknown tool, so a model that guessed the name learns nothing.
//   - A tools/call that names no namespaced tool may be an app's: an app's HTML was written for
//     its backend and calls the backend's own tool names, which the host forwards as they are.
//     Nothing in the request says that an app made the call, or which backend's app (the ext-apps
//     specification 2026-01-26 defines no such member, and the reference host bridge adds none),
//     so the gateway routes such a name only where no reading is left open: to the one backend
//     serving apps whose list shows a tool of that name that apps may call. Two backends with it
//     is a clear refusal, never a guess. From then on the call is the namespaced tool's: policy,
//     pins, confirmation, rate limits, metrics and logs see that name, never the one sent.
//   - call_tool of search mode is the model's own meta-tool: it never takes a backend's name.

// appRoute is stage route for a tools/call when the apps switch is on: the target and namespaced
// name of name, or errUnknownName. resolved is the result of resolving name as a namespaced name.
func (x *request) appRoute(name string, resolved upstreams.Target, err error) (upstreams.Target, string, error) {
	q := &upstreams.ToolHeaderQuery{
		ProtocolVersion: x.in.meta.ProtocolVersion,
		Header:          x.trace().headers(),
		CacheKey:        x.subject(),
		Fetch:           true,
	}
	if err == nil {
		if x.s.backends.Namespaced(upstreams.KindTool, resolved) == resolved.Name {
			// Without prefixes (namespace.noPrefix) the model's name is the app's too: the
			// gateway cannot tell the two paths apart and leaves visibility to the host.
			return resolved, name, nil
		}
		q.SubjectToken = x.subjectToken(resolved.Upstream)
		q.SubjectKey = x.caller.keyOf(q.SubjectToken)
		hidden, err := x.s.backends.ModelHidden(x.ctx, q, resolved)
		switch {
		case err != nil:
			return upstreams.Target{}, "", err
		case hidden:
			return upstreams.Target{}, "", errUnknownName("tool")
		}
		return resolved, name, nil
	}
	if x.viaCallTool || x.era.version == v20250326 {
		// A 2025-03-26 client is sent no tool's _meta (that revision's tools have none), so it
		// renders no app: a backend's own name from it is never an app's call, and an app-only
		// tool stays out of its reach by name as by list.
		return upstreams.Target{}, "", errUnknownName("tool")
	}
	q.SubjectToken = x.listSubjectToken()
	q.SubjectKey = x.caller.keyOf(q.SubjectToken)
	target, err := x.s.backends.ResolveAppName(x.ctx, q, name, callableHere(x, upstreams.KindTool))
	switch {
	case errors.Is(err, upstreams.ErrAmbiguousAppName):
		return upstreams.Target{}, "", errAmbiguousAppName(name)
	case errors.Is(err, upstreams.ErrUnknownName):
		return upstreams.Target{}, "", errUnknownName("tool")
	case err != nil:
		return upstreams.Target{}, "", err
	}
	return target, x.s.backends.Namespaced(upstreams.KindTool, target), nil
}

// callableHere returns whether this caller, on this endpoint, could call a tool, or get a
// prompt (kind): the endpoint's tool set selects it and the policy answers a call of it as the
// item's own. An app's backend name is resolved among tools so callable only (ResolveAppName),
// so a backend the caller may not use neither makes the name ambiguous nor is sent anything, and
// the refusals tell the caller nothing of it; a pin-drift refusal names the tool or prompt a
// clone shadows only when it is such an item (shadowed). A function, not a method: the request
// type keeps its method budget.
func callableHere(x *request, kind upstreams.Kind) func(upstreams.Target) bool {
	set, auth, p := x.set, x.s.auth, x.caller.principal
	return func(t upstreams.Target) bool {
		if set != nil && !set.selects(kind, t) {
			return false
		}
		return auth == nil || auth.Callable(p, authzKinds[kind], t.Upstream, t.Name)
	}
}

// v20250326 is the protocol revision whose clients are sent no tool _meta, so no MCP App (the
// pre-2026 edge labels their requests with it, Incoming.SetEra).
const v20250326 = "2025-03-26"

// Member names checkUIRead judges, compared with jsonrpc.FoldEqual.
var (
	keyContents = []byte("contents")
	keyMeta     = []byte("_meta")
	keyUI       = []byte("ui")
)

// errAmbiguousAppName refuses a backend's own tool name that more than one backend serving apps
// has: the gateway cannot tell whose app called, and guessing could run another backend's tool.
// The message names neither the backends nor their tools, which the caller may not be allowed to
// see.
func errAmbiguousAppName(name string) *Error {
	return rpcError(jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: tool "+strconv.Quote(name)+
		" is not a namespaced name, and more than one backend serving MCP Apps has a tool of that name: "+
		"the gateway cannot tell which backend's app called it, so it did not forward the call").
		WithData(map[string]any{"reason": "ambiguous-tool-name"}))
}

// checkUIRead holds a resources/read result of a pinned MCP App UI resource to its pin: a host
// prefers the _meta.ui of a content item (its CSP domains, permissions, sandbox domain) over
// the listed resource's, which pinning judged at stage pin, so a content item must carry the
// pinned _meta.ui or none. Each "_meta" and "ui" member is judged, duplicates included, with
// names compared as the widest client decoder reads them (jsonrpc.FoldEqual: a host decoding
// names case-insensitively takes "_META" or "Contents" for the member it judges, and reads the
// last of them). A difference is ui-changed: with its action log the
// result is relayed and logged; otherwise it is refused as a blocked item, since a read's
// content cannot be confirmed once the backend has answered (a read has no effect to undo).
func (x *request) checkUIRead(result []byte) error {
	pin := x.route.uiReadPin
	same := true
	_ = jsonrpc.Members(result, func(k, contents []byte) error {
		if !jsonrpc.FoldEqual(k, keyContents) || contents[0] != '[' {
			return nil
		}
		var items []json.RawMessage
		if err := json.Unmarshal(contents, &items); err != nil {
			same = false // the scan let it through; judged unreadable, never relayed unjudged
			return nil
		}
		for _, item := range items {
			if item[0] != '{' {
				continue
			}
			_ = jsonrpc.Members(item, func(k, meta []byte) error {
				if !jsonrpc.FoldEqual(k, keyMeta) || meta[0] != '{' {
					return nil
				}
				return jsonrpc.Members(meta, func(k, ui []byte) error {
					if jsonrpc.FoldEqual(k, keyUI) && !pin.SameUIMeta(ui) {
						same = false
					}
					return nil
				})
			})
		}
		return nil
	})
	if same {
		return nil
	}
	v := pins.Verdict{Classes: pins.Set(0).Add(pins.ClassUIChanged), Action: pin.Action}
	if pin.Action == pins.ActionLog {
		x.logPin("pin drift: UI resource content relayed", v)
		return nil
	}
	v.Action = pins.ActionBlock
	x.logPin("pin drift: UI resource content refused", v)
	return pinDriftError(x.route.pinItem, v, "")
}
