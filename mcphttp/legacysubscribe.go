package mcphttp

import (
	"encoding/json"
	"errors"

	"github.com/mcp-gateway/gateway/internal/era"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/legacysession"
	"github.com/mcp-gateway/gateway/upstreams"
)

// resources/subscribe and resources/unsubscribe for pre-2026 clients (docs/protocol.md §9.6).
// 2026-07-28 has no such methods: a client lists the resources it follows in its
// subscriptions/listen. The edge keeps a legacy session's set in the shared store
// (legacystate.go); the session's GET stream, on whichever replica holds it, runs its inner
// listen with that set and starts it again when the set changes, so the client gets
// notifications/resources/updated for what it subscribed to, with the URIs as it knows them.

// legacySubscribe serves resources/subscribe and resources/unsubscribe.
func (x *request) legacySubscribe(sess *legacysession.Session) error {
	add := x.in.req.Method == era.MethodSubscribe
	p := x.in.params
	if p == nil || !p.HasURI || p.URI == "" {
		x.writeLegacyError(jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: uri is required"))
		return nil
	}
	if !sessionBound(sess) {
		// Updates go on the session's GET stream, which a session-less client cannot open.
		x.writeLegacyError(jsonrpc.NewError(jsonrpc.CodeInvalidRequest,
			"Invalid Request: "+x.in.req.Method+" needs a session (Mcp-Session-Id)"))
		return nil
	}
	uri, err := x.subscribableURI(p.URI, add)
	if err != nil {
		if !add {
			// Nothing can have been recorded under a URI that does not resolve.
			x.writeLegacyResult([]byte(`{}`))
			return nil
		}
		return x.legacyRefuseAsRead(err)
	}
	if err := x.s.legacy.state.updateSubscriptions(x.ctx, sess, uri, add); err != nil {
		if errors.Is(err, errTooManySubscriptions) {
			x.writeLegacyError(jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: "+err.Error()))
			return nil
		}
		x.s.log.Warn("legacy session subscriptions not recorded", "request_id", x.requestID, "error", err)
		x.writeLegacyError(jsonrpc.NewError(jsonrpc.CodeInternalError, "Internal error: the subscription could not be recorded; try again"))
		return nil
	}
	x.writeLegacyResult([]byte(`{}`))
	return nil
}

// subscribableURI is the namespaced normal form of uri. A subscription is authorised exactly as
// resources/read of the same URI is (stages 6 and 7: namespacing, the endpoint's tool set and
// the caller's policy), so a caller cannot learn when a resource it may not read changes; an
// unsubscription needs only the form.
func (x *request) subscribableURI(uri string, authorize bool) (string, error) {
	target, err := x.resolve(upstreams.KindResource, uri)
	if err != nil {
		return "", err
	}
	if authorize {
		if err := x.authorize(upstreams.KindResource, target); err != nil {
			return "", err
		}
	}
	return x.s.backends.Namespaced(upstreams.KindResource, target), nil
}

// legacyRefuseAsRead answers a refused subscription with the bytes resources/read of the same
// URI gets: in-band (-32002 for an unknown or hidden resource) unless its status is one a
// legacy client acts on (a step-up 403).
func (x *request) legacyRefuseAsRead(err error) error {
	e := mapError(err)
	if e.RPC == nil || keepLegacyStatus(e.Status, e.RPC.Code) {
		return err
	}
	x.out.outcome = e.Outcome
	_ = x.writeJSON(200, jsonrpc.AppendError(nil, x.in.req.ID, era.LegacyClientError("resources/read", e.RPC)))
	return nil
}

// legacyListenNotifications is the notifications object of a GET stream's inner listen.
type legacyListenNotifications struct {
	Tools     bool     `json:"toolsListChanged"`
	Prompts   bool     `json:"promptsListChanged"`
	Resources bool     `json:"resourcesListChanged"`
	URIs      []string `json:"resourceSubscriptions,omitempty"`
}

// legacyListenParamsFor is the params of a GET stream's inner listen: every list_changed the
// initialize result advertises, and the session's resource subscriptions.
func legacyListenParamsFor(uris []string) json.RawMessage {
	b, _ := json.Marshal(struct {
		Notifications legacyListenNotifications `json:"notifications"`
	}{legacyListenNotifications{Tools: true, Prompts: true, Resources: true, URIs: uris}})
	return b
}
