package upstreams

import (
	"context"
	"fmt"
	"net/http"

	"github.com/mcp-gateway/gateway/internal/era"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

// openLegacy is open for a legacy backend: the request goes on a pooled session with a
// session-unique id, and the Stream translates what comes back.
func (r *Registry) openLegacy(s *Stream, o *outgoing) (*Stream, error) {
	lr, err := era.ToLegacyRequest(o.body)
	if err != nil {
		err = errorf(ErrBadResponse, s.b, "request for a legacy backend: %v", err)
		s.fail(err)
		return nil, err
	}
	if o.fromCaller && s.b.exchangesTokens() {
		// Every request of this call, the side ones included, goes as the caller.
		s.ctx = withLegacyCaller(s.ctx, o.subject)
	}
	x, err := r.legacyStart(s.ctx, s.b, lr, o)
	if err != nil {
		s.fail(err)
		return nil, err
	}
	s.leg, s.resp, s.status = x, x.resp, x.resp.StatusCode
	if x.sse != nil {
		s.isSSE = true
		return s, nil
	}
	m, _ := x.next(s.ctx)
	if s.pending, err = s.render(era.ToModernResult(s.method, m)); err != nil {
		s.fail(err)
		return nil, err
	}
	return s, nil
}

// legacyStart sends lr on a pooled session: for a caller of a token-exchange backend one of
// that caller's own sessions, else one of the gateway's. A 404 to a request carrying a session
// id means the session expired (https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#session-management):
// the session is dropped, a fresh one initialized, and the request sent once more.
func (r *Registry) legacyStart(ctx context.Context, b *backend, lr *era.Request, o *outgoing) (*legacyRoundTrip, error) {
	if err := b.breaker.allow(r.now(), false); err != nil {
		return nil, err
	}
	pool, owner, err := r.legacyPool(b, o)
	if err != nil {
		b.breaker.result(r.now(), OutcomeCanceled) // frees a half-open slot this request may hold
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		sess, err := pool.acquire(ctx, r, b)
		if err != nil {
			if owner != nil {
				b.legacy.callers.give(owner, r.now())
			}
			return nil, err
		}
		x := &legacyRoundTrip{r: r, b: b, sess: sess, pool: pool, owner: owner, uid: sess.nextID(), logs: lr.Logs}
		resp, err := r.legacyDo(ctx, b, sess, http.MethodPost, legacyRequestBody(x.uid, lr.Method, lr.Params), o.pass, "")
		if err != nil {
			if ctx.Err() != nil {
				x.end(ctx, outcomeOf(err)) // the request may have reached the backend
			}
			x.release()
			return nil, err
		}
		if resp.StatusCode == http.StatusNotFound && sess.id != "" && attempt == 0 {
			drainClose(resp.Body)
			pool.drop(sess)
			pool.release(sess)
			r.log.Info("legacy upstream session expired; initializing a new one", "upstream", b.name)
			continue
		}
		if err := x.accept(resp); err != nil {
			x.close()
			x.release()
			return nil, readErr(ctx, b, err)
		}
		return x, nil
	}
}

// legacyPool returns the pool o's request goes to. A caller of a token-exchange backend gets
// its own (owner, to hand back when done); without the caller's token the request is refused
// before anything is sent, never sent as the gateway. Sessions the pools closed to make room are
// ended in the background.
func (r *Registry) legacyPool(b *backend, o *outgoing) (*sessionPool, *callerPool, error) {
	if !o.fromCaller || !b.exchangesTokens() {
		return &b.legacy.pool, nil, nil
	}
	if o.subject == "" {
		return nil, nil, fmt.Errorf("%w: %w: %s: no caller token to exchange", ErrUnavailable, ErrCredentials, b.name)
	}
	owner, closed, err := b.legacy.callers.take(callerKey(o), r.now())
	if len(closed) > 0 {
		go r.deleteSessions(b, closed)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %s: %w (limit %d)", ErrUnavailable, b.name, err, b.legacy.callers.max)
	}
	return &owner.pool, owner, nil
}

// nextLegacy is Stream.Next for a legacy SSE response: progress passes through, logs only when
// the client asked for them, and any other notification is dropped, as a 2026 response stream
// carries only notifications about its request (digest §2.1).
func (s *Stream) nextLegacy() ([]byte, bool, error) {
	for range maxSkippedNotifications {
		m, err := s.leg.next(s.ctx)
		if err != nil {
			err = readErr(s.ctx, s.b, err)
			s.fail(err)
			return nil, false, err
		}
		s.resp = s.leg.resp // a resumed stream has a new response
		switch {
		case m.IsResponse():
			msg, err := s.render(era.ToModernResult(s.method, m))
			if err != nil {
				s.fail(err)
				return nil, false, err
			}
			s.end(s.outcome, nil)
			return msg, true, nil
		case m.Method == era.NotifProgress, m.Method == era.NotifMessage && s.leg.logs:
			return jsonrpc.AppendNotification(nil, m.Method, m.Params), false, nil
		}
	}
	err := errorf(ErrBadResponse, s.b, "too many notifications before the response")
	s.fail(err)
	return nil, false, err
}

// endLegacy is called once when the Stream finishes.
func (s *Stream) endLegacy(outcome string) {
	s.leg.end(s.ctx, outcome)
	s.leg.release()
}
