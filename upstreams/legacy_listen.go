package upstreams

import (
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/mcp-gateway/gateway/internal/era"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
)

// legacyBackend is feed.backend for a legacy backend (digest §7 "Listen"): a session of
// its own (subscriptions are per session, and a session has one GET stream), the legacy GET
// stream, resources/subscribe for each URI of the share, and only the requested notification
// types relayed. The session is deleted at the end, which also ends its subscriptions.
func (f *feed) legacyBackend(ctx context.Context) {
	r, b := f.spec.r, f.spec.b
	start := r.now()
	err := f.legacyListen(ctx, b, f.spec.share, f.spec.pass)
	switch {
	case errors.Is(err, errLegacySkip):
		r.log.Info("legacy upstream has no GET stream; left out of the listen", "upstream", b.name)
		err = nil
	case err != nil && ctx.Err() == nil:
		r.log.Warn("upstream listen stream failed", "upstream", b.name, "error", err.Error())
	}
	r.record(b, MethodListen, outcomeOf(err), start, err, true)
}

func (f *feed) legacyListen(ctx context.Context, b *backend, share *subscriptions, hdr http.Header) error {
	r := f.spec.r
	sess, err := r.legacyInitialize(ctx, b)
	if err != nil {
		return err
	}
	defer r.legacyDelete(ctx, b, sess)
	hctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	headers := time.AfterFunc(b.timeout, func() { cancel(wire.ErrCallTimeout) })
	resp, err := r.legacyDo(hctx, b, sess, http.MethodGet, nil, hdr, "")
	headers.Stop()
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusMethodNotAllowed {
		return errLegacySkip
	}
	if _, isSSE := wire.MediaType(resp.Header.Get("Content-Type")); !isSSE || resp.StatusCode/100 != 2 {
		return wire.StatusError(b.name, resp.StatusCode, "the GET stream was not an event stream")
	}
	for _, uri := range share.ResourceSubscriptions {
		params := appendString([]byte(`{"uri":`), uri)
		sctx, scancel := context.WithTimeoutCause(ctx, b.timeout, wire.ErrCallTimeout)
		m, _, err := r.legacyRequest(sctx, b, sess, era.MethodSubscribe, append(params, '}'), hdr)
		scancel()
		if err != nil {
			return err
		}
		if m.Error != nil {
			return errorf(ErrBadResponse, b, "resources/subscribe answered error %d", m.Error.Code)
		}
	}
	x := &legacyRoundTrip{r: r, b: b, sess: sess, resp: resp, sse: newLegacySSE(resp.Body, int(b.maxBytes))}
	return f.legacyRelay(hctx, x, share)
}

// legacyRelay forwards the requested notifications of a legacy GET stream until it ends. The
// stream carries everything the session hears, and the share asked for some of it: the rest is
// not published (each subscriber still filters by its own subscriptions and policy).
func (f *feed) legacyRelay(ctx context.Context, x *legacyRoundTrip, share *subscriptions) error {
	rw := uriRewriter{ns: x.r.ns, upstream: x.b.name}
	flt := newListenFilter(share, x.r.namespacedURI(x.b.name))
	for {
		data, err := x.sse.Next()
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return readErr(ctx, x.b, err)
		}
		m, err := jsonrpc.DecodeMessage(data, wire.JSONLimits(x.b.maxBytes))
		switch {
		case err != nil:
			return errorf(ErrBadResponse, x.b, "listen event is not a JSON-RPC message")
		case m.IsResponse():
			continue
		case m.ID != nil:
			x.answer(ctx, m)
			continue
		}
		if ev, ok := eventOf(rw, m); ok {
			if _, wanted := flt.covers(ev); wanted {
				f.publish(ev)
			}
		}
	}
}

// legacyDelete ends a session with DELETE (405 is allowed, digest §7); best effort.
func (r *Registry) legacyDelete(ctx context.Context, b *backend, s *legacySession) {
	if s.id == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), legacySideTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, b.url, nil)
	if err != nil {
		return
	}
	req.Header = legacyHeader(b, s, nil)
	if resp, err := b.client.Do(req); err == nil {
		drainClose(resp.Body)
	}
}
