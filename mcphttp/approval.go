package mcphttp

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/mcp-gateway/gateway/internal/approval"
	"github.com/mcp-gateway/gateway/internal/era"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/pins"
	"github.com/mcp-gateway/gateway/metrics"
	"github.com/mcp-gateway/gateway/mrtr"
	"github.com/mcp-gateway/gateway/upstreams"
)

// Out-of-band approval, the `confirm: url` branch of stage mrtr-in: the call is answered with a
// URL-mode elicitation naming the gateway's approval page, and its retry is forwarded only once
// that page recorded the signed-in caller's approval of this call with these arguments
// (docs/approval.md). The page itself is the approval package.

// registerApproval serves the approval page under its path on the MCP listener, when it is
// configured: the path itself too, so that every answer there, a refusal included, is the
// page's, with its security headers, never the router's.
func (s *Server) registerApproval(e *echo.Echo) {
	if s.confirm.approvals == nil {
		return
	}
	routePage(e, s.confirm.approvals.Path(), s.confirm.approvals)
}

// routePage hands every request under a page's path, whatever its method, to the page's
// handler, which answers a method it does not take with its own 405, Allow and security
// headers: echo's e.Any leaves out extension methods (BREW, PROPPATCH), which it answered
// itself, with JSON, without the headers and with an Allow of every method e.Any routes.
func routePage(e *echo.Echo, path string, page http.Handler) {
	h := echo.WrapHandler(page)
	for _, p := range []string{path, path + "/*"} {
		e.Any(p, h)
		e.RouteNotFound(p, h)
	}
}

// askApproval answers a call that policy marks `confirm: url` with an input_required result
// sending the user to the approval page. A client that did not declare URL elicitation gets
// -32021, or the form confirmation when the rule's operator chose that weaker fallback
// (confirmFallback: clientForm).
func (c *confirmer) askApproval(x *request, b mrtr.Binding, target upstreams.Target) error {
	if !mrtr.DeclaresURLElicitation(x.in.meta.ClientCapabilities) {
		if x.route.decision.ConfirmFallbackClientForm {
			return c.askConfirmation(x, b)
		}
		e := jsonrpc.NewError(jsonrpc.CodeMissingRequiredClientCapability,
			"Missing required client capability: this call needs the user's approval on the gateway's page through URL elicitation")
		e.Data = json.RawMessage(`{"requiredCapabilities":` + mrtr.RequiredURLElicitationCapability + `}`)
		return denialError(rpcError(e), denial{remediation: remediationUndisclosed, text: "The call to " + x.route.name +
			" needs the user's approval on the gateway's page, which this client cannot send the user to: " +
			lacksElicitation(x, era.CapElicitationURL) + ". It was not run."})
	}
	forwarded, err := confirmable(x)
	if err != nil {
		return err
	}
	if c.approvals == nil {
		// Fail closed: a call that needs approval is never forwarded without it.
		return errors.New("approval required but no approval page configured")
	}
	if b.Issuer != c.approvals.Issuer() {
		// A remedy exists (a token of the page's issuer), but not one the client may start
		// on its own: undisclosed, described in the text.
		return c.drafts.refuseCall(x, denial{remediation: remediationUndisclosed, text: "The call to " + x.route.name +
			" needs approval on the gateway's page, where only users of " + c.approvals.Issuer() + " can sign in; it was not run."})
	}
	tok, st, err := c.codec.SealState(mrtr.State{Kind: mrtr.KindApproval, Issuer: b.Issuer, Subject: b.Subject,
		Upstream: b.Upstream, Method: b.Method, Name: b.Name, ArgsDigest: b.ArgsDigest})
	if err != nil {
		return unsealable(x, err)
	}
	id := hex.EncodeToString(st.Nonce[:])
	call := approval.Call{
		ID: id, Issuer: b.Issuer, Subject: b.Subject, Upstream: target.Upstream, Tool: x.route.name,
		UpstreamTool: target.Name, Arguments: x.in.params.Arguments, Forwarded: forwarded,
		Digest: st.ArgsDigest[:], Client: clientName(x.in.meta.ClientInfo), Expiry: st.Expiry,
	}
	// An ask stores the call until it is decided or expires: it takes a token of the rule's
	// rate limit like a forwarded call, besides the caller's budget of waiting calls.
	if err := x.limitTool(); err != nil {
		return err
	}
	c.describeTool(x, &call, target)
	page, err := c.approvals.Ask(x.ctx, call)
	switch {
	case errors.Is(err, approval.ErrTooLarge):
		return c.drafts.refuseCall(x, denial{remediation: remediationUnavailable,
			text: "The arguments of " + x.route.name + " are too large to be shown for approval; it was not run."})
	case errors.Is(err, approval.ErrTooManyPending):
		return c.drafts.tooManyPending
	case errors.Is(err, approval.ErrUnavailable):
		return approvalUnavailable()
	case err != nil:
		return err
	}
	c.metrics.MRTREvent(metrics.EventConfirmIssued, "")
	c.logApproval(x, "approval requested", id)
	return c.writeApprovalRequest(x, page, id, tok)
}

// answerApproval handles the retry of an approval: forwarded once if the page recorded an
// approval for this nonce and argument digest; a denial (on the page or in the client) is a
// failed tool call, never forwarded; no decision yet sends the user to the same page again.
func (c *confirmer) answerApproval(x *request, st *mrtr.State, b mrtr.Binding) (json.RawMessage, bool, error) {
	if c.approvals == nil {
		return nil, false, errors.New("approval state received but no approval page configured")
	}
	outcome, err := mrtr.EvaluateURL(x.in.params.InputResponses, mrtr.ConfirmKey)
	switch outcome {
	case mrtr.OutcomeMalformed:
		return nil, false, malformedAnswer(err)
	}
	id := hex.EncodeToString(st.Nonce[:])
	if outcome == mrtr.OutcomeDeclined || outcome == mrtr.OutcomeCancelled {
		if err := c.consume(x, st); err != nil {
			return nil, false, err
		}
		c.approvalDone(x, st, id)
		return nil, true, c.approvalDenied(x, outcome.String(), id)
	}
	verdict, err := c.approvals.Verdict(x.ctx, id, st.ArgsDigest[:])
	if err == nil && verdict == approval.Undecided && outcome == mrtr.OutcomeApproved {
		verdict, err = c.awaitDecision(x, id, st)
	}
	if err != nil {
		if x.ctx.Err() != nil {
			return nil, false, x.ctx.Err()
		}
		return nil, false, approvalUnavailable()
	}
	switch verdict {
	case approval.Finished:
		// The call's retry was used already: this one is a replay, which consuming refuses.
		// Should the nonce be free (the store lost it), the user is asked again.
		if err := c.consume(x, st); err != nil {
			return nil, false, err
		}
		return nil, true, c.askApproval(x, b, upstreams.Target{Upstream: x.route.upstream, Name: x.route.upstreamName})
	case approval.Forgotten:
		// The store lost the call with its page (and any decision): its page can no longer be
		// decided, so the call is asked afresh, with a new page, as an expired one is. The
		// state is left unused; it runs nothing without the new page's approval.
		c.log.LogAttrs(x.ctx, slog.LevelWarn, "approval: call forgotten by the store, asked again",
			slog.String("request_id", x.requestID), slog.String("call_ref", approval.CallRef(id)))
		return nil, true, c.askApproval(x, b, upstreams.Target{Upstream: x.route.upstream, Name: x.route.upstreamName})
	case approval.Undecided:
		if !c.now().Before(st.Expiry) {
			// The state expired while the retry waited for the page (awaitDecision): asked
			// afresh, as a retry with an expired state is, never sent to the page of a call
			// that can no longer be approved.
			return nil, true, c.askApproval(x, b, upstreams.Target{Upstream: x.route.upstream, Name: x.route.upstreamName})
		}
		// The same state and page: the nonce is not used until there is a decision.
		return nil, true, c.writeApprovalRequest(x, c.approvals.PageURL(id), id, x.in.params.RequestState)
	case approval.Denied:
		if err := c.consume(x, st); err != nil {
			return nil, false, err
		}
		c.approvalDone(x, st, id)
		return nil, true, c.approvalDenied(x, "denied", id)
	case approval.Approved:
	default:
		// Fail closed: only a recorded approval forwards the call.
		return nil, false, fmt.Errorf("approval: unexpected verdict %q", verdict)
	}
	if err := c.consume(x, st); err != nil {
		return nil, false, err
	}
	c.approvalDone(x, st, id)
	c.metrics.MRTREvent(metrics.EventConfirmApproved, "")
	c.logApproval(x, "approval used", id)
	x.route.confirmed, x.route.approvedOnPage = true, true
	p, err := mrtr.RetryParams(x.in.req.Params, st)
	if err != nil {
		return nil, false, invalidParams("Invalid params: " + err.Error())
	}
	return p, false, nil
}

// awaitDecision waits for the page's decision on call id for a retry whose client answered the
// URL elicitation with accept, when the edge that built the request says its client's accept
// means only that the user was sent to the page (AwaitDecisionFor): a 2025-11-25 client's does
// (its URL mode says so, and the gateway's decision comes later), and asking that client again
// at once would send it the same page round after round, until the call ran out of rounds
// before the user could decide. It returns the verdict once there is one, or Undecided when the
// wait ends first (its bound, the state's expiry), so that the client is asked again; an error
// when the store cannot tell, or when the request ends (the client went away or cancelled it).
// A 2026-07-28 client retries when its user says so, and is answered at once.
func (c *confirmer) awaitDecision(x *request, id string, st *mrtr.State) (approval.Verdict, error) {
	wait, _ := x.ctx.Value(awaitDecisionKey{}).(time.Duration)
	if wait <= 0 {
		return approval.Undecided, nil
	}
	end := c.now().Add(wait)
	if st.Expiry.Before(end) {
		end = st.Expiry
	}
	// The response stays open while the user decides: keep-alive comments hold it, as they do
	// while a pre-2026 client is asked.
	x.out.KeepAlive(true)
	defer x.out.KeepAlive(false)
	w := NewPacedWait(c.now, end)
	for {
		if !w.Pause(x.ctx, func(d time.Duration) { x.waited += d }) {
			// The wait's bound (the page was not decided in time: Undecided), or the request
			// ended (its error).
			return approval.Undecided, x.ctx.Err()
		}
		if v, err := c.approvals.Verdict(x.ctx, id, st.ArgsDigest[:]); err != nil || v != approval.Undecided {
			return v, err
		}
	}
}

// awaitDecisionKey is the context key of how long a retry of an approval that its client
// accepted waits for the page's decision (Inner.AwaitDecision).
type awaitDecisionKey struct{}

// stateConfirms reports whether a retry's state carries the confirmation the call needs now. A
// state issued under another rule (the same user's token with other scopes) or before the policy
// changed may carry a weaker one, or none: a confirm: url call continues only with the page's
// approval (or a form, where the operator chose confirmFallback: clientForm and the client did
// not declare URL elicitation, the only clients the fallback asks with a form), a confirmed call
// only with a confirmation. A backend's own round that was never confirmed continues only while
// the call still needs no confirmation: pin drift or a destructive annotation that appeared
// while the client was answering the backend (a backend can change its tool in between) needs
// it as a first call would. Otherwise the call is asked for again.
func (c *confirmer) stateConfirms(x *request, st *mrtr.State) (bool, error) {
	d := x.route.decision
	switch {
	case st.Kind == mrtr.KindApproval || st.ApprovedOnPage:
		// A KindApproval state is answered only with the page's recorded decision.
		return true, nil
	case d.ConfirmURL && (!d.ConfirmFallbackClientForm || mrtr.DeclaresURLElicitation(x.in.meta.ClientCapabilities)):
		return false, nil
	case st.Kind == mrtr.KindConfirm || st.Confirmed:
		return true, nil
	case d.Confirm:
		return false, nil
	}
	need, err := c.needsConfirmation(x)
	return !need, err
}

// askAgain asks for the confirmation the call's rule requires, for a retry whose state does not
// carry it (stateConfirms). The state is left unused.
func (c *confirmer) askAgain(x *request, b mrtr.Binding, target upstreams.Target) error {
	if x.route.decision.ConfirmURL {
		return c.askApproval(x, b, target)
	}
	return c.askConfirmation(x, b)
}

// approvalExpired reports whether a rejected requestState should simply be asked for again: it
// expired, and policy asks for approval on the page for this call. Asking again forwards
// nothing; any other rejection stays -32602.
func (c *confirmer) approvalExpired(x *request, err error) bool {
	return x.route.decision.ConfirmURL && x.in.req.Method == mrtr.MethodToolsCall &&
		mrtr.Reason(err) == mrtr.ReasonExpired
}

// writeApprovalRequest answers with the input_required result sending the user to page: the
// draft's first use case, carrying its envelope (remediation available, a url hint) when
// denials are on.
func (c *confirmer) writeApprovalRequest(x *request, page, id, state string) error {
	res, err := json.Marshal(mrtr.ApprovalResult(x.route.name, page, id, state))
	if err != nil {
		return err
	}
	res = c.drafts.withEnvelope(x, res, denial{remediation: remediationAvailable, hint: hintURL})
	_ = x.answer(res, outcomeInputRequired)
	return nil
}

// approvalDenied answers a call the user did not approve (on the page, or declined in the
// client) with a failed tool call: final for this call.
func (c *confirmer) approvalDenied(x *request, how, id string) error {
	c.metrics.MRTREvent(metrics.EventConfirmDeclined, "")
	c.logApproval(x, "approval "+how, id)
	return c.drafts.refuseCall(x, denial{remediation: remediationUnavailable,
		text: "The user did not approve the call to " + x.route.name + " (" + how + "); it was not run."})
}

// approvalDone finishes a call whose state was just consumed, so it no longer counts against
// the caller's budget of waiting calls and the page can no longer decide it. Best effort: the
// state is consumed, so nothing more can run either way, and the records expire with it.
func (c *confirmer) approvalDone(x *request, st *mrtr.State, id string) {
	if err := c.approvals.Finish(x.ctx, id, st.Issuer, st.Subject, st.Expiry); err != nil {
		c.log.LogAttrs(x.ctx, slog.LevelWarn, "approval: forgetting a used call", slog.String("call_ref", approval.CallRef(id)),
			slog.String("error", err.Error()))
	}
}

// errTooManyPending refuses to ask for another approval while the caller already has its budget
// of calls waiting for the page (approval.maxPendingPerCaller and maxPendingBytesPerCaller).
// Nothing is stored and nothing runs; the client may retry once calls are decided or expire.
var errTooManyPending = &Error{Status: http.StatusTooManyRequests, Outcome: outcomeRateLimited,
	Header: http.Header{"Retry-After": {"60"}},
	RPC: jsonrpc.NewError(jsonrpc.CodeRateLimited, "Too many calls of this caller are waiting for approval on the "+
		"gateway's page; decide or abandon them first")}

// approvalUnavailable fails closed with a retryable error when the shared store cannot keep or
// tell the page's records.
func approvalUnavailable() error {
	e := rpcError(jsonrpc.NewError(jsonrpc.CodeUnavailable, "Approval store unavailable; retry later"))
	e.Header = http.Header{"Retry-After": {"1"}}
	e.Outcome = outcomeUnavailable
	return e
}

func (c *confirmer) logApproval(x *request, what, id string) {
	c.log.LogAttrs(x.ctx, slog.LevelInfo, what,
		slog.String("request_id", x.requestID), slog.String("subject", x.subject()),
		slog.String("upstream", x.route.upstream), slog.String("name", logName(x)),
		slog.String("call_ref", approval.CallRef(id)))
}

// describeTool fills in the tool's title and description for the page. When the backend's
// definitions are pinned they are the pinned ones (the lock file's, or the trust-on-first-use
// pin), what an operator approved rather than what the backend says now, and the page is told
// whether and how the live definition drifted from the pin (the verdict judged at stage pin,
// whatever its action). Otherwise, or when this replica does not know the pin, they are the
// caller's live tool list's.
func (c *confirmer) describeTool(x *request, call *approval.Call, target upstreams.Target) {
	if c.backends.PinsEnabled(target.Upstream) {
		call.Drift = x.route.pinClasses.String()
		if d := c.backends.PinGuard().Pinned(target.Upstream, pins.KindTool, target.Name); d != nil {
			call.Title, call.Description = d.Text()
			call.Pinned = true
			return
		}
	}
	call.Title, call.Description = c.toolText(x)
}

// toolText returns the title and description of the called tool as the caller's tools/list
// shows them, for the page. It is best effort: a list that fails leaves them empty, and the
// page still shows the names and the arguments, which are what the decision is bound to.
//
// The items are the backend's as listed, members the gateway does not know included, so their
// members are read by exact name (a map), never by encoding/json's case-insensitive match: a
// backend listing "description" and a "Description" after it must not get the second shown on
// the page while clients that read names exactly give the first to the model.
func (c *confirmer) toolText(x *request) (title, description string) {
	_ = c.eachToolsPage(x, 100, func(page json.RawMessage) (bool, error) {
		var list struct {
			Tools []map[string]json.RawMessage `json:"tools"`
		}
		if err := json.Unmarshal(page, &list); err != nil {
			return false, err
		}
		for _, t := range list.Tools {
			if exactString(t["name"]) == x.route.name {
				title, description = exactString(t["title"]), exactString(t["description"])
				return true, nil
			}
		}
		return false, nil
	})
	return title, description
}

// exactString is raw as a JSON string, "" when it is absent or not a string.
func exactString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// clientName is the clientInfo name and version for display on the page, bounded.
func clientName(info json.RawMessage) string {
	var ci struct{ Name, Version string }
	if json.Unmarshal(info, &ci) != nil || ci.Name == "" {
		return ""
	}
	n := strings.TrimSpace(ci.Name + " " + ci.Version)
	if utf8.RuneCountInString(n) > 128 {
		// Cut between characters: a cut inside one would show the page a U+FFFD the client
		// did not send.
		n = string([]rune(n)[:128]) + "…"
	}
	return n
}
