package pre2026

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"slices"
	"strings"

	"github.com/mcp-gateway/gateway/internal/era"
	"github.com/mcp-gateway/gateway/mcphttp"
	"github.com/mcp-gateway/gateway/upstreams"
)

// ask is one input round of a translated request (docs/protocol.md §9.5): the inputRequests of
// an input_required result (a backend's, or the gateway's own confirmation) become requests to
// the client on its call's stream, whose answers become the next round's inputResponses; the
// sealed requestState goes with them and never reaches the client. done reports that the
// request has been answered (an entry the client cannot answer, a timeout). held is what the
// answers are charged as: they stay charged to the caller's share and the replica's budget of
// request bytes in flight (roundLimits) until the next round's request that carries them has
// ended and held.release is called; a copy of them is charged with held.take. Nil when nothing
// is held (its methods then do nothing). written is called once the requests are written, or ask ends without
// writing them all: the input_required copy (result) and the requests built from it are let go
// then.
func (q *clientReq) ask(ctx context.Context, result []byte, written func()) (responses json.RawMessage, state string, held *heldAnswers, done bool, err error) {
	e := q.e
	defer written()
	reqs, state, err := q.inputRequired(result)
	if err != nil {
		return nil, "", nil, false, err
	}
	withAnnotation(result, reqs)
	// Nothing is asked, and nothing forwarded, when any entry needs what the client did not
	// declare at initialize.
	for _, r := range reqs {
		if !era.Declares(q.sess.Caps, r.Capability) {
			return nil, "", nil, true, q.noCapability(r.Capability)
		}
	}
	rctx, cancel := context.WithTimeout(ctx, e.cfg.AskTimeout)
	defer cancel()
	// The requests switch the response to SSE; keep-alive comments hold it open while the user
	// thinks.
	q.c.KeepAlive(true)
	asked := e.now()
	unsent := len(reqs) // not reqs itself, which the wait must not keep
	emit := func(msg []byte) error {
		err := q.emit(msg)
		if unsent--; unsent == 0 {
			written()
		}
		return err
	}
	responses, held, err = e.asks.askHeld(rctx, q.sess, q.in.BoundKey(), reqs, q.roundLimits(), emit)
	q.in.Waited(e.now().Sub(asked))
	q.c.KeepAlive(false)
	switch {
	case err == nil:
		return responses, state, held, false, nil
	case q.c.Failed() != nil:
		return nil, "", nil, false, mcphttp.ErrClientWrite
	case ctx.Err() != nil:
		// The client went away or cancelled the call: nothing runs on at a backend between
		// rounds, and nothing more is written.
		return nil, "", nil, false, context.Canceled
	case timedOut(rctx, err):
		return nil, "", nil, true, q.failed("no answer from the client within " + e.cfg.AskTimeout.String())
	}
	return nil, "", nil, true, q.askFailed(err)
}

// askFailed ends a call whose round of client input failed for err (not a timeout, nor the
// client gone): the failed call that says why.
func (q *clientReq) askFailed(err error) error {
	var nc *noCapabilityError
	var big *answersTooLargeError
	var share *callerAnswersError
	var refused *clientAnswerError
	switch {
	case errors.As(err, &refused):
		// The client's own refusal of a request, named as it sent it: nothing of the
		// gateway's inner workings.
		return q.failed("the client answered " + refused.Method + " with an error instead of a result: " + refused.Err.Message)
	case errors.As(err, &big):
		return q.failed(big.Error())
	case errors.As(err, &share):
		return q.failed(share.Error() + "; answer fewer of them at once")
	case errors.Is(err, errAnswersBudget):
		return q.failed("the gateway holds as many request bytes as it may now; try again shortly")
	case errors.Is(err, errSessionExpired):
		return q.failed("the client's session expired before it answered; initialize again")
	case errors.As(err, &nc):
		return q.noCapability(nc.Capability)
	case errors.Is(err, errAsksBusy):
		return q.failed("too many requests of this session or caller are waiting for the client's answers")
	}
	q.e.logNotAsked(q.in, err)
	return q.failed(notAsked(err))
}

// logNotAsked logs why the client of in could not be asked for what its call needs, when the
// client is told only that it could not (notAsked): the request, the caller and the error,
// never an argument or a token.
func (e *Edge) logNotAsked(in *mcphttp.Incoming, err error) {
	e.log.LogAttrs(in.Context(), slog.LevelWarn, "legacy client could not be asked",
		slog.String("request_id", in.RequestID()), slog.String("subject", in.Subject()), slog.String("error", err.Error()))
}

// notAsked says, in a 2025 client's terms, why the gateway could not ask it for what a call
// needs: a request that could not be written to the call's stream is named by its method;
// anything else (the gateway's own failure to build its requests) is said as such. Never the
// error's text, which speaks of the gateway's inner workings; that is logged instead.
func notAsked(err error) string {
	var unwritten *askWriteError
	if errors.As(err, &unwritten) {
		return "the gateway could not send its " + unwritten.Method + " request to the client on this call's stream"
	}
	return "the gateway could not ask the client for the input this call needs"
}

// answerShareDivisor sets a caller's share of the replica's budget of request bytes in flight
// for the answers its rounds hold: a quarter, as a client address's share of it before
// authentication, so that one caller cannot hold the budget every request body needs.
const answerShareDivisor = 4

// roundLimits bound the answers a round of q holds: one request's worth in all
// (server.maxBodyBytes), the caller's share (a quarter of server.maxBodyBytesInFlight, never
// less than one request's worth; four requests' worth with the budget off), charged to the
// replica's budget.
func (q *clientReq) roundLimits() roundLimits {
	maxBody, budget := q.in.MaxBodyBytes(), q.in.MaxBodyBytesInFlight()
	share := answerShareDivisor * maxBody
	if budget > 0 {
		share = max(budget/answerShareDivisor, maxBody)
	}
	return roundLimits{MaxBytes: maxBody, CallerBytes: share, Budget: q.in}
}

// inputRequired reads an input_required result: its requests for a client of the session's
// version, and its requestState. Nothing else of it is kept, so the round's wait holds only
// what it needs (the requests are let go once written).
func (q *clientReq) inputRequired(result []byte) ([]era.InputRequest, string, error) {
	var ir struct {
		InputRequests json.RawMessage `json:"inputRequests"`
		RequestState  string          `json:"requestState"`
	}
	if json.Unmarshal(result, &ir) != nil || len(ir.InputRequests) == 0 {
		return nil, "", upstreams.ErrBadResponse
	}
	reqs, err := era.InputRequests(q.sess.Version, ir.InputRequests)
	if err != nil || len(reqs) == 0 {
		return nil, "", upstreams.ErrBadResponse
	}
	return reqs, ir.RequestState, nil
}

// emit writes one of the gateway's requests to the client, on its call's stream.
func (q *clientReq) emit(msg []byte) error { return q.c.Event(msg, nil) }

// timedOut reports whether ask gave up waiting: the round's deadline passed. The asks' own
// timeout is configured to the same legacy.askTimeout.
func timedOut(rctx context.Context, err error) bool {
	return errors.Is(rctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, errAskTimeout)
}

// capabilityWord names a capability of era.InputRequest (a Cap* name) for the user of a client
// of version that declared caps: form mode is "elicitation", as both eras call it, except to a
// client that declared URL mode, which has elicitation, only not that mode; either mode is
// "elicitation" to a client whose revision has none (2025-03-26).
func capabilityWord(c string, caps json.RawMessage, version string) string {
	if (c == era.CapElicitationForm || c == era.CapElicitationURL) && !versionHas(version, era.CapElicitationForm) {
		return "elicitation"
	}
	switch c {
	case era.CapElicitationForm:
		if era.Declares(caps, era.CapElicitationURL) {
			return "form-mode elicitation"
		}
		return "elicitation"
	case era.CapElicitationURL:
		return "URL-mode elicitation"
	}
	return c
}

// joinSorted names the distinct words of s, sorted, joined with "and".
func joinSorted(s []string) string {
	slices.Sort(s)
	return strings.Join(slices.Compact(s), " and ")
}
