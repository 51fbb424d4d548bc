package mcphttp

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/upstreams"
)

// listen serves subscriptions/listen
// (https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions): a
// long-lived SSE stream on which the registry first acknowledges, then forwards the backends'
// list_changed and resources/updated notifications tagged with this request's id, each only if
// this client subscribed to it and, for a resource, the caller's policy lets it read it.
// Closing the stream ends the subscription; a client that falls too far behind has it ended
// with upstreams.ListenOverflow (upstreams.ListenOverBudget when its caller's listens hold their
// share of server.maxResultBytesInFlight). A caller holds at most server.maxListensPerCaller listens on a
// replica (a pre-2026 client's GET streams run one each), each with params of at most
// maxListenParamsBytes, kept as long as it lasts. Identical listens share their backend streams
// (upstreams.Listens): an idle listen then costs the gateway little more than the client's
// connection.
func (x *request) listen() error {
	if len(x.in.req.Params) > maxListenParamsBytes {
		return invalidParams("Invalid params: a subscriptions/listen's params are limited to " +
			strconv.Itoa(maxListenParamsBytes) + " bytes")
	}
	if x.admitted.listen == "" {
		took, ok := x.s.inflight.listens.take(x.bound())
		if !ok {
			return x.s.drafts.tooManyListens
		}
		if took {
			defer x.s.inflight.listens.give(x.bound())
		}
	}
	if x.s.rails != nil {
		if err := x.s.rails.checkListen(x); err != nil {
			return err
		}
	}
	x.out.KeepAlive(true)
	// The params outlive the request's body for as long as the listen lasts: a copy of these
	// few hundred bytes lets the body's buffer go (shed).
	params, hdr := bytes.Clone(x.in.req.Params), x.passHeaders()
	visible, _ := x.visibility() // subscriptions and every resources/updated follow the caller's policy
	reaches := reachesFor(x.set, x.s.auth, x.caller.principal)
	if x.admitted.listen != "" {
		// A pre-2026 GET stream's: it may outlive its configuration, and then follows the
		// policy of the one that replaced it (StreamPolicy).
		visible, reaches = followed(x.ctx, visible), followedReaches(x.ctx, reaches)
	}
	caller := upstreams.ListenCaller{Key: x.bound(), Visible: visible, Reaches: reaches, Dropped: x.s.metrics.ListenDropped,
		Spell: resourceSpeller(x), Subject: x.listSubjectToken(), SubjectKey: x.caller.keyOf(x.listSubjectToken()),
		// A pre-2026 GET stream with nothing to hear stays open rather than being opened again
		// and again (mcphttp/pre2026, ServeGet).
		HoldIdle: x.admitted.listen != ""}
	x.shed()
	ctx, cancel := untilTokenExpires(x)
	defer cancel()
	// EndListens ends a client's own listen; a pre-2026 GET stream's (admitted by the edge)
	// lasts across a reload and follows the new policy, and ends only with EndStreams (a
	// drain), when its client can open it again on another replica.
	var end context.CancelFunc
	ctx, end = context.WithCancel(ctx)
	defer end()
	defer context.AfterFunc(x.s.streamsOpen, end)()
	if x.admitted.listen == "" {
		defer context.AfterFunc(x.s.listensOpen, end)()
	}
	err := x.s.listens.ListenFor(ctx, x.in.req.ID, params, hdr, caller, func(msg []byte) error {
		// The registry hands over the acknowledgement first and, when its backend streams
		// have ended (every one, or one that had started), the listen's result last; the
		// stream starts with the first message, so an invalid request is still answered with
		// a plain JSON error.
		return x.out.Event(msg, nil)
	})
	x.out.KeepAlive(false)
	switch {
	case CutBy(x.ctx) != nil:
		// The gateway ended the listen: it is shutting down, or a reload replaced the
		// configuration the listen started on. The graceful end, not the cut error a call gets:
		// a listen runs nothing at a backend that may or may not have happened, and the client
		// listens again, on another replica or the new configuration.
		if err := x.out.Event(listenEnd(x.in.req.ID), nil); err != nil {
			return err
		}
	case x.ctx.Err() != nil:
		x.client.SetOutcome(outcomeCanceled)
		return nil
	case err != nil:
		return err
	case ctx.Err() != nil:
		// The caller's token expired, or a key left the set that verified it, or the server's
		// listens were ended (EndListens): the graceful end a server SHOULD send, after which
		// the client listens again, with the token it has now or where it is sent now.
		if err := x.out.Event(listenEnd(x.in.req.ID), nil); err != nil {
			return err
		}
	}
	x.client.SetOutcome(outcomeOK)
	return nil
}

// untilTokenExpires is the request's context, ended when the caller's token stops being
// accepted (authz.Service.UntilRefused: it expires, or the key that verified it leaves its
// issuer's key set): a listen may last for hours, far past the token that opened it, and must
// not go on serving a caller the gateway now refuses.
func untilTokenExpires(x *request) (context.Context, context.CancelFunc) {
	if p := x.caller.principal; p != nil && x.s.auth != nil {
		return x.s.auth.UntilRefused(x.ctx, p)
	}
	return x.ctx, func() {}
}

// listenEnd is the result that ends a listen gracefully
// (https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions).
func listenEnd(id json.RawMessage) []byte {
	r := append([]byte(`{"resultType":"complete","_meta":{"`+jsonrpc.MetaSubscriptionID+`":`), id...)
	return jsonrpc.AppendResult(nil, id, append(r, "}}"...))
}

// shed lets go of what the pipeline decoded once nothing but the request's id and method will be
// read again, so an idle stream does not keep its request body and decoded params alive for
// hours: 2,000 idle listens hold about a megabyte less.
func (x *request) shed() {
	x.in.req = &jsonrpc.Request{ID: bytes.Clone(x.in.req.ID), Method: x.in.req.Method}
	x.in.body, x.in.params, x.in.meta = nil, nil, nil
	x.in.bodyBuf.Release() // a listen's buffer is detached (run): this only drops it
}

// reachesFor is the ListenCaller.Reaches of a listen on ts's endpoint (nil: the gateway's own,
// unnarrowed) by p: a backend the set covers and p's policy gives anything of
// (authz.Policy.Reaches), as for server instructions; nil when neither narrows. A listen hears
// no list_changed of any other backend. A function, not a method: request's methods are its
// stages' API, kept few.
func reachesFor(ts *toolset, auth *authz.Service, p *authz.Principal) func(string) bool {
	if ts == nil && auth == nil {
		return nil
	}
	return func(upstream string) bool {
		return (ts == nil || ts.coversBackend(upstream)) && (auth == nil || auth.Reaches(p, upstream))
	}
}
