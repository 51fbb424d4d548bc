package mcphttp

import (
	"context"
	"encoding/json"

	"github.com/mcp-gateway/gateway/internal/intercept"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/upstreams"
)

// A pre-2026 backend's requests mid-call (elicitation, sampling, roots) and the client's answers
// to them cross the gateway outside the stream the relay reads: the pre-2026 edge carries them
// between the backend and its pre-2026 client while the call runs. A 2026-07-28 backend's round
// carries the same in its input_required result (the response phase, then the guardrails' result
// checks, in the relay) and the retry's inputResponses (stage intercept, then stage guardrails),
// and so these cross the same checks in the same order: the backend's request the interceptors'
// response phase, then the guardrails' result detectors on the request as the interceptors left
// it; the client's answer the interceptors' request phase, then the guardrails' argument
// detectors. A request or an answer refused by either is not carried on (the backend gets an
// error in its place) and the call's result is withheld.

// askChecks is what checks a call's asks, and what they refused.
type askChecks struct {
	// ask and answer are the interceptors' plans for the call's response and request phases
	// (nil: none).
	ask, answer *intercept.Plan
	// blocked is the interceptors' verdict that refused an ask or an answer (the first), which
	// withholds the call's result; what names what it refused.
	blocked *intercept.Verdict
	what    string
	// broken is why an answer could not be shown to the interceptors (never, for params that
	// decoded): the result is withheld as the gateway's own failure.
	broken error
}

// checkedAsks returns ctx with its ClientRequests (if it has one) wrapped in the interceptors'
// and the guardrails' checks of x, and what the relay reads of the interceptors' decisions (nil
// when they govern nothing of the call). Without a ClientRequests (a 2026-07-28 client cannot be
// asked mid-call: the backend's request is refused) or any check, ctx is returned as it is.
func checkedAsks(ctx context.Context, x *request) (context.Context, *askChecks) {
	ask := upstreams.ClientRequestsOf(ctx)
	if ask == nil {
		return ctx, nil
	}
	var ac *askChecks
	if ic := x.s.intercept; ic != nil {
		method, up, name := x.in.req.Method, x.route.upstream, x.route.upstreamName
		q, a := ic.set.Plan(intercept.PhaseResponse, method, up, name), ic.set.Plan(intercept.PhaseRequest, method, up, name)
		if q != nil || a != nil {
			ac = &askChecks{ask: q, answer: a}
		}
	}
	rails := x.rails.scansAsks()
	if ac == nil && !rails {
		return ctx, nil
	}
	return upstreams.WithClientRequests(ctx, func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		switch {
		// The result is withheld already: a backend that asks again is refused at once,
		// without another invocation nor scan.
		case ac != nil && (ac.blocked != nil || ac.broken != nil):
			return nil, ac.again()
		case rails && x.rails.blocked != nil:
			return nil, askRefused()
		}
		params, err := x.s.intercept.checkAsk(ctx, x, ac, method, params)
		if err != nil {
			return nil, err
		}
		if rails {
			var ok bool
			if params, ok = x.s.rails.checkAsk(x, params); !ok {
				return nil, askRefused()
			}
		}
		res, err := ask(ctx, method, params)
		if err != nil {
			// An error is the client's refusal, relayed as it is: error responses are not
			// intercepted.
			return nil, err
		}
		if err := x.s.intercept.checkAnswer(ctx, x, ac, res); err != nil {
			return nil, err
		}
		if rails {
			return x.s.rails.checkAnswer(x, res)
		}
		return res, nil
	}), ac
}

// checkAsk runs the response phase on a backend's request to the client: it returns the params
// to ask (a mutation's, checked as a request the gateway can relay), or the error the backend
// gets when the interceptors refused it or could not decide.
func (c *interceptor) checkAsk(ctx context.Context, x *request, ac *askChecks, method string, params json.RawMessage) (json.RawMessage, error) {
	if ac == nil || ac.ask == nil {
		return params, nil
	}
	call := c.call(x, intercept.AskPayload(method, params))
	call.Check = func(m []byte) error {
		_, err := intercept.AskParams(m, method)
		return err
	}
	v := c.set.Run(ctx, ac.ask, call)
	switch {
	case v.Blocked:
		return nil, ac.block(&v, askWhat)
	case !v.Mutated:
		return params, nil
	}
	return intercept.AskParams(v.Payload, method)
}

// checkAnswer runs the request phase on the client's answer to a backend's request, in the call
// as it was forwarded and as its request phase showed it (shownParams): nil to give the backend
// the answer, or the error it gets instead. A mutation is refused (a failure): the answers of a
// 2026-07-28 retry are the client's, and the call has gone to the backend already.
func (c *interceptor) checkAnswer(ctx context.Context, x *request, ac *askChecks, res json.RawMessage) error {
	if ac == nil || ac.answer == nil {
		return nil
	}
	var payload []byte
	params, err := shownParams(x)
	if err == nil {
		payload, err = intercept.AnswerPayload(x.in.req.Method, params, res)
	}
	if err == nil {
		// Held to the rule of stage intercept's payloads: nothing parsers read as different
		// values is put to an interceptor.
		err = readAlike(payload)
	}
	if err != nil {
		// The params were decoded strictly, so only an answer parsers read differently gets
		// here; nothing unchecked passes: the answer is not given and the result is withheld.
		ac.broken = err
		return jsonrpc.NewError(jsonrpc.CodeInternalError, "the gateway's interceptors could not decide")
	}
	call := c.call(x, payload)
	call.Check = func([]byte) error { return intercept.ErrAnswerMutated }
	if v := c.set.Run(ctx, ac.answer, call); v.Blocked {
		return ac.block(&v, answerWhat)
	}
	return nil
}

// block keeps v, the first verdict that refused an ask or an answer, and returns the error the
// backend gets in the place of the answer.
func (ac *askChecks) block(v *intercept.Verdict, what string) error {
	if ac.blocked == nil {
		ac.blocked, ac.what = v, what
	}
	return ac.again()
}

// again is the error a backend gets for a request after one was refused.
func (ac *askChecks) again() error {
	if ac.blocked != nil && !ac.blocked.Failed {
		return jsonrpc.NewError(jsonrpc.CodeInternalError, "refused by the gateway's interceptors")
	}
	return jsonrpc.NewError(jsonrpc.CodeInternalError, "the gateway's interceptors could not decide")
}

// withheld answers the call whose ask or answer the interceptors refused, in the place of its
// result: as a result the response phase refused (a failed tool call for tools/call, 403 for
// the other methods), naming what was refused, or as a failure (503, -32014).
func (c *interceptor) withheld(x *request, ac *askChecks) (refusal []byte, err error) {
	v := ac.blocked
	switch {
	case v == nil:
		return nil, ac.broken
	case v.Failed:
		return nil, c.refuse(x, intercept.PhaseResponse, v, nil)
	}
	text := "The result of " + x.route.name + " was withheld by the gateway's interceptor " + v.By +
		", which refused " + ac.what + "."
	if x.in.req.Method == upstreams.MethodToolsCall {
		return toolError(withReason(text, shownReason(x, v))), nil
	}
	return nil, c.refusal(x, intercept.PhaseResponse, text, shownReason(x, v))
}
