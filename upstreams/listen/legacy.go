package listen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/mcp-gateway/gateway/internal/era"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/upstreams/backend"
	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
	"github.com/mcp-gateway/gateway/upstreams/legacy"
)

// legacyBackend is feed.backend for a legacy backend (docs/protocol.md §7 "Listen"): a session of
// its own (subscriptions are per session, and a session has one GET stream), the legacy GET
// stream, resources/subscribe for each URI of the share, and only the requested notification
// types relayed. The session is deleted at the end, which also ends its subscriptions.
func (f *feed) legacyBackend(ctx context.Context) error {
	src, b := f.spec.src, f.spec.b
	start := src.Now()
	o := f.spec.request()
	err := backend.CheckSubjectIssuer(b, &o)
	if err == nil {
		if o.FromCaller {
			// The session, its subscriptions and its stream are the caller's, as a call's are.
			ctx = legacy.WithCaller(ctx, o.Subject, o.SubjectKey)
		}
		err = f.legacyListen(ctx, b, f.spec.share, f.spec.pass)
	}
	switch {
	case errors.Is(err, errLegacySkip):
		src.Log.Info("legacy upstream has no GET stream; left out of the listen", "upstream", b.Name())
		err = nil
	case err != nil && ctx.Err() == nil && !errors.Is(err, wire.ErrRateLimited):
		src.Log.Warn("upstream listen stream failed", "upstream", b.Name(), "error", err.Error())
	}
	// Charged as a modern listen stream is (feed.backend).
	b.Record(&o, start, err)
	return err
}

// errLegacySkip marks a legacy backend that cannot take part in an operation (a GET stream
// refused with 405); the caller leaves it out quietly.
var errLegacySkip = errors.New("not supported by this legacy backend")

func (f *feed) legacyListen(ctx context.Context, b *backend.Backend, sh *share, hdr http.Header) error {
	br := b.Bridge()
	sess, err := br.Initialize(ctx)
	if err != nil {
		return err
	}
	defer br.Delete(ctx, sess)
	hctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	headers := time.AfterFunc(b.Timeout(), func() { cancel(wire.ErrCallTimeout) })
	resp, err := br.Do(hctx, sess, http.MethodGet, nil, hdr, "")
	headers.Stop()
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusMethodNotAllowed {
		return errLegacySkip
	}
	if _, isSSE := wire.MediaType(resp.Header.Get("Content-Type")); !isSSE || resp.StatusCode/100 != 2 {
		return wire.StatusError(b.Name(), resp.StatusCode, "the GET stream was not an event stream")
	}
	for _, uri := range sh.ResourceSubscriptions {
		params := jsonrpc.AppendString([]byte(`{"uri":`), uri)
		sctx, scancel := context.WithTimeoutCause(ctx, b.Timeout(), wire.ErrCallTimeout)
		m, _, err := br.Request(sctx, sess, era.MethodSubscribe, append(params, '}'), hdr)
		scancel()
		if err != nil {
			return err
		}
		if m.Error != nil {
			// It answered: the backend's error, not a bad response (see listenAnswer).
			return fmt.Errorf("%w: %s: resources/subscribe answered error %d", backend.ErrAnsweredWithError, b.Name(), m.Error.Code)
		}
	}
	f.start()
	// The stream's buffers are charged as a 2026-07-28 backend's are (feed.relay).
	x := br.Events(sess, resp, f.streamBudget())
	defer x.Free()
	return f.legacyRelay(hctx, b, x, sh)
}

// legacyRelay forwards the requested notifications of a legacy GET stream until it ends. The
// stream carries everything the session hears, and the share asked for some of it: the rest is
// not published (each subscriber still filters by its own subscriptions and policy).
func (f *feed) legacyRelay(ctx context.Context, b *backend.Backend, x *legacy.RoundTrip, sh *share) error {
	src := f.spec.src
	flt := newListenFilter(sh, src.readURI(b.Name()))
	for {
		data, err := x.Event()
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return backend.ReadErr(ctx, b, f.streamBudget(), err) // the budget's end is not the backend's failure
		}
		m, err := jsonrpc.DecodeMessage(data, wire.JSONLimits(b.MaxBytes()))
		switch {
		case err != nil:
			return fmt.Errorf("%w: %s: listen event is not a JSON-RPC message", wire.ErrBadResponse, b.Name())
		case m.IsResponse():
			continue
		case m.ID != nil:
			if err := x.Answer(ctx, m); err != nil {
				return err
			}
			continue
		}
		if ev, ok := eventOf(src.Names, b.Name(), m); ok {
			if _, wanted := flt.covers(ev); wanted {
				f.publish(ev)
			}
		}
	}
}
