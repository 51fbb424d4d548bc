package mcphttp

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/useroauth"
	"github.com/mcp-gateway/gateway/internal/vault"
	"github.com/mcp-gateway/gateway/mrtr"
)

// Per-user OAuth, stage connect (docs/user-oauth.md): a call routed to a backend whose callers
// connect their own accounts goes on only with the caller's token from the vault, which the
// backend request then carries; a caller without one is sent to the connect page and nothing
// is forwarded. The pages, the vault and the OAuth client are package useroauth.

// ConnectKey is the inputRequests key of the URL elicitation sending the user to the connect
// page.
const ConnectKey = "io.mcp-gateway/connect"

// unavailableRetry is the Retry-After of a call whose user token cannot be had now, when the
// cause says nothing of when it can.
const unavailableRetry = 5 * time.Second

// registerConnect serves the connect pages under their path on the MCP listener, when per-user
// OAuth is configured.
func (s *Server) registerConnect(e *echo.Echo) {
	if s.userOAuth == nil {
		return
	}
	routePage(e, s.userOAuth.Path(), s.userOAuth)
}

// connect is stage connect: the caller's token for a per-user backend, or an answer sending
// the user to connect an account (nothing is forwarded), or a retryable error when the token
// cannot be had now (the store or the backend's authorization server is down).
func (s *Server) connect(x *request) (done bool, err error) {
	upstream := x.route.target.Upstream
	if !s.backends.PerUser(upstream) {
		return false, nil
	}
	p := x.caller.principal
	if p == nil {
		// Fail closed: without a caller there is no one's token to send.
		return false, errors.New("per-user OAuth backend called without an authenticated caller")
	}
	who := vault.Caller{Issuer: p.Issuer, Subject: p.Subject}
	tok, ok, err := s.userOAuth.Token(x.ctx, upstream, who)
	if err == nil && !ok && !x.mutated {
		tok, ok, err = awaitConnect(s, x, upstream, who)
	}
	switch {
	case err != nil && x.ctx.Err() != nil:
		return false, x.ctx.Err() // the request ended (its client went away or cancelled it)
	case err != nil:
		return false, userTokenUnavailable(err)
	case ok:
		x.route.userToken = tok
		return false, nil
	case x.mutated:
		// Re-checked after an interceptor changed the call (stage intercept), where no stage
		// answers the request itself: the changed call is refused, never forwarded.
		return false, rpcError(jsonrpc.NewError(jsonrpc.CodeInvalidRequest,
			"The call was changed into one of a backend whose account the caller has not connected"))
	}
	return true, s.askConnect(x, who, upstream)
}

// awaitConnect waits for who's token for upstream on a retry whose client accepted the connect
// page, when the edge that built the request says its client's accept means only that the user
// was sent to the page (Inner.AwaitDecision, as for the approval page): a 2025-11-25 client's
// does, at once, and a new link in answer would send that client to a new page round after
// round, until the call ran out of rounds before the user could connect. The call holds its
// in-flight slot meanwhile, the caller's bound, with keep-alive comments on the response. It
// returns the token once the vault holds it; ok false when the wait ends first (the client is
// then sent to the page again) or there is nothing to wait for (no such accept, no such edge:
// a 2026-07-28 client retries when its user says so, and is answered at once); an error when
// the token cannot be had or the request ended.
func awaitConnect(s *Server, x *request, upstream string, who vault.Caller) (string, bool, error) {
	wait, _ := x.ctx.Value(awaitDecisionKey{}).(time.Duration)
	if wait <= 0 {
		return "", false, nil
	}
	if outcome, _ := mrtr.EvaluateURL(x.in.params.InputResponses, ConnectKey); outcome != mrtr.OutcomeApproved {
		return "", false, nil
	}
	x.out.KeepAlive(true)
	defer x.out.KeepAlive(false)
	w := NewPacedWait(s.now, s.now().Add(wait))
	for w.Pause(x.ctx, func(d time.Duration) { x.waited += d }) {
		if tok, ok, err := s.userOAuth.Token(x.ctx, upstream, who); err != nil || ok {
			return tok, ok, err
		}
	}
	return "", false, x.ctx.Err()
}

// askConnect answers a call whose caller has not connected the backend: a URL elicitation of
// the connect page for a client that takes one, else a failed tool call (or, for a method
// without a tool result, an error) naming the page. A client that declined or cancelled the
// page last time is told the call did not run.
func (s *Server) askConnect(x *request, who vault.Caller, upstream string) error {
	if len(x.in.params.InputResponses) > 0 {
		switch outcome, _ := mrtr.EvaluateURL(x.in.params.InputResponses, ConnectKey); outcome {
		case mrtr.OutcomeDeclined, mrtr.OutcomeCancelled:
			return s.notConnected(x, "The account for "+x.route.name+" was not connected ("+outcome.String()+"); the call did not run.")
		}
	}
	link, id, err := s.userOAuth.Link(who, upstream)
	if err != nil {
		return err
	}
	s.log.LogAttrs(x.ctx, slog.LevelInfo, "useroauth: connect link handed out", slog.String("request_id", x.requestID),
		slog.String("subject", x.subject()), slog.String("upstream", upstream), slog.String("link_id", id))
	msg := "The gateway calls " + upstream + " with your own account there, which is not connected yet. " +
		"Open the link, sign in, and allow the gateway to act for you; then continue here."
	if mrtrMethods[x.in.req.Method] && mrtr.DeclaresURLElicitation(x.in.meta.ClientCapabilities) {
		res, err := json.Marshal(connectResult{ResultType: mrtr.ResultTypeInputRequired,
			InputRequests: map[string]mrtr.URLInputRequest{ConnectKey: {Method: mrtr.MethodElicitationCreate,
				Params: mrtr.URLElicitParams{Mode: mrtr.ElicitationModeURL, Message: msg, URL: link, ElicitationID: id}}}})
		if err != nil {
			return err
		}
		// With server.draftErrors: [denials], the draft's use case 1: the user acts at a URL.
		res = s.drafts.withEnvelope(x, res, denial{remediation: remediationAvailable, hint: hintURL})
		_ = x.answer(res, outcomeInputRequired)
		return nil
	}
	return s.notConnected(x, msg+" "+link)
}

// connectResult is the input_required result of stage connect: no requestState, since the
// retry is an ordinary call that goes on once the vault holds the caller's token.
type connectResult struct {
	ResultType    string                          `json:"resultType"`
	InputRequests map[string]mrtr.URLInputRequest `json:"inputRequests"`
}

// notConnected answers with a failed tool call (the model sees why, and can show the link),
// which with server.draftErrors: [denials] carries remediation "undisclosed", the remedy told in
// its text; for a prompt, a read or a completion, which have no such result, with an error.
func (s *Server) notConnected(x *request, text string) error {
	if x.in.req.Method == mrtr.MethodToolsCall {
		return s.drafts.refuseCall(x, denial{remediation: remediationUndisclosed, text: text})
	}
	e := rpcError(jsonrpc.NewError(jsonrpc.CodeInvalidRequest, text))
	e.Outcome = outcomeDenied
	return e
}

// userTokenUnavailable fails a call closed, retryably, when the caller's token cannot be had
// now: the shared store or the backend's authorization server is down. Nothing is forwarded.
// Retry-After is the time left of a cooldown the cause carries (a registration that failed
// moments ago is not tried again before it), else a few seconds.
func userTokenUnavailable(cause error) error {
	e := rpcError(jsonrpc.NewError(jsonrpc.CodeUnavailable,
		"The backend's authorization server or the gateway's token store is unavailable; retry later"))
	e.Header = http.Header{"Retry-After": {retryAfterSeconds(useroauth.RetryAfter(cause, unavailableRetry))}}
	e.Outcome = outcomeUnavailable
	return e
}
