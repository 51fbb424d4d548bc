package mcphttp

import (
	"encoding/json"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

// The guardrails on a pre-2026 backend's mid-call requests (elicitation, sampling, roots) and
// on the client's answers to them. The pre-2026 edge carries them between the backend and its
// pre-2026 client while the call runs, outside the stream the relay reads, so they would pass
// unchecked: an elicitation's message reaches a person and a sampling request's messages a
// model as a result does, and what the person typed or the model wrote reaches the backend as
// arguments do. A 2026-07-28 backend's round carries the same in its input_required result
// (read with the result) and the retry's inputResponses (read with the params), and so these
// are read alike: the request with the result detectors, as a notification relayed during the
// call is (redacted, or refused and the call's result withheld), the answer with the argument
// detectors before the backend gets it (redacted, or refused and the call's result withheld).

// askRefused is what the backend gets in place of the answer when the guardrails refused its
// request or the client's answer.
func askRefused() *jsonrpc.Error {
	return jsonrpc.NewError(jsonrpc.CodeInternalError, "refused by the gateway's guardrails")
}

// askWhat and answerWhat name a backend's request and the client's answer in a refusal.
const (
	askWhat    = "the backend's request to the client"
	answerWhat = "the client's answer to the backend's request"
)

// scansAsks reports whether x's rule checks a backend's requests or the client's answers.
func (st *railState) scansAsks() bool {
	return st != nil && (st.rule.ScansResults() || st.rule.ScansArguments())
}

// checkAsk checks a backend's request as the client would read it, with the result detectors:
// it returns the params to ask (redacted where the rule redacts), or !ok when the rule blocks
// it (which withholds the call's result, as a blocked notification does).
func (g *railer) checkAsk(x *request, params json.RawMessage) (json.RawMessage, bool) {
	if !x.rails.rule.ScansResults() {
		return params, true
	}
	out, drop := g.checkRelayed(x, params, askWhat, nil)
	return out, !drop
}

// checkAnswer checks the client's answer with the argument detectors before the backend gets
// it: it returns the answer (redacted where the rule redacts), or askRefused when the rule
// blocks it, and then the call's result is withheld too.
func (g *railer) checkAnswer(x *request, res json.RawMessage) (json.RawMessage, error) {
	rule := x.rails.rule
	if !rule.ScansArguments() {
		return res, nil
	}
	rep := rule.ScanArguments(res)
	g.record(x, rule, rep)
	switch {
	case rep.Blocked():
		x.rails.block(rep, answerWhat)
		return nil, askRefused()
	case rep.Redacted():
		return rep.Rewrite(res), nil
	}
	return res, nil
}
