package pre2026

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/mcp-gateway/gateway/internal/era"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/legacysession"
	"github.com/mcp-gateway/gateway/upstreams"
)

// A pre-2026 backend's mid-call requests, relayed to a pre-2026 client (docs/protocol.md §9.5).
// A 2025 backend asks for elicitation, sampling or roots with a JSON-RPC request on the response
// stream of the call, and waits for the answer before it goes on. MRTR cannot carry that to a
// 2026-07-28 client, but a pre-2026 client expects exactly such requests on its own call's
// stream: the edge asks it there (asks.go) and waits for the answer, which may be POSTed to any
// replica, and the answer goes back to the backend on its backend session. The asks' bounds
// (timeout, pending requests per session, per caller and per replica) apply, and a client that
// goes away cancels the wait, and with it the backend's call.

// relayKey is the inputRequests key a relayed request goes under: one request per round, so
// any fixed key will do; the client never sees it.
const relayKey = "relay"

// backendRequests returns the function that carries the mid-call requests of a pre-2026 backend
// to q's client. Errors it returns are *jsonrpc.Error, which the backend gets as its request's
// error, except the end of ctx. A call relays at most legacy.maxRounds requests, as a
// 2026-07-28 backend's call has at most that many input rounds: each is a new request to the
// client's user (or a sampling it may pay for), and a backend reads an answer from one request
// at a time, so nothing else would stop one that keeps asking before the backend's call ends.
func (q *clientReq) backendRequests() upstreams.ClientRequests {
	sess, e := q.sess, q.e
	return func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		if int(atomic.AddInt32(&q.relayed, 1)) > e.cfg.MaxRounds {
			return nil, jsonrpc.NewError(jsonrpc.CodeInternalError,
				"the call asked the client more than "+strconv.Itoa(e.cfg.MaxRounds)+" times")
		}
		r, err := era.ServerRequest(sess.Version, relayKey, method, params)
		if err != nil {
			// The reason is the backend's to read: its own request, which no client was sent.
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: the gateway cannot relay this "+method+" request: "+
				strings.TrimPrefix(err.Error(), "era: "+method+": "))
		}
		r.Params = withoutOwnAnnotation(r.Params)
		// What the client would answer itself had the request reached it: it does not
		// implement what it did not declare. Nothing is written to the client.
		if !era.Declares(sess.Caps, r.Capability) {
			return nil, relayNoCapability(r.Capability, sess)
		}
		rctx, cancel := context.WithTimeout(ctx, e.cfg.AskTimeout)
		defer cancel()
		// The request switches the client's response to SSE; keep-alive comments hold it open
		// while the user thinks. They stay on after the answer: the backend's call, which
		// armed them, goes on (with the answer) until its last message, which stops them.
		q.c.KeepAlive(true)
		asked := e.now()
		responses, release, err := e.asks.ask(rctx, sess, q.in.BoundKey(), []era.InputRequest{r}, q.roundLimits(), q.emit)
		q.in.Waited(e.now().Sub(asked))
		if err != nil {
			rerr, unexplained := relayError(ctx, rctx, sess, err)
			if unexplained && q.c.Failed() == nil {
				// Not the client gone: the gateway's own failure, which only the log tells.
				e.logNotAsked(q.in, err)
			}
			return nil, rerr
		}
		// Held, and charged, until handed to the backend's session, which copies it into the
		// request that answers the backend.
		defer release()
		var value json.RawMessage
		_ = jsonrpc.Members(responses, func(key, val []byte) error {
			if string(key) == relayKey {
				value = val
			}
			return nil
		})
		if value == nil {
			return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "the client's answer was lost")
		}
		return value, nil
	}
}

// relayNoCapability is the error a backend gets for a request the client did not declare the
// capability for.
func relayNoCapability(capability string, sess *legacysession.Session) *jsonrpc.Error {
	return jsonrpc.NewError(jsonrpc.CodeMethodNotFound,
		"the client did not declare the "+capabilityWord(capability, sess.Caps, sess.Version)+" capability")
}

// relayError is what the backend gets when its request to the client of sess was not answered:
// the client's own error as the client sent it, or the gateway's reason. The end of the call's
// ctx is returned as it is: nothing more goes to the backend then. unexplained reports a failure
// the gateway has no words for, which the caller logs, as askFailed does when a round of a
// 2026-07-28 backend's input could not be asked.
func relayError(ctx, rctx context.Context, sess *legacysession.Session, err error) (_ error, unexplained bool) {
	var ce *clientAnswerError
	var nc *noCapabilityError
	switch {
	case errors.As(err, &ce):
		return ce.Err, false
	case ctx.Err() != nil:
		return ctx.Err(), false
	case errors.Is(err, errSessionExpired), timedOut(rctx, err):
		return jsonrpc.NewError(jsonrpc.CodeInternalError, "no answer from the client in time"), false
	case errors.As(err, &nc):
		return relayNoCapability(nc.Capability, sess), false
	case errors.Is(err, errAsksBusy):
		return jsonrpc.NewError(jsonrpc.CodeInternalError, "too many requests are waiting for this client's answers"), false
	case errors.As(err, new(*answersTooLargeError)), errors.As(err, new(*callerAnswersError)), errors.Is(err, errAnswersBudget):
		return jsonrpc.NewError(jsonrpc.CodeInternalError, "the client's answer could not be held: "+err.Error()), false
	}
	return jsonrpc.NewError(jsonrpc.CodeInternalError, "the client could not be asked"), true
}
