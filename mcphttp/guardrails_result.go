package mcphttp

import (
	"bytes"
	"log/slog"
	"net/http"

	"github.com/mcp-gateway/gateway/internal/guardrails"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/metrics"
	"github.com/mcp-gateway/gateway/upstreams"
)

// The guardrails on what a backend answers (docs/guardrails.md), run by the relay for a request
// a rule covers: every notification relayed while the request runs, then the final result, all
// before the client sees them. Progress is no way around the check: a notification that a
// rule blocks is dropped and withholds the result too, and what notifications had that was
// flagged or redacted is named in the result's annotation.

// checkNotification checks one relayed notification (the whole message): it returns the
// message to relay (redacted where a rule redacts), or drop when a rule blocks it.
func (g *railer) checkNotification(x *request, msg []byte) (out []byte, drop bool) {
	return g.checkRelayed(x, msg, "", clientEcho(x))
}

// clientEcho is what the client sent that a backend's message to it carries back as it was: the
// request's id and progress token, its own handles, which are not the backend's text.
func clientEcho(x *request) *guardrails.Echo {
	e := &guardrails.Echo{}
	if x.in.req != nil {
		e.ID = x.in.req.ID
	}
	if x.in.meta != nil {
		e.ProgressToken = x.in.meta.ProgressToken
	}
	return e
}

// checkRelayed is checkNotification of anything relayed to the client while the request runs;
// what names it in the refusal of the result when it is blocked (empty: a notification); e
// what the client sent that it carries back (nil for params alone).
func (g *railer) checkRelayed(x *request, msg []byte, what string, e *guardrails.Echo) (out []byte, drop bool) {
	rule := x.rails.rule
	if !rule.ScansResults() {
		return msg, false
	}
	start := g.now()
	rep := rule.ScanRelayed(msg, e)
	g.rec.Duration(metrics.CheckContent, guardrails.DirNotification, g.now().Sub(start))
	g.record(x, rule, rep)
	if rep.Blocked() {
		x.rails.block(rep, what)
		return nil, true
	}
	kept := 0
	for _, f := range rep.Findings {
		if (f.Action == guardrails.Flag || f.Action == guardrails.Redact) && len(x.rails.notes) < maxNotes {
			x.rails.notes = append(x.rails.notes, f)
			kept++
		}
	}
	// Those past the notes (or past the report's list) are counted in the annotation.
	x.rails.notesMore += rep.Marked() - kept
	if rep.Redacted() {
		return rep.Rewrite(msg), false
	}
	return msg, false
}

// block keeps the first blocked finding of rep, a check of something relayed while the request
// runs, which withholds the result; what names that in the refusal (empty: a notification).
func (st *railState) block(rep *guardrails.Report, what string) {
	if st.blocked != nil {
		return
	}
	f := guardrails.Finding{Detector: guardrails.DetInvalidArguments, Action: guardrails.Block}
	if b := rep.First(guardrails.Block); b != nil {
		f = *b
	} else {
		st.failed = true
	}
	st.blocked, st.blockedIn = &f, what
}

// checkResult checks the final result of a request a rule covers: the result detectors, then a
// tool result's structuredContent, as redacted, against the tool's outputSchema, and what the
// notifications before it left. It returns the result to send (redacted, annotated), or refusal: the tool
// error that replaces a tools/call's result. A prompts/get or resources/read result that is
// refused becomes a JSON-RPC error (err).
func (g *railer) checkResult(x *request, result []byte) (out, refusal []byte, err error) {
	rule := x.rails.rule
	rep := &x.rails.result
	if rule.ScansResults() {
		start := g.now()
		rule.ScanResultInto(rep, result)
		g.rec.Duration(metrics.CheckContent, guardrails.DirResult, g.now().Sub(start))
	} else {
		rep.Reset(rule.ID(), guardrails.DirResult)
	}
	if !rep.Blocked() && x.rails.blocked == nil {
		// Redacted first: the structured content validated is the one the client gets.
		out, _ = rep.RewriteResult(result, x.rails.notes, x.rails.notesMore)
	}
	tool := x.in.req.Method == upstreams.MethodToolsCall
	switch a := rule.ValidateStructuredContent(); {
	case out == nil || !tool:
	case rep.Redacted() && structuredChanged(result, out):
		// The gateway never makes a result the protocol refuses: a structuredContent it
		// redacted must still be what the tool's outputSchema declares (a number replaced
		// with the marker is not), or a client that validates it (the TypeScript SDK's
		// does) fails the call. Withheld instead, with the reason, whatever the rule does
		// with a backend's own violation (nothing, or log).
		if err := g.validateStructured(x, out, rep, guardrails.Block); err != nil {
			return nil, nil, err
		}
	case a != guardrails.Off:
		if err := g.validateStructured(x, out, rep, a); err != nil {
			return nil, nil, err
		}
	}
	g.record(x, rule, rep)
	what := "the result"
	if f := x.rails.blocked; f != nil {
		rep = &guardrails.Report{Rule: rule.ID(), Dir: guardrails.DirNotification}
		if !x.rails.failed {
			rep.Add(f.Detector, guardrails.Block, f.Path, "")
		}
		what = "a notification relayed during the request"
		if x.rails.blockedIn != "" {
			what = x.rails.blockedIn
		}
	}
	if rep.Blocked() || x.rails.blocked != nil {
		msg := refusalText(rep, what)
		if tool {
			return nil, toolError(msg), nil
		}
		e := rpcError(jsonrpc.NewError(jsonrpc.CodeInternalError, msg))
		// In the place of the backend's answer, as a backend's JSON-RPC error is relayed.
		e.Status, e.Outcome = http.StatusOK, outcomeDenied
		return nil, nil, e
	}
	return out, nil, nil
}

// validateStructured is the schema guardrail on a tool result's structuredContent, against the
// tool's outputSchema (pinned, or listed). A tool error is not checked; a result without
// structuredContent from a tool that declares an outputSchema fails, as the protocol requires
// one. a is the action on a violation: the rule's, or block for a structuredContent the
// gateway redacted.
func (g *railer) validateStructured(x *request, result []byte, rep *guardrails.Report, a guardrails.Action) error {
	start := g.now()
	defer func() { g.rec.Duration(metrics.CheckSchema, guardrails.DirResult, g.now().Sub(start)) }()
	var sc []byte
	isError, respelt := false, ""
	_ = jsonrpc.Members(result, func(k, v []byte) error {
		switch string(k) {
		case "structuredContent":
			sc = v
		case "isError":
			isError = string(v) == "true"
		default:
			if m, ok := guardrails.Respelt(k); ok && respelt == "" {
				respelt = m
			}
		}
		return nil
	})
	if respelt != "" {
		// A client that folds case may read that member instead of the one checked here.
		rep.Add(guardrails.DetInvalidStructuredContent, a, "/"+respelt, "spelt otherwise too, which a client may read in its place")
		return nil
	}
	if isError {
		return nil
	}
	cs, err := g.schema(x, true)
	if err != nil || cs == nil {
		return err
	}
	if sc == nil {
		rep.Add(guardrails.DetInvalidStructuredContent, a, "/structuredContent", "missing, while the tool declares an outputSchema")
		return nil
	}
	v, verr := cs.Validate(sc)
	switch {
	case verr != nil:
		rep.Add(guardrails.DetInvalidStructuredContent, a, "/structuredContent", "the tool's output schema cannot be used")
	case v != nil:
		rep.Add(guardrails.DetInvalidStructuredContent, a, "/structuredContent"+v.Path, v.Problem)
	}
	return nil
}

// structuredChanged reports whether the structuredContent of out (result, redacted) is not the
// backend's.
func structuredChanged(result, out []byte) bool {
	return !bytes.Equal(structuredOf(result), structuredOf(out))
}

// structuredOf is the raw structuredContent of a result, nil when it has none.
func structuredOf(result []byte) []byte {
	var sc []byte
	_ = jsonrpc.Members(result, func(k, v []byte) error {
		if string(k) == "structuredContent" {
			sc = v
		}
		return nil
	})
	return sc
}

// checkError checks a backend's JSON-RPC error (the whole message) with the result detectors:
// its message and data reach the model as a result does. It returns the message to relay:
// redacted, or when a rule blocks it the gateway's own error naming the rule, with the
// backend's error code.
func (g *railer) checkError(x *request, msg []byte) []byte {
	rule := x.rails.rule
	if !rule.ScansResults() {
		return msg
	}
	rep := rule.ScanError(msg, clientEcho(x))
	g.record(x, rule, rep)
	switch {
	case rep.Blocked():
		e := jsonrpc.NewError(jsonrpc.CodeInternalError, refusalText(rep, "the backend's error"))
		return jsonrpc.AppendError(nil, x.in.req.ID, e)
	case rep.Redacted():
		return rep.Rewrite(msg)
	}
	return msg
}

// checkReason reads an interceptor's reason, which its refusal shows the caller (showReason)
// and so the model, with the result detectors of the rule that covers x: the model reads it as
// it reads a result, and an interceptor's words may quote what it refused or withheld. A reason
// in which the rule would redact or block something is left out of the refusal (it is the
// interceptor's, never rewritten); one the rule only logs or flags is kept.
func (g *railer) checkReason(x *request, reason string) string {
	kind := guardKind(x)
	if kind == 0 {
		return reason
	}
	rule := g.engine.Rule(kind, x.route.upstream, x.route.upstreamName)
	if rule == nil || !rule.ScansResults() {
		return reason
	}
	if rep := rule.ScanNotification(jsonrpc.AppendString(nil, reason)); rep.Action >= guardrails.Redact || rep.Err != nil {
		g.log.LogAttrs(x.ctx, slog.LevelInfo, "interceptor reason left out of the refusal",
			slog.String("request_id", x.requestID), slog.String("rule", rule.ID()))
		return ""
	}
	return reason
}
