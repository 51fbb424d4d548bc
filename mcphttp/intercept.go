package mcphttp

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/mcp-gateway/gateway/internal/intercept"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/mcpheader"
	"github.com/mcp-gateway/gateway/mrtr"
	"github.com/mcp-gateway/gateway/upstreams"
)

// interceptor runs the out-of-process interceptors (docs/interceptors.md): stage intercept for
// the request, and the response phase inside stage forward, on the backend's last message before
// the client sees it. The server holds nil when none is configured, and then neither phase costs
// anything.
//
// A mutated request is routed, authorized, pinned and bound again (the stages route to
// bind-headers, in the pipeline's order) before stage mrtr-in confirms it: what is checked, and
// what a person confirms, is what the backend receives. A mutation into a call this caller may
// not make is refused.
type interceptor struct {
	set *intercept.Set
	log *slog.Logger
}

// maxReplans bounds how often a call renamed by a mutation is planned again: the new target may
// be governed by other interceptors, which may rename it once more.
const maxReplans = 3

// request is stage intercept. done reports that it answered the request (a refusal).
//
// A pass is run again when its mutation leaves the call one its interceptors have not judged as
// the gateway reads it: renamed into a call other interceptors govern, or naming its target in a
// spelling other than the one the gateway routes by (a resource URI the mutator wrote with an
// upper-case scheme, an escape or a dot segment, which a validator of its pass read as written,
// while the call goes to the resource its normal form names).
func (c *interceptor) request(x *request) (done bool, err error) {
	var ran *intercept.Plan
	var judged []byte // the payload the validators of the last pass were shown
	for passes := 0; ; passes++ {
		p := c.set.Plan(intercept.PhaseRequest, x.in.req.Method, x.route.upstream, x.route.upstreamName)
		if p == nil {
			return false, nil
		}
		params, err := shownParams(x)
		if err != nil {
			return false, err
		}
		payload, err := intercept.RequestPayload(x.in.req.Method, params)
		if err != nil {
			return false, err
		}
		if p.Same(ran) && sameTarget(payload, judged) {
			// The interceptors that govern the call have just judged it, named as the gateway
			// routes it.
			return false, nil
		}
		if passes == maxReplans {
			break
		}
		if err := readAlike(payload); err != nil {
			return false, err
		}
		call := c.call(x, payload)
		call.Check = mutationReadAlike
		v := c.set.Run(x.ctx, p, call)
		if v.Blocked {
			return true, c.refuse(x, intercept.PhaseRequest, &v, nil)
		}
		if !v.Mutated {
			return false, nil
		}
		if err := c.apply(x, &v); err != nil {
			return true, c.notPermitted(x, &v, err)
		}
		ran, judged = p, v.Payload
	}
	c.log.LogAttrs(x.ctx, slog.LevelWarn, "interceptors kept renaming the call: refused",
		slog.String("request_id", x.requestID), slog.String("name", logName(x)))
	return true, c.refusal(x, intercept.PhaseRequest, "The call to "+x.route.name+
		" was refused: the gateway's interceptors kept changing it into other calls; it was not run.", "")
}

// sameTarget reports whether two request-phase payloads name the same target the same way: the
// params' name and uri, decoded, equal (a payload that cannot be read names nothing alike).
func sameTarget(a, b []byte) bool {
	ta, oka := targetOf(a)
	tb, okb := targetOf(b)
	return oka && okb && ta == tb
}

// targetOf returns the name and uri members of a request-phase payload's params, decoded.
func targetOf(payload []byte) (target [2]string, ok bool) {
	var params []byte
	if jsonrpc.Members(payload, func(key, val []byte) error {
		if string(key) == "params" {
			params = val
		}
		return nil
	}) != nil || params == nil {
		return target, false
	}
	err := jsonrpc.Members(params, func(key, val []byte) error {
		switch string(key) {
		case "name":
			return json.Unmarshal(val, &target[0])
		case "uri":
			return json.Unmarshal(val, &target[1])
		}
		return nil
	})
	return target, err == nil
}

// readAlike refuses a request-phase payload that JSON parsers read as different values, before
// an interceptor judges it: an integer literal beyond ±2^53 or a fraction or exponent no double
// says as written, which a decoder into doubles (JavaScript's JSON.parse, Go's interface{})
// reads as a neighbour and a decoder into integers or decimals exactly, and a string with a
// lone surrogate escape (U+FFFD to Go, the surrogate itself to JavaScript and Python). The
// interceptor would allow or mutate the value its parser reads while the backend acts on the
// value its own reads. The rule is a confirmation's (mrtr.DigestConfirmable), for the same
// reason: the judge's reading must be the backend's, whichever parsers the two use.
func readAlike(payload []byte) error {
	if why := readDifferently(payload); why != "" {
		return invalidParams("Invalid params: the call cannot be put to the gateway's interceptors: " + why)
	}
	return nil
}

// mutationReadAlike holds a request mutation to readAlike's rule: a mutator that writes what
// parsers read as different values would have the validators after it, the guardrails and the
// backend act on different calls, as a client would. Its Call.Check: a mutation it refuses is
// a failure of the mutator, routed by its failOpen, never shown on nor forwarded.
func mutationReadAlike(mutated []byte) error {
	if why := readDifferently(mutated); why != "" {
		return errors.New("the mutated call holds what JSON parsers read as different values: " + why)
	}
	return nil
}

// readDifferently says why JSON parsers read payload as different values ("" when they read it
// alike): where it holds what readAlike refuses, never what it holds there.
func readDifferently(payload []byte) string {
	if _, err := mrtr.DigestConfirmable(payload); err != nil {
		return strings.TrimPrefix(err.Error(), mrtr.ErrInvalidArguments.Error()+": ")
	}
	return ""
}

// shownParams are x's params as the interceptors are shown them in the call's request phase, its
// client's answers mid-call included: with the routed name or URI as the gateway reads it and
// the backend receives it, not as the client spelt it (a validator that refuses mem://items/beta
// must see that URI however the client wrote it). Its _meta carries the trace context the backend
// receives (traceparent, tracestate, baggage: the client's headers win over its _meta), so a
// check of the payload also reads the baggage a client sent as a header, which would otherwise
// reach the backend past every interceptor. A mutation must keep those members as shown.
func shownParams(x *request) ([]byte, error) {
	params, err := x.s.backends.ClientParams(x.in.req.Params, x.in.req.Method, x.route.kind, x.route.target)
	if err != nil {
		return nil, err
	}
	return x.withTrace(params)
}

// response is the response phase: the result the backend returned, before the client sees it,
// of kind (resultShape's). It returns the result to release (the backend's, or a mutation), or
// the refusal to answer with instead (a failed tool call), or an error.
func (c *interceptor) response(x *request, result []byte, kind resultKind) (release, refusal []byte, err error) {
	p := c.set.Plan(intercept.PhaseResponse, x.in.req.Method, x.route.upstream, x.route.upstreamName)
	if p == nil {
		return result, nil, nil
	}
	call := c.call(x, result)
	call.Check = func(m []byte) error { return sameKind(x, m, kind) }
	v := c.set.Run(x.ctx, p, call)
	if !v.Blocked && v.Mutated {
		return c.checkURIs(x, &v)
	}
	if !v.Blocked {
		return v.Payload, nil, nil
	}
	var tool []byte
	err = c.refuse(x, intercept.PhaseResponse, &v, &tool)
	return nil, tool, err
}

// sameKind checks a mutated result as the backend's was checked (resultShape), and that it is
// of the backend's kind: the relay decided on the backend's result what it seals as a round
// trip, counts as a round and labels, and what the pre-2026 edge asks its client, so what the
// client receives must be that kind. A mutation into another kind (an input_required result
// the backend never sent, which would seal a round it never began, or a complete result in
// the place of its round, which would end one it is in; a task result) or into a result of a
// shape the protocol forbids is refused: a failure of the mutator, never released. A tool
// result turned into a tool error (isError) is of the same kind: nothing before the
// interceptors decided on it, and the guardrails read the result as mutated.
func sameKind(x *request, mutated []byte, kind resultKind) error {
	k, err := resultShape(x, mutated)
	var e *Error
	switch {
	case errors.As(err, &e):
		return errors.New("the mutated result is one the protocol forbids: " + strings.TrimPrefix(e.RPC.Message, invalidResultPrefix))
	case err != nil:
		return err
	case k != kind:
		return errors.New("the mutated result is of another kind than the backend's (" + kindNames[k] + " for " + kindNames[kind] + ")")
	}
	return nil
}

// kindNames name the result kinds in a refusal of a mutation.
var kindNames = [...]string{kindComplete: "complete", kindInputRequired: "input_required", kindTask: "task"}

// checkURIs holds a mutated result's resource URIs to the caller's resource policy, as the
// backend's were before the interceptors saw them: what sits under a URI the caller may not see
// is dropped, and a read left with nothing is answered as a hidden resource. Should the check
// fail (the mutation was read strictly, so it does not), the result is withheld: closed.
func (c *interceptor) checkURIs(x *request, v *intercept.Verdict) (release, refusal []byte, err error) {
	visible, embedded := x.resourcePolicy()
	out, err := x.s.backends.ClientResult(x.in.req.Method, v.Payload, visible, embedded)
	switch {
	case errors.Is(err, upstreams.ErrHiddenResource):
		return nil, nil, errUnknownName("resource")
	case err != nil:
		c.log.LogAttrs(x.ctx, slog.LevelWarn, "interceptor mutation's resources could not be checked",
			slog.String("request_id", x.requestID), slog.String("interceptor", v.By), slog.String("rule", v.Rule))
		v.Blocked, v.Failed = true, true
		return nil, nil, c.refuse(x, intercept.PhaseResponse, v, nil)
	}
	return out, nil, nil
}

// call is what an interceptor is told of x: the payload, the caller, the trace and what the
// audit lines name.
func (c *interceptor) call(x *request, payload []byte) *intercept.Call {
	tc := x.trace()
	return &intercept.Call{Method: x.in.req.Method, Payload: payload, Principal: x.caller.principal, Caller: x.bound(),
		TraceParent: tc.parent, Header: tc.headers(), RequestID: x.requestID, Upstream: x.route.upstream,
		Name: logName(x), Limits: x.s.limits, MaxBytes: x.s.cfg.MaxBodyBytes}
}

// apply makes v's mutation the request: its params, with the client's _meta and round-trip
// members put back, and the stages that route, authorize, pin and bind the call run on it
// again.
func (c *interceptor) apply(x *request, v *intercept.Verdict) error {
	params, err := intercept.MutatedParams(v.Payload, x.in.req.Params)
	if err != nil {
		return err
	}
	parsed, err := jsonrpc.ParseParams(params)
	if err != nil {
		return invalidParams("Invalid params: " + err.Error())
	}
	if err := x.in.h.requireName(parsed); err != nil {
		return err
	}
	// The client's params stay readable: a denial's handle names the call as the client sends
	// it again (contextBinding).
	x.in.replaceParams(params, parsed)
	// The client's Mcp-Param-* headers mirrored the arguments it sent; the backend's are
	// derived from the new ones.
	x.hdr, x.mutated = withoutParamHeaders(x.hdr), true
	x.route = route{}
	return x.s.recheck(x)
}

// notPermitted answers a mutation the re-checks refused: a client error of those stages (a name
// that does not exist or the caller may not use, a scope it lacks, a drifted pin) is the
// interceptor's change of the call, refused as such without naming the call it became; any
// other error is answered as it is.
func (c *interceptor) notPermitted(x *request, v *intercept.Verdict, err error) error {
	var e *Error
	if !errors.As(err, &e) || e.Status >= 500 {
		return err
	}
	c.log.LogAttrs(x.ctx, slog.LevelWarn, "interceptor mutation refused", slog.String("request_id", x.requestID),
		slog.String("interceptor", v.By), slog.String("rule", v.Rule), slog.Int("status", e.Status))
	return c.refusal(x, intercept.PhaseRequest, "The gateway's interceptors changed this call into one this caller may not make; it was not run.", "")
}

// refuse answers a blocked verdict. A failure (no decision, fail-closed) is a retryable error; a
// refusal of a tools/call is a failed tool call the model can read (into *tool for the response
// phase, which writes it itself), of any other method an error.
func (c *interceptor) refuse(x *request, phase intercept.Phase, v *intercept.Verdict, tool *[]byte) error {
	reason := shownReason(x, v)
	if v.Failed {
		msg := "Interceptor " + v.By + " could not decide; the call was not forwarded. Retry later"
		e := rpcError(jsonrpc.NewError(jsonrpc.CodeUnavailable, msg))
		if phase == intercept.PhaseResponse {
			e.RPC.Message = "Interceptor " + v.By + " could not decide; the result was withheld"
		} else {
			e.Header = http.Header{"Retry-After": {"1"}}
		}
		e.Outcome = outcomeUnavailable
		return e
	}
	text := "The call to " + x.route.name + " was refused by the gateway's interceptor " + v.By + "; it was not run."
	if phase == intercept.PhaseResponse {
		text = "The result of " + x.route.name + " was withheld by the gateway's interceptor " + v.By + "."
	}
	if tool != nil && x.in.req.Method == upstreams.MethodToolsCall {
		*tool = toolError(withReason(text, reason))
		return nil
	}
	return c.refusal(x, phase, text, reason)
}

// refusal answers a request refused by the interceptors: a failed tool call for tools/call,
// 403 with -32013 for the other methods (whose results have no room for a failure the model
// reads).
// A method of the component rather than of the request, which is at its bound of methods.
func (c *interceptor) refusal(x *request, phase intercept.Phase, text, reason string) error {
	if x.in.req.Method == upstreams.MethodToolsCall && phase == intercept.PhaseRequest {
		_ = x.answer(toolError(withReason(text, reason)), outcomeDenied)
		return nil
	}
	e := jsonrpc.NewError(jsonrpc.CodeUnauthorized, withReason(text, reason)).WithData(map[string]any{"reason": "refused-by-interceptor"})
	return &Error{Status: http.StatusForbidden, RPC: e, Outcome: outcomeDenied}
}

// shownReason is v's reason as a refusal may show it: "" where the guardrails would redact or
// block something in it (railer.checkReason). Every refusal that shows a reason takes it from
// here. A function: request is at its bound of methods.
func shownReason(x *request, v *intercept.Verdict) string {
	if v.Reason == "" || x.s.rails == nil {
		return v.Reason
	}
	return x.s.rails.checkReason(x, v.Reason)
}

// withReason is text followed by the interceptor's reason, when it shows one.
func withReason(text, reason string) string {
	if reason != "" {
		return text + " Reason: " + reason
	}
	return text
}

// withoutParamHeaders returns h without its Mcp-Param-* headers (a copy: h is the client's).
func withoutParamHeaders(h http.Header) http.Header {
	out := make(http.Header, len(h))
	for k, v := range h {
		if !strings.HasPrefix(k, mcpheader.ParamPrefix) {
			out[k] = v
		}
	}
	return out
}
