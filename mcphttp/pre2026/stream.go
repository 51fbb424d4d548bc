package pre2026

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"

	"github.com/mcp-gateway/gateway/internal/era"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/outcome"
	"github.com/mcp-gateway/gateway/mcphttp"
)

// The GET stream of a pre-2026 client (docs/protocol.md §9.2): with a valid session and Accept
// text/event-stream, an SSE stream of the tools, prompts and resources list_changed
// notifications and the resources/updated of the session's resource subscriptions
// (subscribe.go), backed by the same shared backend listens as subscriptions/listen. Only
// notifications go on it, never the gateway's requests (those go on the POST they belong to), so
// no replica needs to find the stream of a session. Once its listen has started, a stream writes
// one event with an id and no data (the 2025-11-25 transport's priming event), an id of its own,
// random: a client that counts a stream end without a new event id as a reconnection that made
// no progress (the go-sdk gives up the whole session after five) sees each stream that was served
// as progress, however many times rollouts, drains and token expiries end it. Last-Event-ID is
// ignored, never refused: a new stream is a fresh one, which is allowed since nothing is
// replayed. A stream that ends before its listen starts carries no id, so a client whose stream
// the gateway cannot serve still gives up.

// notifResourcesUpdated is the notification of a subscribed resource's change.
const notifResourcesUpdated = "notifications/resources/updated"

// listenID is the id of the internal listen request of a GET stream, which has none.
var listenID = json.RawMessage(`"legacy-get"`)

// acceptsSSE reports whether Accept lists text/event-stream (or a wildcard covering it).
func acceptsSSE(values []string) bool { return mcphttp.AcceptsEventStream(values) }

// ServeGet serves a pre-2026 client's GET stream: the session opened like any pre-2026 request's
// (authenticated and admitted first; 404 when it does not open), then an internal
// subscriptions/listen whose notifications reach the client without the listen's
// acknowledgement and subscription ids.
func (e *Edge) ServeGet(in *mcphttp.Incoming) error {
	in.SetMessage(&jsonrpc.Request{ID: listenID, Method: "subscriptions/listen"})
	q := &clientReq{e: e, in: in, c: in.Client(), msg: in.Message(), p: &jsonrpc.Params{}}
	q.label()
	if err := in.CheckOrigin(); err != nil {
		return err
	}
	if err := in.Authenticate(); err != nil {
		return err
	}
	if err := in.Admit(); err != nil {
		return err
	}
	sess, err := q.openSession(classSession)
	if err != nil || sess == nil {
		return err
	}
	q.sess, q.version = sess, sess.Version
	q.label()
	// One of the caller's listens for the whole stream, however often it starts again.
	if err := in.HoldListen(); err != nil {
		return err
	}
	// The stream starts at once: a client waits for the response headers of its GET.
	if err := q.c.Comment(); err != nil {
		return err
	}
	// The stream ends with its session, as a round waiting for the client's answers does: from
	// then on every request of the session is refused (404), and a stream left open would go on
	// relaying to a session the gateway no longer knows, holding one of its caller's listens.
	// Its client opens the stream again, is refused, and initializes again.
	ctx, cancel := context.WithTimeout(in.Context(), sess.Expires.Sub(e.now()))
	defer cancel()
	var held heldSet // the set the stream listens to, from one start of its listen to the next
	id := streamEventID()
	for restart := true; restart && ctx.Err() == nil; {
		restart, err = q.listenOnce(ctx, &held, &id)
	}
	switch {
	case in.Context().Err() != nil:
		q.c.SetOutcome(outcome.Canceled)
	case ctx.Err() != nil:
		q.c.SetOutcome(outcome.OK) // the session's end
	case err != nil:
		q.c.SetOutcome(mcphttp.MapError(err).Outcome)
	}
	return nil
}

// listenOnce runs the GET stream's inner listen with the session's resource subscriptions as
// they are now, until outer ends (the client went away, or the session expired), the listen
// ends, or the subscriptions change (restart true: on this replica, or on another one, which
// says so with a notice, or found by a recheck of the set, sessionState.recheck), at most once
// per restartInterval (sessionState.paced). An update a backend sends while the listen is
// started again is not relayed: nothing is replayed. held is the set the stream listened to
// before, and the one it listens to now once this returns: a store that forgot it
// (heldSet.forgot) gets it back, merged with what the session changed since (restore), and a
// store that cannot be read leaves the stream with it.
// id is the stream's event id, written (and emptied) once the first listen has started.
func (q *clientReq) listenOnce(outer context.Context, held *heldSet, id *string) (restart bool, err error) {
	st := q.e.state
	ctx, changed := context.WithCancel(outer)
	defer changed()
	// Watched before the set is read: a change made in between restarts the listen.
	again := st.paced(st.now(), changed)
	defer st.watch(q.sess.Key(), again)()
	caller := stateCaller(q.sess, q.in)
	now, err := st.readHeld(ctx, q.sess, caller)
	if err == nil && held.forgot(now) {
		now, err = st.restore(ctx, q.sess, caller, *held)
	}
	switch {
	case err == nil:
		*held = now
	case errors.Is(err, errUnopened) && !held.found:
		*held = heldSet{}
	default:
		// The list_changed notifications do not need the store: the stream goes on with the
		// set it had (none at its first start) until a recheck reads the store's.
		q.e.log.Warn("legacy session subscriptions not readable; the GET stream keeps the set it had until they are",
			"request_id", q.in.RequestID(), "subscriptions", len(held.uris), "error", err)
	}
	// A change whose notice this replica missed restarts the listen within recheckInterval.
	defer st.recheck(ctx, q.sess, caller, *held, again)()
	inner, err := q.inner(ctx, listenParamsFor(held.uris), nil, "")
	if err != nil {
		return false, err
	}
	if *id != "" {
		if err := q.c.EventID(*id, q.e.getRetry); err != nil {
			return false, err
		}
		*id = ""
	}
	err = q.in.Run(inner, &listenSink{c: q.c, as: held.as})
	if outer.Err() == nil && ctx.Err() != nil && q.c.Failed() == nil {
		return true, nil
	}
	return false, err
}

// streamEventID is a GET stream's event id: 128 random bits, unique per session as the
// 2025-11-25 transport asks of event ids, and never the same for two streams of one session.
func streamEventID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

// listenSink is the pipeline's Sink for a GET stream's inner listen: its notifications go to
// the client as a 2025 client gets them (listenNotification); what ends the listen (its result,
// an error) is not written, the stream simply ends.
type listenSink struct {
	c *mcphttp.ClientSink
	// as maps the URI of a subscription (namespaced, in normal form) the client wrote
	// otherwise to how it wrote it (sessionEntry.As): its updates name it so.
	as map[string]string
}

var _ mcphttp.Sink = (*listenSink)(nil)

// Event relays a notification of the listen.
func (s *listenSink) Event(msg []byte, _ *int) error {
	m, err := jsonrpc.DecodeMessage(msg, relayLimits)
	if err != nil || m.IsResponse() || m.ID != nil || m.Method == era.NotifMessage {
		// A listen carries notifications only, never log messages.
		return nil
	}
	if msg = listenNotification(m, msg, s.as); msg == nil {
		return nil
	}
	return s.c.Event(msg, nil)
}

// FlushHeld has nothing to send: every event is flushed.
func (s *listenSink) FlushHeld(*int) {}

// KeepAlive arms or pauses the stream's keep-alive comments.
func (s *listenSink) KeepAlive(on bool) { s.c.KeepAlive(on) }

// Result ends the listen: nothing is written.
func (s *listenSink) Result(_ []byte, _ int, oc string, _ *int) error {
	s.c.SetOutcome(oc)
	return nil
}

// Message ends the listen with a backend's error: nothing is written.
func (s *listenSink) Message(_ []byte, _ int, oc string, _ *int) error {
	s.c.SetOutcome(oc)
	return nil
}

// Error ends the listen with the gateway's error: nothing is written.
func (s *listenSink) Error(e *mcphttp.Error) error {
	s.c.SetOutcome(e.Outcome)
	return nil
}

// listenNotification is a notification of the internal listen as a legacy client gets it:
// the acknowledgement dropped (nil), a list_changed without the subscription id in its _meta, a
// resources/updated of a subscription the client wrote otherwise than its normal form under
// the URI as the client wrote it (as).
func listenNotification(m *jsonrpc.Message, msg []byte, as map[string]string) []byte {
	if m.Method == "notifications/subscriptions/acknowledged" {
		return nil
	}
	if len(m.Params) == 0 || m.Params[0] != '{' {
		return msg
	}
	params, err := era.FilterObject(nil, m.Params, func(k []byte, v []byte) ([]byte, bool) {
		// Most sessions wrote every subscription in its normal form: no URI to decode then.
		if len(as) > 0 && string(k) == "uri" && m.Method == notifResourcesUpdated {
			var uri string
			if json.Unmarshal(v, &uri) == nil && as[uri] != "" {
				return jsonrpc.AppendString(nil, as[uri]), true
			}
		}
		if string(k) != "_meta" || len(v) == 0 || v[0] != '{' {
			return v, true
		}
		meta, err := era.FilterObject(nil, v, func(mk []byte, mv []byte) ([]byte, bool) {
			return mv, string(mk) != jsonrpc.MetaSubscriptionID
		})
		if err != nil {
			return v, true
		}
		return meta, string(meta) != "{}"
	})
	if err != nil {
		return msg
	}
	return jsonrpc.AppendNotification(nil, m.Method, params)
}
