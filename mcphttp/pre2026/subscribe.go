package pre2026

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/mcp-gateway/gateway/internal/era"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/mcphttp"
	"github.com/mcp-gateway/gateway/upstreams"
)

// resources/subscribe and resources/unsubscribe for pre-2026 clients (docs/protocol.md §9.6).
// 2026-07-28 has no such methods: a client lists the resources it follows in its
// subscriptions/listen. The edge keeps a legacy session's set in the shared store
// (state.go); the session's GET stream, on whichever replica holds it, runs its inner
// listen with that set and starts it again when the set changes, so the client gets
// notifications/resources/updated for what it subscribed to, with the URIs as it knows them.

// subscribe serves resources/subscribe and resources/unsubscribe.
func (q *clientReq) subscribe() error {
	add := q.msg.Method == era.MethodSubscribe
	if !q.p.HasURI || q.p.URI == "" {
		return q.rpcError(jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: uri is required"))
	}
	if !sessionBound(q.sess) {
		// Updates go on the session's GET stream, which a session-less client cannot open.
		return q.rpcError(jsonrpc.NewError(jsonrpc.CodeInvalidRequest,
			"Invalid Request: "+q.msg.Method+" needs a session (Mcp-Session-Id)"))
	}
	// A subscription is authorised exactly as resources/read of the same URI is (routing, the
	// endpoint's tool set, the caller's policy, pins), so a caller cannot learn when a resource
	// it may not read changes; an unsubscription needs only the form.
	uri, err := q.in.Authorize(upstreams.KindResource, q.p.URI, add)
	if err != nil {
		if !add {
			// Nothing can have been recorded under a URI that does not resolve.
			return q.result([]byte(`{}`))
		}
		return q.refuseAsRead(err)
	}
	if err := q.e.state.updateSubscriptions(q.in.Context(), q.sess, q.in.Subject(), uri, add); err != nil {
		if errors.Is(err, errTooManySubscriptions) || errors.Is(err, errStateBound) {
			return q.rpcError(jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: "+err.Error()))
		}
		q.e.log.Warn("legacy session subscriptions not recorded", "request_id", q.in.RequestID(), "error", err)
		return q.rpcError(jsonrpc.NewError(jsonrpc.CodeInternalError, "Internal error: the subscription could not be recorded; try again"))
	}
	return q.result([]byte(`{}`))
}

// refuseAsRead answers a refused subscription with the bytes resources/read of the same URI
// gets: in-band (-32002 for an unknown or hidden resource) unless its status is one a pre-2026
// client acts on (a step-up 403).
func (q *clientReq) refuseAsRead(err error) error {
	e := mcphttp.MapError(err)
	if e.RPC == nil || keepStatus(e.Status, e.RPC.Code) {
		return err
	}
	return q.c.JSON(http.StatusOK, jsonrpc.AppendError(nil, q.id(), era.LegacyClientError("resources/read", e.RPC)), e.Outcome)
}

// listenNotifications is the notifications object of a GET stream's inner listen.
type listenNotifications struct {
	Tools     bool     `json:"toolsListChanged"`
	Prompts   bool     `json:"promptsListChanged"`
	Resources bool     `json:"resourcesListChanged"`
	URIs      []string `json:"resourceSubscriptions,omitempty"`
}

// listenParamsFor is the params of a GET stream's inner listen: every list_changed the
// initialize result advertises, and the session's resource subscriptions.
func listenParamsFor(uris []string) json.RawMessage {
	b, _ := json.Marshal(struct {
		Notifications listenNotifications `json:"notifications"`
	}{listenNotifications{Tools: true, Prompts: true, Resources: true, URIs: uris}})
	return b
}
