package backend

import (
	"crypto/sha256"
	"errors"
	"fmt"

	"github.com/mcp-gateway/gateway/internal/bodyread"
	"github.com/mcp-gateway/gateway/internal/era"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
	"github.com/mcp-gateway/gateway/upstreams/legacy"
)

// openLegacy is open for a legacy backend: the request goes on a pooled session with a
// session-unique id, and the Stream translates what comes back.
func (s *Stream) openLegacy(o *Request) (*Stream, error) {
	lr, err := era.ToLegacyRequest(o.Body)
	if err != nil {
		err = errorf(wire.ErrBadResponse, s.b, "request for a legacy backend: %v", err)
		s.fail(err)
		return nil, err
	}
	if o.FromCaller && s.b.ExchangesTokens() {
		// Every request of this call, the side ones included, goes as the caller.
		s.ctx = legacy.WithCaller(s.ctx, o.Subject, o.SubjectKey)
	}
	x, err := s.legacyStart(lr, o)
	if err != nil {
		if errors.Is(err, bodyread.ErrBudget) {
			err = resultBudgetErr(s.results, err)
		}
		s.fail(err)
		return nil, err
	}
	s.leg, s.resp, s.status = x, x.Response(), x.Response().StatusCode
	if x.SSE() {
		s.isSSE = true
		return s, nil
	}
	m, _ := x.Next(s.ctx)
	if s.pending, err = s.render(era.ToModernResult(s.method, m)); err != nil {
		s.fail(err)
		return nil, err
	}
	return s, nil
}

// legacyStart sends lr on a pooled session, within the backend's circuit breaker: for a caller
// of a token-exchange backend one of that caller's own sessions, else one of the gateway's.
func (s *Stream) legacyStart(lr *era.Request, o *Request) (*legacy.RoundTrip, error) {
	b := s.b
	if err := admit(b, false, o.charge()); err != nil {
		return nil, err
	}
	pool, give, err := b.legacy.pool(b, o)
	if err != nil {
		b.breaker.result(b.env.Now(), o.charge(), OutcomeCanceled) // frees a half-open slot this request may hold
		return nil, err
	}
	return b.legacy.bridge.Start(s.ctx, pool, give, lr, o.Header, s.results)
}

// pool returns the pool o's request to b goes to. A caller of a token-exchange backend gets
// its own (give hands it back when done); without the caller's token the request is refused
// before anything is sent, never sent as the gateway.
func (l *legacyState) pool(b *Backend, o *Request) (*legacy.Pool, func(), error) {
	if !o.FromCaller || !b.ExchangesTokens() {
		return l.bridge.Gateway(), nil, nil
	}
	if o.Subject == "" {
		return nil, nil, fmt.Errorf("%w: %w: %s: no caller token to exchange", wire.ErrUnavailable, ErrCredentials, b.name)
	}
	if err := b.creds.checkSubjectIssuer(o); err != nil {
		return nil, nil, err
	}
	return l.bridge.CallerPool(callerKey(o))
}

// callerKey identifies the caller of o by its caller key (callerkey.Of), which every
// request reaching a caller's pool has: checkSubjectIssuer refuses one without it first.
func callerKey(o *Request) [sha256.Size]byte {
	return sha256.Sum256([]byte(o.Caller))
}

// nextLegacy is Stream.Next for a legacy SSE response: progress under the request's token
// passes through (ownProgress), logs only when the client asked for them, and any other
// notification is dropped, as a 2026 response stream carries only notifications about its
// request (https://modelcontextprotocol.io/specification/2026-07-28/basic/transports).
func (s *Stream) nextLegacy() ([]byte, bool, error) {
	for skipped := 0; skipped < maxSkippedNotifications; {
		m, err := s.leg.Next(s.ctx)
		if err != nil {
			err = ReadErr(s.ctx, s.b, s.results, err)
			s.fail(err)
			return nil, false, err
		}
		s.resp = s.leg.Response() // a resumed stream has a new response
		switch {
		case m.IsResponse():
			msg, err := s.render(era.ToModernResult(s.method, m))
			if err != nil {
				s.fail(err)
				return nil, false, err
			}
			s.end(s.outcome, nil)
			return msg, true, nil
		case m.Method == era.NotifProgress && ownProgress(m.Params, s.progress),
			m.Method == era.NotifMessage && s.leg.LogWanted(m.Params):
			if !s.overNotes() {
				return jsonrpc.AppendNotification(nil, m.Method, m.Params), false, nil
			}
		default:
			skipped++
		}
	}
	err := errorf(wire.ErrBadResponse, s.b, "too many notifications before the response")
	s.fail(err)
	return nil, false, err
}

// endLegacy is called once when the Stream ends: a caller that left or timed out before the
// response is a cancellation the backend is told about.
func (s *Stream) endLegacy(outcome string) {
	why := legacy.NotAbandoned
	switch outcome {
	case OutcomeCanceled:
		why = legacy.ClientLeft
	case OutcomeTimeout:
		why = legacy.TimedOut
	}
	s.leg.End(s.ctx, why)
	s.leg.Release()
}
