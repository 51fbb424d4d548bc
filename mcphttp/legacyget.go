package mcphttp

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/mcp-gateway/gateway/internal/era"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/legacysession"
	"github.com/mcp-gateway/gateway/internal/mcpheader"
)

// The GET stream of a pre-2026 client (docs/protocol.md §9.2): with a valid session and Accept
// text/event-stream, an SSE stream of the tools, prompts and resources list_changed
// notifications and the resources/updated of the session's resource subscriptions
// (legacysubscribe.go), backed by the same shared backend listens as subscriptions/listen. Only
// notifications go on it, never the gateway's requests (those go on the POST they belong to), so
// no replica needs to find the stream of a session. No event id is written and Last-Event-ID is
// ignored: a new stream is a fresh one, which is allowed since nothing is replayed.

// legacyListenID is the id of the internal listen request of a GET stream, which has none.
var legacyListenID = json.RawMessage(`"legacy-get"`)

// handleLegacyGet serves GET on the MCP endpoint: a legacy client's list_changed stream, or 405
// as before for any other GET (no session id, or no event stream accepted).
func (s *Server) handleLegacyGet(c echo.Context) error {
	r := c.Request()
	if len(r.Header.Values(mcpheader.SessionID)) == 0 || !acceptsSSE(r.Header.Values("Accept")) {
		return methodNotAllowed(c)
	}
	return s.serve(c, (*request).legacyGet)
}

// acceptsSSE reports whether Accept lists text/event-stream (or a wildcard covering it).
func acceptsSSE(values []string) bool {
	return acceptsJSONAndSSE(append(values[:len(values):len(values)], "application/json"))
}

// legacyGet opens the session like any legacy request (authenticated first; 404 when it does
// not open), then runs an internal subscriptions/listen whose notifications reach the client
// without the listen's acknowledgement and subscription ids.
func (x *request) legacyGet() error {
	x.legacy = &legacyState{}
	x.in.req = &jsonrpc.Request{ID: legacyListenID, Method: "subscriptions/listen"}
	x.in.params = &jsonrpc.Params{}
	if err := x.s.origins.check(x.r); err != nil {
		return err
	}
	if err := x.authenticate(); err != nil {
		return err
	}
	sess, err := x.legacySession(classSession, x.legacyPrincipal())
	if err != nil || sess == nil {
		return err
	}
	x.legacy.sess, x.legacy.version = sess, sess.Version
	// The stream starts at once: a client waits for the response headers of its GET.
	if err := x.emitComment(); err != nil {
		return err
	}
	for restart := true; restart && x.ctx.Err() == nil; {
		restart, err = x.legacyListenOnce(sess)
	}
	if x.ctx.Err() != nil {
		x.out.outcome = outcomeCanceled
	} else if err != nil {
		x.out.outcome = mapError(err).Outcome
	}
	return nil
}

// legacyListenOnce runs the GET stream's inner listen with the session's resource subscriptions
// as they are now, until the client goes away, the listen ends, or the subscriptions change
// (restart true: on this replica, or on another one, which says so with a notice). An update a
// backend sends while the listen is started again is not relayed: nothing is replayed.
func (x *request) legacyListenOnce(sess *legacysession.Session) (restart bool, err error) {
	st := x.s.legacy.state
	ctx, changed := context.WithCancel(x.ctx)
	defer changed()
	// Watched before the set is read: a change made in between restarts the listen.
	defer st.watch(sess.Key(), changed)()
	uris, err := st.subscriptions(ctx, sess)
	if err != nil {
		// The list_changed notifications do not need the store: the stream goes on without
		// the resource subscriptions until it is opened again.
		x.s.log.Warn("legacy session subscriptions not readable; the GET stream relays no resources/updated",
			"request_id", x.requestID, "error", err)
	}
	r, err := x.legacyInnerRequest(ctx, sess, legacyListenParamsFor(uris))
	if err != nil {
		return false, err
	}
	c := &legacyCodec{x: x, h: http.Header{}, listen: true}
	y := &request{s: x.s, w: c, r: r, ctx: ctx, start: x.start,
		requestID: x.requestID, requestIDValue: x.requestIDValue, set: x.set}
	y.caller.principal, y.caller.token = x.caller.principal, x.caller.token
	err = y.run()
	y.stopKeepAlive()
	y.in.bodyBuf.Release()
	if y.out.streamClosed != nil {
		y.out.streamClosed()
	}
	x.out.outcome = y.out.outcome
	if x.ctx.Err() == nil && ctx.Err() != nil && x.out.writeErr == nil {
		return true, nil
	}
	return false, err
}

// listenNotification is a notification of the internal listen as a legacy client gets it:
// the acknowledgement dropped (nil), a list_changed without the subscription id in its _meta.
func listenNotification(m *jsonrpc.Message, msg []byte) []byte {
	if m.Method == "notifications/subscriptions/acknowledged" {
		return nil
	}
	if len(m.Params) == 0 || m.Params[0] != '{' {
		return msg
	}
	params, err := era.FilterObject(nil, m.Params, func(k string, v []byte) ([]byte, bool) {
		if k != "_meta" || len(v) == 0 || v[0] != '{' {
			return v, true
		}
		meta, err := era.FilterObject(nil, v, func(mk string, mv []byte) ([]byte, bool) {
			return mv, mk != jsonrpc.MetaSubscriptionID
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
