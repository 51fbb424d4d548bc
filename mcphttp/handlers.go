package mcphttp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/mcpheader"
	"github.com/mcp-gateway/gateway/upstreams"
)

// handler is one entry of the closed method table: which param Mcp-Name mirrors (SEP-2243),
// and how the method is served once the request is validated and authenticated. A method
// routed to one backend has a target, and the pipeline takes it through stages route to forward; the
// others (lists, server/discover, subscriptions/listen) have serve instead.
type handler struct {
	nameParam string // "name", "uri", or "" when the method has no Mcp-Name
	// target reads what a routed call names: its kind and the namespaced name or URI.
	target func(x *request) (upstreams.Kind, string, error)
	// serve answers a method that is not routed to one backend.
	serve func(x *request) error
}

func (h *handler) requireName(p *jsonrpc.Params) error {
	switch {
	case h.nameParam == "name" && (!p.HasName || p.Name == ""):
		return invalidParams("Invalid params: name is required")
	case h.nameParam == "uri" && (!p.HasURI || p.URI == ""):
		return invalidParams("Invalid params: uri is required")
	}
	return nil
}

// newHandlers is the method table: the 2026-07-28 client requests the gateway serves (digest
// "Client requests"). Methods outside it get 404/-32601.
func newHandlers() map[string]*handler {
	list := &handler{serve: (*request).list}
	return map[string]*handler{
		"server/discover":          {serve: (*request).discover},
		"tools/list":               list,
		"prompts/list":             list,
		"resources/list":           list,
		"resources/templates/list": list,
		"tools/call":               {nameParam: "name", target: callKind(upstreams.KindTool)},
		"prompts/get":              {nameParam: "name", target: callKind(upstreams.KindPrompt)},
		"resources/read":           {nameParam: "uri", target: callKind(upstreams.KindResource)},
		"completion/complete":      {target: (*request).completionRef},
		"subscriptions/listen":     {serve: (*request).listen},
	}
}

// callKind is the target of a method that names what it calls in params: name, or uri for a
// resource.
func callKind(kind upstreams.Kind) func(x *request) (upstreams.Kind, string, error) {
	return func(x *request) (upstreams.Kind, string, error) {
		if kind == upstreams.KindResource {
			return kind, x.in.params.URI, nil
		}
		return kind, x.in.params.Name, nil
	}
}

// completionRef is the target of completion/complete, named by its ref: a prompt name or a
// resource (template) URI.
func (x *request) completionRef() (upstreams.Kind, string, error) {
	if x.in.params.Ref == nil {
		return 0, "", invalidParams("Invalid params: ref is required")
	}
	// Read exactly as ParseParams reads params: encoding/json would match "NAME" for name.
	ref, err := jsonrpc.ParseRef(x.in.params.Ref)
	if err != nil {
		return 0, "", err
	}
	// What the values of a resource template's completion are judged by (upstreams/names
	// ParseCompletion), read as every decoder behind the gateway reads it.
	if err := jsonrpc.CheckCompletion(x.in.req.Params); err != nil {
		return 0, "", err
	}
	switch {
	case ref.Type == "ref/prompt" && ref.Name != "":
		return upstreams.KindPrompt, ref.Name, nil
	case ref.Type == "ref/resource" && ref.URI != "":
		return upstreams.KindResource, ref.URI, nil
	}
	return 0, "", invalidParams("Invalid params: ref must be a ref/prompt with a name or a ref/resource with a uri")
}

// resolve is stage route: the namespaced name or URI to the backend that owns it and its
// backend-side name.
func (x *request) resolve(kind upstreams.Kind, name string) error {
	sent := name
	target, err := x.s.backends.Resolve(kind, name)
	if errors.Is(err, upstreams.ErrBadURI) {
		// Refused, never forwarded: the policy and the backend could read it differently.
		return invalidParams("Invalid params: " + strings.TrimPrefix(err.Error(), "upstreams: "))
	}
	if x.in.req.Method == upstreams.MethodToolsCall && x.s.backends.AppsEnabled() {
		// MCP Apps: app-only tools and the backends' own names an app calls (apps.go). From
		// here on name is the namespaced name, whatever the client sent.
		target, name, err = x.appRoute(name, target, err)
		if err != nil {
			return err
		}
	}
	if err != nil {
		return errUnknownName(kindNoun(kind))
	}
	if err := x.set.inSet(kind, target); err != nil {
		return err
	}
	if kind == upstreams.KindResource {
		// From here on a URI is named as authorised and forwarded: its normal form, never the
		// client's spelling of it, in log and audit lines, refusals, bindings and pins alike.
		name = x.s.backends.Namespaced(kind, target)
	}
	x.route.target = target
	x.route.upstream, x.route.name, x.route.upstreamName = target.Upstream, name, target.Name
	if kind == upstreams.KindResource && x.s.rails != nil {
		// Before any log line names the request (an interceptor's, a pin's, a denial's).
		x.route.uriScan = x.s.rails.scanURI(x, sent)
		x.route.nameHidden = x.route.uriScan.found()
	}
	return nil
}

// namedUnknown is err, unless err is an unknown-name answer for a tool, prompt or resource
// (errUnknownName, or upstreams.ErrUnknownName as a stage returned it, which mapError would
// answer as a bare "unknown name"): then the answer that names the item as the request names
// it, whichever stage refused it (no route, hidden by policy, left out by a tool set, not
// listed), so a hidden name and a missing one get the same bytes.
func namedUnknown(x *request, err error) error {
	var e *Error
	unknown := ""
	switch {
	case errors.As(err, &e):
		unknown = e.unknown
	case errors.Is(err, upstreams.ErrUnknownName):
		unknown = "name"
	}
	if unknown == "" || x.mutated || x.in.h == nil || x.in.h.target == nil {
		// An interceptor's mutation named the item, not the caller: the bare answer.
		return err
	}
	kind, name, terr := x.in.h.target(x)
	if terr != nil {
		return err
	}
	if unknown == "name" {
		unknown = kindNoun(kind)
	}
	return unknownNamed(unknown, name, separator(x.s.backends))
}

// separator is the namespace separator backends is configured with, "" when names are not
// namespaced (upstreams.noPrefix).
func separator(backends *upstreams.Registry) string {
	n := backends.Namespaced(upstreams.KindTool, upstreams.Target{Upstream: "b", Name: "t"})
	if len(n) < 3 {
		return ""
	}
	return n[1 : len(n)-1]
}

// forward is stage forward, with the sealing of a backend's round-trip state and the relay
// inside it: it calls target's backend in the backend's span and relays the backend's stream
// to the client as it comes.
func (x *request) forward(target upstreams.Target, params json.RawMessage) error {
	ctx, end := x.s.tracer.StartBackend(x.ctx, target.Upstream, x.in.req.Method)
	outcome, err := x.call(ctx, target, params)
	if x.s.tracer.Enabled() {
		if err != nil {
			outcome = mapError(err).Outcome
		}
		end(outcome, err)
	}
	return err
}

// call sends the request to target's backend and relays the response; it returns how the
// relayed response ended. With tracing on, ctx holds the backend span, whose traceparent the
// backend receives so its spans hang under it.
func (x *request) call(ctx context.Context, target upstreams.Target, params json.RawMessage) (string, error) {
	if tp := x.s.tracer.TraceParent(ctx); tp != "" {
		x.spanParent = tp
	}
	params, err := x.withTrace(params)
	if err != nil {
		return "", err
	}
	if params, err = capsWithoutContext(x, params); err != nil {
		return "", err
	}
	// Innermost: what the interceptors and guardrails pass on still asks for no context.
	ctx = asksWithoutContext(ctx, x)
	var asks *askChecks
	if x.rails != nil || x.s.intercept != nil {
		// A pre-2026 backend's mid-call requests and its client's answers are checked too.
		ctx, asks = checkedAsks(ctx, x)
	}
	// Armed before the call: a backend may hold even its response headers until it is done.
	x.out.KeepAlive(true)
	visible, embedded := x.resourcePolicy()
	st, err := x.s.backends.Call(ctx, &upstreams.Call{
		Method:          x.in.req.Method,
		ID:              x.in.req.ID,
		Params:          params,
		Target:          target,
		Spelling:        resourceSpelling(x, target),
		ProtocolVersion: x.in.meta.ProtocolVersion,
		LogLevel:        x.in.meta.LogLevel,
		ProgressToken:   x.in.meta.ProgressToken,
		Header:          x.callHeaders(),
		SubjectToken:    x.subjectToken(target.Upstream),
		SubjectKey:      x.caller.keyOf(x.subjectToken(target.Upstream)),
		Visible:         visible,
		Embedded:        embedded,
		Caller:          x.subject(),
		Bound:           x.bound(),
		UserToken:       x.route.userToken,
	})
	if err != nil {
		return "", err
	}
	defer st.Close()
	return x.relay(st, asks)
}

// passHeaders selects what the backend may see of the client's headers: the Mcp-Param-*
// mirrors (intermediaries MUST forward them, docs/protocol.md §2.2), trace context and the request id.
// Authorization and cookies are never among them.
func (x *request) passHeaders() http.Header {
	out := make(http.Header, 4)
	// No Mcp-Param-* header of the client's: the only ones a backend receives are those
	// bindParamHeaders bound to a tools/call's arguments (callHeaders).
	// Trace context from the caller's headers, or from its _meta when it sent none (SEP-414),
	// validated; invalid values are dropped. With tracing on, the parent is the gateway's span.
	for k, v := range x.trace().headers() {
		out[k] = v
	}
	out[mcpheader.RequestID] = x.requestIDValue
	return out
}

// callHeaders is passHeaders for a routed call: for tools/call, with the Mcp-Param-* headers
// bindParamHeaders recomputed from the body, never the client's.
func (x *request) callHeaders() http.Header {
	h := x.passHeaders()
	for k, v := range x.route.paramHeaders {
		h[k] = v
	}
	return h
}

func kindNoun(k upstreams.Kind) string {
	switch k {
	case upstreams.KindPrompt:
		return "prompt"
	case upstreams.KindResource:
		return "resource"
	}
	return "tool"
}

// list fans a list method out to the backends and answers with the merged, filtered page.
func (x *request) list() error {
	visible, filtered := x.visibility()
	params, err := x.withTrace(x.in.req.Params)
	if err != nil {
		return err
	}
	req := &upstreams.ListRequest{
		Method:  x.in.req.Method,
		Params:  params,
		Visible: visible,
		Private: filtered,
		Header:  x.passHeaders(),
		// Lists a backend marks private are cached per authorization context only.
		CacheKey:     x.subject(),
		SubjectToken: x.listSubjectToken(),
		SubjectKey:   x.caller.keyOf(x.listSubjectToken()),
		Reaches:      reachesFor(x.set, x.s.auth, x.caller.principal),
	}
	if x.set != nil {
		req.View = x.set.path // a cursor cut on one endpoint is refused on another
	}
	// Items a call would 403 are listed, marked, where policy opts in, so a host can ask for
	// the scopes before calling.
	req.Discoverable = x.discoverable()
	res, err := x.s.backends.List(x.ctx, req)
	if err != nil {
		return err
	}
	return x.answer(res, outcomeOK)
}

// discover answers server/discover from the gateway itself (docs/protocol.md §1): the versions
// it serves and the merged capabilities of its backends, cacheable for as long as every
// backend's answer.
func (x *request) discover() error {
	b, err := x.discoverResult(nil)
	if err != nil {
		return err
	}
	return x.answer(b, outcomeOK)
}

// discoverResult is the server/discover result, from the backends' cached answers. serverInfo,
// when set, is added in _meta (as a response to the client carries it) for a pre-2026 client's
// initialize, which is answered from the same data. On a tool set's endpoint a set is a boundary
// for what it serves: its own instructions, or the gateway's, or those of the backends it selects
// from, never another backend's; a search endpoint adds how to search.
func (x *request) discoverResult(serverInfo json.RawMessage) ([]byte, error) {
	d, err := x.s.backends.Capabilities(x.ctx, x.passHeaders())
	if err != nil {
		return nil, err
	}
	res := struct {
		SupportedVersions []string        `json:"supportedVersions"`
		Capabilities      json.RawMessage `json:"capabilities"`
		Instructions      string          `json:"instructions,omitempty"`
		TTLMs             int64           `json:"ttlMs"`
		CacheScope        string          `json:"cacheScope"`
		Meta              json.RawMessage `json:"_meta,omitempty"`
	}{[]string{ProtocolVersion}, d.Capabilities, "", d.TTL.Milliseconds(), "public", nil}
	var private bool
	res.Instructions, private = x.instructions(d)
	if private {
		res.CacheScope = "private"
	}
	if serverInfo != nil {
		res.Meta = append(append([]byte(`{"`+jsonrpc.MetaServerInfo+`":`), serverInfo...), '}')
	}
	return json.Marshal(res)
}

// instructions are the server instructions of this endpoint: see discoverResult. The backends'
// own are those of the backends the endpoint's set covers and the caller's policy reaches
// (authz.Policy.Reaches): a backend's instructions name it and describe its tools, which a
// caller the policy gives nothing of must not learn. private says the text depends on the
// caller, so the answer must not be shared between callers.
func (x *request) instructions(d *upstreams.Discovery) (instr string, private bool) {
	ts := x.set
	if ts != nil && ts.instructions != "" {
		return ts.instructions, false
	}
	instr = x.s.instructions
	if instr == "" {
		var parts []string
		for _, b := range d.Each {
			if ts != nil && !ts.coversBackend(b.Upstream) {
				continue
			}
			if x.s.auth != nil {
				private = true
				if !x.s.auth.Reaches(x.caller.principal, b.Upstream) {
					continue
				}
			}
			parts = append(parts, b.Upstream+": "+b.Text)
		}
		instr = strings.Join(parts, "\n\n")
	}
	if ts != nil && ts.search != nil {
		instr = strings.TrimSpace(instr + "\n\n" + searchInstructions)
	}
	return instr, private
}

// resourcePolicy is the caller's policy for the resources a backend's answer names: visible
// for what it may read (resources/read contents, resources/updated), embedded for what may
// appear in a tool or prompt result (not covered by a deny rule). Nil, nil without auth.
func (x *request) resourcePolicy() (visible, embedded func(upstreams.Kind, upstreams.Target) bool) {
	if x.s.auth == nil {
		return nil, nil
	}
	visible, _ = x.visibility()
	p := x.caller.principal
	return visible, func(k upstreams.Kind, t upstreams.Target) bool {
		return !x.s.auth.Denied(p, authzKinds[k], t.Upstream, t.Name)
	}
}
