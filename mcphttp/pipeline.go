package mcphttp

// The pipeline of a POST to the MCP endpoint, declared: the stages in order, each a named
// function with the reason it sits where it does. run is the one loop that runs them; nothing
// else decides their order. A stage either lets the request go on, answers it (an exit: the
// request is done), or fails it with an error, which the edge maps once and writes.
//
// A request another edge built (internal: the pre-2026 edge's translation of its client's
// request, Incoming.Run) runs only the stages marked internal: its transport checks, decode,
// authentication and admission were that edge's, once for the whole client request.
//
// docs/architecture.md lists these stages by name; TestArchitectureStages keeps the two in step.

import (
	"slices"

	"github.com/mcp-gateway/gateway/upstreams"
)

// stage is one step of the pipeline.
type stage struct {
	// name is the stage's name in docs/architecture.md and in comments ("stage route").
	name string
	// run does the stage's work. done reports that it answered the request: no later stage runs.
	run func(s *Server, x *request) (done bool, err error)
	// internal runs the stage for a request another edge built, too.
	internal bool
	// why is the reason for its place in the order.
	why string
}

// stages is the pipeline, in order.
var stages = [...]stage{
	{"guard", stageGuard, false,
		"Origin, Host, Content-Type, Accept and the bounded body read cost nothing and need no secret: hostile transport-level input is refused before any other work"},
	{"decode", stageDecode, false,
		"one strict decode of the message, its params and _meta; every later stage reads the typed value, none re-reads the body"},
	{"era", stageEra, false,
		"exit: the era is decided once, right after the decode, so a pre-2026 client's request leaves for its edge before any 2026-07-28 rule applies"},
	{"notification", stageNotification, false,
		"exit: 2026-07-28 defines no client notifications over HTTP; one is authenticated and admitted like any request (a bad token is 401, not 202), then accepted (202) and dropped"},
	{"version", stageVersion, false,
		"MCP-Protocol-Version against _meta and a served version before the method, the order the reference SDKs and the conformance suite use"},
	{"method", stageMethod, true,
		"the closed method table: anything else is -32601; the header checks need the method's entry"},
	{"headers", stageHeaders, false,
		"Mcp-Method, Mcp-Name and each Mcp-Param-* against the body, once the method says what Mcp-Name mirrors"},
	{"authenticate", stageAuthenticate, false,
		"before routing: a caller without a valid token never learns whether a name exists"},
	{"admit", stageAdmit, false,
		"the in-flight slots and the caller's rate limit, taken only by authenticated callers, held until the response is written"},
	{"endpoint", stageEndpoint, true,
		"exit: a search endpoint answers find_tools and its tools/list; call_tool becomes the tools/call of the inner tool, which every later stage sees"},
	{"unrouted", stageUnrouted, true,
		"exit: lists, server/discover and subscriptions/listen are not routed to one backend: they filter by policy and fan out or listen in their handlers"},
	{"route", stageRoute, true,
		"the namespaced name or URI to (backend, backend-side name), since policy is written in backend terms; an MCP App's call by its backend's own tool name becomes the namespaced tool here, so every later stage sees only that"},
	{"authorize", stageAuthorize, true,
		"allow, step-up or hidden for this caller and target; needs the principal and the route"},
	{"connect", stageConnect, true,
		"exit: a per-user backend's call goes on only with the caller's own token, else the user is sent to connect an account; once authorized, and before pin and bind-headers, which may list the backend's tools with that token"},
	{"pin", stagePin, true,
		"a drifted definition is refused (block) or confirmed: once authorized, so a hidden item reveals no drift"},
	{"bind-headers", stageBindHeaders, true,
		"a tools/call or prompts/get goes on only under a name its backend's list shows the caller (a backend may fold names no rule matched), and a tools/call's Mcp-Param-* headers are bound to its arguments, before any interceptor, guardrail or confirmation sees it"},
	{"intercept", stageIntercept, true,
		"interceptors see only a call that is authorized and pinned; a mutated call goes through route to bind-headers again, then is confirmed as mutated: what is checked and confirmed is what is forwarded"},
	{"guardrails", stageGuardrails, true,
		"arguments are checked as the backend will get them, once authorized and pinned (a refusal reveals nothing of a hidden tool) and before a person is asked to confirm them, so a confirmation shows what is forwarded"},
	{"mrtr-in", stageMRTRIn, true,
		"only an authorized call may be confirmed or resumed: a retry's requestState opened, confirmations asked or answered, nonces consumed"},
	{"limit-tool", stageLimitTool, true,
		"the rate limit of the rule that allowed the call, after any confirmation, so only calls that reach the backend count"},
	{"forward", stageForward, true,
		"the first stage that sends the client's request to a backend; it seals a backend's round-trip state and relays the response as it comes"},
}

// run runs x through the pipeline: from the first stage, or for a request another edge built
// from the first internal one.
func (s *Server) run(x *request) error {
	for i := range stages {
		st := &stages[i]
		if x.internal && !st.internal {
			continue
		}
		done, err := st.run(s, x)
		if err != nil {
			err = namedUnknown(x, err)
		}
		if err != nil && s.drafts.denials {
			// A refusal the draft gives another shape (denials.go); with the switch off
			// this costs the one test.
			return s.drafts.asDenial(x, err)
		}
		if err != nil || done {
			return err
		}
	}
	return nil
}

// Names of the stages a mutated request runs again (stage intercept): from route up to, not
// including, intercept.
const (
	stageFirstRechecked = "route"
	stageNameIntercept  = "intercept"
)

// stagesBetween returns the stages from the one named from up to, not including, the one named
// until, in the pipeline's order. The server keeps those a mutated request runs again
// (Server.recheck), so the stage functions need not refer to the list they are in.
func stagesBetween(from, until string) []stage {
	i := slices.IndexFunc(stages[:], func(st stage) bool { return st.name == from })
	j := slices.IndexFunc(stages[:], func(st stage) bool { return st.name == until })
	return stages[i:j]
}

// recheck runs x through the stages a request an interceptor changed must pass again: those that
// checked the client's request from route on (Server.recheck). None of them answers a request
// itself.
func (s *Server) recheck(x *request) error {
	for i := range s.rechecks {
		if done, err := s.rechecks[i].run(s, x); err != nil || done {
			return err
		}
	}
	return nil
}

// The stages' functions, in the order of the pipeline. Each is the adapter between the request
// value and the function that does the work, which takes only what it needs.

func stageGuard(s *Server, x *request) (bool, error) { return false, s.guard(x) }

func stageDecode(s *Server, x *request) (bool, error) {
	x.in.err = s.decode(x)
	// The span starts even for a body that does not decode.
	x.startSpan()
	return false, nil
}

func stageEra(s *Server, x *request) (bool, error) {
	if s.edge != nil {
		if served, err := s.edge.ServePost(&Incoming{x: x}, x.in.err); served {
			return true, err
		}
	}
	return false, x.in.err
}

func stageNotification(s *Server, x *request) (bool, error) {
	if !x.in.req.IsNotification() {
		return false, nil
	}
	// Every HTTP request carries the caller's token and is answered 401 when it fails
	// (MCP authorization), a notification the gateway drops included; and it counts against
	// the caller's slots and rate limit, as a pre-2026 session's notifications do.
	if err := s.authenticate(x); err != nil {
		return true, err
	}
	if err := s.admit(x); err != nil {
		return true, err
	}
	x.client.Accepted()
	return true, nil
}

func stageVersion(s *Server, x *request) (bool, error) {
	return false, checkVersion(x.hdr, x.in.meta, x.in.req)
}

func stageMethod(s *Server, x *request) (bool, error) {
	h, err := lookupMethod(s.handlers, x.in.req.Method)
	x.in.h = h
	return false, err
}

func stageHeaders(s *Server, x *request) (bool, error) {
	return false, checkHeaders(x.hdr, x.in.h, x.in.req.Method, x.in.params)
}

func stageAuthenticate(s *Server, x *request) (bool, error) { return false, s.authenticate(x) }

func stageAdmit(s *Server, x *request) (bool, error) { return false, s.admit(x) }

func stageEndpoint(s *Server, x *request) (bool, error) { return s.search.endpoint(x) }

func stageUnrouted(s *Server, x *request) (bool, error) {
	if !pooledBody[x.in.req.Method] {
		// Lists and listens may hand slices of the body to work that outlives the request (a
		// shared listen stream keeps the client's _meta): the buffer goes to the garbage
		// collector instead of the pool, and stops counting against the body budget now.
		x.in.bodyBuf.Detach()
	}
	if x.in.h.target != nil {
		return false, nil
	}
	return true, x.in.h.serve(x)
}

func stageRoute(s *Server, x *request) (bool, error) {
	kind, name, err := x.in.h.target(x)
	if err != nil {
		return false, err
	}
	x.route.kind = kind
	return false, x.resolve(kind, name)
}

func stageAuthorize(s *Server, x *request) (bool, error) {
	if s.drafts.denials && x.in.meta.AuthorizationContextID != nil && !x.mutated {
		// A retry echoing a denial's handle: logged, never decisive. Once, for the call as the
		// client sent it: not again when a mutation's re-checks pass here.
		s.drafts.correlate(x)
	}
	return false, x.authorize(x.route.kind, x.route.target)
}

func stageConnect(s *Server, x *request) (bool, error) {
	if s.userOAuth == nil {
		return false, nil
	}
	return s.connect(x)
}

func stagePin(s *Server, x *request) (bool, error) { return false, x.checkPin(x.route.target) }

func stageBindHeaders(s *Server, x *request) (bool, error) {
	switch x.in.req.Method {
	case upstreams.MethodToolsCall:
		return false, x.bindParamHeaders(x.route.target)
	case upstreams.MethodPromptsGet:
		return false, checkListedPrompt(x, x.route.target)
	case upstreams.MethodComplete:
		if x.route.kind == upstreams.KindPrompt {
			return false, checkListedPrompt(x, x.route.target)
		}
	}
	return false, nil
}

func stageIntercept(s *Server, x *request) (bool, error) {
	if s.intercept == nil {
		return false, nil
	}
	return s.intercept.request(x)
}

func stageGuardrails(s *Server, x *request) (bool, error) {
	if s.rails == nil {
		return false, nil
	}
	return s.rails.checkRequest(x)
}

func stageMRTRIn(s *Server, x *request) (bool, error) {
	params, handled, err := s.confirm.mrtrIn(x, x.route.target)
	x.route.params = params
	return handled, err
}

func stageLimitTool(s *Server, x *request) (bool, error) { return false, x.limitTool() }

func stageForward(s *Server, x *request) (bool, error) {
	return true, x.forward(x.route.target, x.route.params)
}
