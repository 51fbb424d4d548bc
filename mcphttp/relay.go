package mcphttp

import (
	"errors"
	"io"
	"net/http"

	"github.com/mcp-gateway/gateway/upstreams"
)

// relay is the relaying part of stage forward. It copies a backend's response to the request's
// sink as it arrives: every message before the last as an event, so progress reaches the client
// before the result; the last one as the request's result, the only message rewritten (its
// result written from where the backend's response was read), or as the backend's error. While
// the backend is quiet, keep-alive comments hold the response open. It returns how the response
// ended.
//
// Events are sent when the relay would wait for the backend, not one by one: those the backend
// sent together go out in one write (as a reverse proxy sends what it read at once), the last
// with the response's end, and none waits on a backend that pauses.
//
// asks is what the interceptors decided about the backend's requests to the client mid-call
// (nil: they govern none): one they refused withholds the result.
func (x *request) relay(st *upstreams.Stream, asks *askChecks) (string, error) {
	st.ResultOnly()
	out := x.out
	// held counts the bytes of events written without a flush; nil: every event is flushed.
	// OnWait's fn runs inside Next, on this goroutine.
	var held *int
	if st.SSE() {
		h := new(int)
		if st.OnWait(func() { out.FlushHeld(h) }) {
			held = h
		}
	}
	for {
		msg, final, err := st.Next()
		if errors.Is(err, io.EOF) {
			return outcomeOK, nil
		}
		if err != nil {
			return "", err
		}
		if !final {
			if x.rails != nil {
				var drop bool
				if msg, drop = x.s.rails.checkNotification(x, msg); drop {
					continue
				}
			}
			if err := out.Event(msg, held); err != nil {
				return "", err
			}
			continue
		}
		return relayFinal(x, st, msg, asks, held)
	}
}

// relayFinal answers the client with the backend's final message msg of st: a JSON-RPC error as
// the backend sent it (checked by the guardrails), else its result once everything that reads a
// result before the client does has passed it (checkFinal), a round trip's state sealed.
func relayFinal(x *request, st *upstreams.Stream, msg []byte, asks *askChecks, held *int) (string, error) {
	out := x.out
	status := backendStatus(st.Status())
	result := st.Result()
	if result == nil {
		if x.rails != nil {
			msg = x.s.rails.checkError(x, msg)
		}
		return outcomeBackendError, out.Message(msg, status, outcomeBackendError, held)
	}
	kind, err := resultShape(x, result)
	if err != nil {
		return "", err
	}
	if asks != nil && (asks.blocked != nil || asks.broken != nil) {
		refusal, err := x.s.intercept.withheld(x, asks)
		if err != nil {
			return "", err
		}
		return outcomeDenied, out.Result(refusal, http.StatusOK, outcomeDenied, held)
	}
	result, refusal, err := checkFinal(x, result, kind, held)
	switch {
	case err != nil:
		return "", err
	case refusal != nil:
		return outcomeDenied, out.Result(refusal, http.StatusOK, outcomeDenied, held)
	}
	// The stream has decoded the message already and hands over its result, which the answer
	// borrows; a round trip's state is sealed first.
	result, outcome, err := x.s.confirm.mrtrOut(x, result, kind)
	if err != nil {
		return "", err
	}
	return outcome, out.Result(result, status, outcome, held)
}

// checkFinal passes a final result of kind through what reads it before the client does, in this
// order: the interceptors' response phase (which may replace it), a pinned UI resource's _meta.ui,
// the guardrails (which may redact it), and, for a round, the capabilities the client declared.
// It returns the result as released, or the refusal the client gets instead.
func checkFinal(x *request, result []byte, kind resultKind, held *int) (released, refusal []byte, err error) {
	if ic := x.s.intercept; ic != nil {
		// The response phase: the interceptors read the result before the client does; the
		// progress relayed so far reaches the client while they decide.
		if held != nil {
			x.out.FlushHeld(held)
		}
		if result, refusal, err = ic.response(x, result, kind); err != nil || refusal != nil {
			return nil, refusal, err
		}
	}
	// After the interceptors: a UI resource's pinned _meta.ui is checked on what the client
	// receives, a mutated result included.
	if x.route.uiReadPin != nil {
		if err := x.checkUIRead(result); err != nil {
			return nil, nil, err
		}
	}
	if x.rails != nil {
		if result, refusal, err = x.s.rails.checkResult(x, result); err != nil || refusal != nil {
			return nil, refusal, err
		}
	}
	// What the client is asked is what it declared it can answer, whoever wrote the round (the
	// backend, or an interceptor that mutated it), once its sampling requests ask for no context
	// the backend is not trusted with (samplingcontext.go).
	if kind == kindInputRequired {
		if result, err = roundWithoutContext(x, result); err != nil {
			return nil, nil, err
		}
		if err := checkAsked(x, result); err != nil {
			return nil, nil, err
		}
	}
	return result, nil, nil
}

// backendStatus is the status a backend's response of HTTP status s is relayed with: a JSON-RPC
// error keeps a 4xx the backend chose for it, except the two that speak of the client's own
// credentials. A backend's 401 or 407 refuses the credentials the gateway sent it (its own, an
// exchanged token, a proxy's), never the client's token to the gateway: relayed as they are,
// they would send the client to authorize again with the gateway, for nothing. Those are 502,
// the backend's error relayed in-band as it is.
func backendStatus(s int) int {
	switch {
	case s == http.StatusUnauthorized, s == http.StatusProxyAuthRequired:
		return http.StatusBadGateway
	case s >= 400 && s < 500:
		return s
	}
	return http.StatusOK
}
