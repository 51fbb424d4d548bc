package mcphttp

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/mcp-gateway/gateway/internal/approval"
	"github.com/mcp-gateway/gateway/internal/era"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/metrics"
	"github.com/mcp-gateway/gateway/mrtr"
	"github.com/mcp-gateway/gateway/upstreams"
)

// confirmer runs stage mrtr-in and the sealing of a backend's input_required at stage forward:
// the requestState codec, the gateway's own confirmations (form elicitation, destructive tools,
// pin drift) and the approval page's (approval.go). It holds only what those need; the request
// they act on is an argument.
type confirmer struct {
	codec     *mrtr.Codec       // nil: round trips pass unsealed, nothing can be confirmed
	approvals *approval.Service // nil: confirm: url calls are refused
	backends  *upstreams.Registry
	log       *slog.Logger
	metrics   *metrics.Recorder
	now       func() time.Time
	// confirmDestructive is server.confirmDestructiveTools (destructive.go).
	confirmDestructive bool
	// drafts is the server's server.draftErrors: the shapes of its denials and limits.
	drafts *drafts
}

// mrtrMethods may return input_required and carry a retry's requestState (docs/protocol.md §3).
var mrtrMethods = map[string]bool{
	mrtr.MethodToolsCall: true, mrtr.MethodPromptsGet: true, mrtr.MethodResourcesRead: true,
}

// mrtrIn is stage mrtr-in. It opens a retry's requestState and checks it against the caller, the
// method, the name and the arguments; answers the gateway's own confirmations; and asks for
// confirmation when policy requires it. It returns the params to forward, or handled=true when
// it has answered the request itself.
func (c *confirmer) mrtrIn(x *request, target upstreams.Target) (params json.RawMessage, handled bool, err error) {
	if c.codec == nil && x.route.decision.Confirm {
		// Fail closed: a call that needs confirmation is never forwarded unconfirmed.
		return nil, false, errors.New("confirmation required but no requestState codec configured")
	}
	if c.codec == nil || !mrtrMethods[x.in.req.Method] {
		return x.in.req.Params, false, nil
	}
	if !x.in.params.HasState {
		return c.firstCall(x, target)
	}
	// The binding (with its digest of the canonical arguments) is computed only when a state is
	// sealed or opened, never for the plain calls that are most of the traffic.
	b, err := c.binding(x, target)
	if err != nil {
		return nil, false, err
	}
	st, err := c.codec.Open(x.in.params.RequestState, b)
	if err != nil {
		if c.approvalExpired(x, err) {
			return nil, true, c.askApproval(x, b, target)
		}
		if mrtr.Reason(err) == mrtr.ReasonArguments && !x.route.pinDrift.Empty() {
			// The drifted item is not the definition the state was sealed for (or the
			// arguments differ): asked as a first call, nothing forwarded.
			return nil, true, c.askAgain(x, b, target)
		}
		return nil, false, c.rejectState(x, err)
	}
	if ok, err := c.stateConfirms(x, st); err != nil {
		return nil, false, err
	} else if !ok {
		return nil, true, c.askAgain(x, b, target)
	}
	if st.Kind == mrtr.KindConfirm {
		return c.answerConfirmation(x, st, b)
	}
	if st.Kind == mrtr.KindApproval {
		return c.answerApproval(x, st, b)
	}
	if st.SingleUse() {
		if err := c.consume(x, st); err != nil {
			return nil, false, err
		}
	}
	x.route.confirmed, x.route.approvedOnPage = st.Confirmed, st.ApprovedOnPage
	c.metrics.MRTREvent(metrics.EventUpstreamRoundTrip, "")
	p, err := mrtr.RetryParams(x.in.req.Params, st)
	if err != nil {
		return nil, false, invalidParams("Invalid params: " + err.Error())
	}
	return p, false, nil
}

// firstCall asks for confirmation when policy (or a destructive annotation, or pin drift) requires
// it, and otherwise forwards the params as they are.
func (c *confirmer) firstCall(x *request, target upstreams.Target) (json.RawMessage, bool, error) {
	if confirm, err := c.needsConfirmation(x); err != nil || !confirm {
		return x.in.req.Params, false, err
	}
	b, err := c.binding(x, target)
	if err != nil {
		return nil, false, err
	}
	if x.route.decision.ConfirmURL {
		return nil, true, c.askApproval(x, b, target)
	}
	return nil, true, c.askConfirmation(x, b)
}

// needsConfirmation reports whether the call must be confirmed now: a tool call its rule says to
// confirm, or whose tool declares destructiveHint (server.confirmDestructiveTools), and any
// call of an item whose pin drift is confirmed.
func (c *confirmer) needsConfirmation(x *request) (bool, error) {
	if !x.route.pinDrift.Empty() {
		return true, nil
	}
	if x.in.req.Method != mrtr.MethodToolsCall {
		return false, nil
	}
	if x.route.decision.Confirm {
		return true, nil
	}
	return c.isDestructive(x), nil
}

func (c *confirmer) binding(x *request, target upstreams.Target) (mrtr.Binding, error) {
	digest, err := boundDigest(x.in.params.Arguments, x.in.req.Params)
	if err != nil {
		if _, bad := mrtr.Digest(x.in.params.Arguments); bad != nil {
			return mrtr.Binding{}, invalidParams("Invalid params: arguments")
		}
		// The arguments are sound: a member bound with them is not (a lone surrogate escape in
		// the clientInfo or a vendor's _meta member, which parsers read differently).
		return mrtr.Binding{}, invalidParams("Invalid params: the request's other members cannot be confirmed: " +
			strings.TrimPrefix(err.Error(), mrtr.ErrInvalidArguments.Error()+": "))
	}
	if !x.route.pinDrift.Empty() {
		// A confirmation of a drifted item is of its definition now: a state sealed before
		// it changed again (or before it drifted) does not open for it (mrtrIn asks again).
		digest = mrtr.WithDefinition(digest, x.route.pinCurrent)
	}
	b := mrtr.Binding{Upstream: target.Upstream, Method: x.in.req.Method, Name: x.route.name, ArgsDigest: digest}
	if x.caller.principal != nil {
		b.Issuer, b.Subject = x.caller.principal.Issuer, x.caller.principal.Subject
	}
	return b, nil
}

// confirmable refuses to ask a person to confirm arguments that backends read differently (an
// integer beyond 2^53: mrtr.DigestConfirmable): the person would approve the literal shown while
// a backend that reads numbers as doubles acts on its neighbour. The other params members the
// backend receives are shown to the person too and are held to the same rule: confirmable
// returns them (forwardedMembers), for the prompt or page to show every member the decision
// binds besides the arguments (boundDigest). Said why, never with the value.
func confirmable(x *request) (forwarded []byte, err error) {
	forwarded, err = forwardedMembers(x.in.req.Params)
	if err != nil {
		return nil, invalidParams("Invalid params: arguments")
	}
	for _, part := range []struct {
		what string
		raw  json.RawMessage
	}{{"these arguments", x.in.params.Arguments}, {"the request's other members", forwarded}} {
		if _, err := mrtr.DigestConfirmable(part.raw); err != nil {
			return nil, invalidParams("Invalid params: " + part.what + " cannot be confirmed: " +
				strings.TrimPrefix(err.Error(), mrtr.ErrInvalidArguments.Error()+": "))
		}
	}
	return forwarded, nil
}

// rejectState answers every bad requestState with the same message, so a client learns nothing
// about why; the reason goes to metrics and the decision log.
func (c *confirmer) rejectState(x *request, err error) error {
	reason := mrtr.Reason(err)
	c.metrics.MRTREvent(metrics.EventRejected, reason)
	c.log.LogAttrs(x.ctx, slog.LevelWarn, "requestState rejected",
		slog.String("request_id", x.requestID), slog.String("reason", reason),
		slog.String("subject", x.subject()), slog.String("name", logName(x)))
	return stateRejected()
}

// consume makes a state single-use through the shared store. A store that cannot answer fails
// closed with a retryable error: replay protection is a security property. A caller past its
// budget of answered rounds (mrtr.maxAnswersPerCaller) is refused as rate-limited.
func (c *confirmer) consume(x *request, st *mrtr.State) error {
	err := c.codec.ConsumeAs(x.ctx, st, x.bound())
	var over *mrtr.OverBudgetError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &over):
		c.metrics.MRTREvent(metrics.EventRejected, metrics.RejectOverBudget)
		return c.drafts.limited(over.RetryAfter, "Too many rounds answered by this caller; nothing was run: call again after Retry-After")
	case errors.Is(err, mrtr.ErrStoreUnavailable):
		c.metrics.MRTREvent(metrics.EventRejected, metrics.RejectStoreUnavailable)
		e := rpcError(jsonrpc.NewError(jsonrpc.CodeUnavailable, "Confirmation store unavailable; retry later"))
		e.Header = http.Header{"Retry-After": {"1"}}
		e.Outcome = outcomeUnavailable
		return e
	}
	return c.rejectState(x, err)
}

// askConfirmation answers a call that policy marks as risky with an input_required result
// carrying a form elicitation, only if the client declared elicitation on this request.
func (c *confirmer) askConfirmation(x *request, b mrtr.Binding) error {
	if !mrtr.DeclaresFormElicitation(x.in.meta.ClientCapabilities) {
		e := jsonrpc.NewError(jsonrpc.CodeMissingRequiredClientCapability,
			"Missing required client capability: this call needs user confirmation through elicitation")
		e.Data = json.RawMessage(`{"requiredCapabilities":` + mrtr.RequiredElicitationCapability + `}`)
		return denialError(rpcError(e), denial{remediation: remediationUndisclosed, text: "The call to " + x.route.name +
			" needs the user's confirmation, which this client cannot ask for: " + lacksElicitation(x, era.CapElicitationForm) + ". It was not run."})
	}
	forwarded, err := confirmable(x)
	if err != nil {
		return err
	}
	tok, err := c.codec.Seal(mrtr.State{Kind: mrtr.KindConfirm, Issuer: b.Issuer, Subject: b.Subject,
		Upstream: b.Upstream, Method: b.Method, Name: b.Name, ArgsDigest: b.ArgsDigest})
	if err != nil {
		return unsealable(x, err)
	}
	ir := mrtr.ConfirmationResult(x.route.name, x.in.params.Arguments, forwarded, tok)
	x.pinNote(&ir)
	res, err := json.Marshal(ir)
	if err != nil {
		return err
	}
	c.metrics.MRTREvent(metrics.EventConfirmIssued, "")
	c.logDecision(x, "confirmation requested")
	// Not yet authorized: the user's confirmation is the remedy, which the form itself asks for
	// (the draft defines no hint for a form).
	_ = x.answer(c.drafts.withEnvelope(x, res, denial{remediation: remediationAvailable}), outcomeInputRequired)
	return nil
}

// answerConfirmation handles the retry of a confirmation: approved calls are forwarded once;
// declined or cancelled ones are answered as a failed tool call and never forwarded; missing
// answers get a fresh confirmation (docs/protocol.md §3: never assume the client will retry).
func (c *confirmer) answerConfirmation(x *request, st *mrtr.State, b mrtr.Binding) (json.RawMessage, bool, error) {
	outcome, err := mrtr.Evaluate(x.in.params.InputResponses, mrtr.ConfirmKey)
	switch outcome {
	case mrtr.OutcomeMissing:
		return nil, true, c.askConfirmation(x, b)
	case mrtr.OutcomeMalformed:
		return nil, false, malformedAnswer(err)
	}
	if err := c.consume(x, st); err != nil {
		return nil, false, err
	}
	if outcome != mrtr.OutcomeApproved {
		c.metrics.MRTREvent(metrics.EventConfirmDeclined, "")
		c.logDecision(x, "confirmation "+outcome.String())
		text := "The user did not approve the call to " + x.route.name + " (" + outcome.String() + "); it was not run."
		if x.in.req.Method != mrtr.MethodToolsCall {
			// Only a tool result has room for a failure the model reads: a prompt or a
			// resource read (confirmed because of pin drift) is refused as an error instead
			// of answered with a result of the wrong shape.
			e := jsonrpc.NewError(jsonrpc.CodeUnauthorized, text).WithData(map[string]any{"reason": "not-approved"})
			return nil, false, &Error{Status: http.StatusForbidden, RPC: e, Outcome: outcomeDenied}
		}
		return nil, true, c.drafts.refuseCall(x, denial{remediation: remediationUnavailable, text: text})
	}
	c.metrics.MRTREvent(metrics.EventConfirmApproved, "")
	c.logDecision(x, "confirmation approved")
	x.route.confirmed = true
	p, err := mrtr.RetryParams(x.in.req.Params, st)
	if err != nil {
		return nil, false, invalidParams("Invalid params: " + err.Error())
	}
	return p, false, nil
}

func errString(err error) string {
	if err == nil {
		return "malformed"
	}
	return err.Error()
}

func (c *confirmer) logDecision(x *request, what string) {
	c.log.LogAttrs(x.ctx, slog.LevelInfo, what,
		slog.String("request_id", x.requestID), slog.String("subject", x.subject()),
		slog.String("upstream", x.route.upstream), slog.String("name", logName(x)))
}

// mrtrOut is the sealing part of stage forward: a backend's input_required result reaches the client with the backend's
// requestState sealed inside ours, bound to this caller, target and arguments, so the retry can
// land on any replica and still reach the same backend with the backend's own state.
func (c *confirmer) mrtrOut(x *request, result []byte, kind resultKind) ([]byte, string, error) {
	if c.codec == nil || kind != kindInputRequired {
		return result, outcomeOK, nil
	}
	target := upstreams.Target{Upstream: x.route.upstream, Name: x.route.upstreamName}
	b, err := c.binding(x, target)
	if err != nil {
		return nil, "", err
	}
	wrapped, err := c.codec.WrapUpstream(result, mrtr.State{Kind: mrtr.KindUpstream, Issuer: b.Issuer,
		Subject: b.Subject, Upstream: b.Upstream, Method: b.Method, Name: b.Name, ArgsDigest: b.ArgsDigest,
		Confirmed: x.route.confirmed, ApprovedOnPage: x.route.approvedOnPage})
	switch {
	case errors.Is(err, mrtr.ErrBindingTooLarge):
		return nil, "", unsealable(x, err)
	case errors.Is(err, mrtr.ErrUnsealable):
		// The backend's own state is more than a requestState of the gateway may carry
		// (mrtr.maxTokenBytes): the round cannot go on, and the client is told why rather
		// than that the backend answered something invalid.
		return nil, "", &Error{Status: http.StatusBadGateway, Outcome: outcomeBadResponse, RPC: jsonrpc.NewError(
			jsonrpc.CodeUpstreamUnavailable, "Backend's requestState is larger than the gateway carries (mrtr.maxTokenBytes): this round cannot go on")}
	case err != nil:
		return nil, "", upstreams.ErrBadResponse
	}
	return wrapped, outcomeInputRequired, nil
}

// unsealable is the error of a call whose requestState could not be sealed: a name too long
// for any state (mrtr.ErrBindingTooLarge: a resource URI can be longer than mrtr.maxTokenBytes
// allows a state to bind) is the client's, refused as invalid params and saying why; anything
// else stays the error it is.
func unsealable(x *request, err error) error {
	if !errors.Is(err, mrtr.ErrBindingTooLarge) {
		return err
	}
	what := "name"
	if x.in.req.Method == mrtr.MethodResourcesRead {
		what = "resource URI"
	}
	return invalidParams("Invalid params: the " + what + " is too long for the gateway to confirm or continue this call: " +
		"its requestState would exceed mrtr.maxTokenBytes")
}
