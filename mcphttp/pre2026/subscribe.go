package pre2026

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/mcp-gateway/gateway/internal/era"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/outcome"
	"github.com/mcp-gateway/gateway/mcphttp"
	"github.com/mcp-gateway/gateway/upstreams"
)

// resources/subscribe and resources/unsubscribe for pre-2026 clients (docs/protocol.md §9.6).
// 2026-07-28 has no such methods: a client lists the resources it follows in its
// subscriptions/listen. The edge keeps a legacy session's set in the shared store
// (state.go); the session's GET stream, on whichever replica holds it, runs its inner
// listen with that set and starts it again when the set changes (at most once a second,
// sessionState.paced), so the client gets
// notifications/resources/updated for what it subscribed to, with the URIs as it wrote them
// (listenSink).

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
	// Only a resource a read finds is recorded: the backend says whether it exists. The read
	// runs once the subscription is known to be new and within the caller's pace, so neither a
	// repeat nor a subscribe answered 429 costs the backend a read.
	var readErr error
	var verify func() error
	if add {
		verify = func() error { readErr = q.readable(); return readErr }
	}
	err = q.e.state.updateSubscriptions(q.in.Context(), q.sess, stateCaller(q.sess, q.in), uri, q.p.URI, add, verify)
	if readErr != nil {
		return q.refuseAsRead(readErr)
	}
	if err != nil {
		if tooFast, ok := errors.AsType[*tooFastError](err); ok {
			return q.in.Limited(tooFast.retryAfter, tooFastMessage)
		}
		if errors.Is(err, errTooManySubscriptions) || errors.Is(err, errStateBound) {
			return q.rpcError(jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: "+err.Error()))
		}
		q.e.log.Warn("legacy session subscriptions not recorded", "request_id", q.in.RequestID(), "error", err)
		if errors.Is(err, errStateStore) {
			return stateUnavailable("the subscription could not be recorded")
		}
		return q.rpcError(jsonrpc.NewError(jsonrpc.CodeInternalError, "Internal error: the subscription could not be recorded; try again"))
	}
	return q.result([]byte(`{}`))
}

// readable runs resources/read of the subscription's URI through the pipeline, its result
// dropped: nil when the read succeeds, else the error the read would have been answered with
// (an unknown resource, a backend that fails). A read that needs the user's confirmation first
// cannot be verified, and refuses the subscription.
func (q *clientReq) readable() error {
	read := *q
	read.msg = &jsonrpc.Request{ID: q.msg.ID, Method: "resources/read", Params: q.msg.Params}
	inner, err := read.inner(q.in.Context(), q.msg.Params, nil, "")
	if err != nil {
		return err
	}
	probe := &probeSink{c: q.c}
	if err := q.in.Run(inner, probe); err != nil {
		return err
	}
	return probe.err
}

// probeSink is the Sink of a request run only for whether it succeeds: nothing of its answer is
// written, the answer's error is kept. While it waits for its backend, the client's response
// gets keep-alive comments (c), as it would for the request itself: a slow backend read must
// not leave a subscribe's response silent until a proxy cuts it.
type probeSink struct {
	c   *mcphttp.ClientSink
	err error
}

var _ mcphttp.Sink = (*probeSink)(nil)

func (p *probeSink) Event([]byte, *int) error { return nil }
func (p *probeSink) FlushHeld(*int)           {}

// KeepAlive arms or pauses the client's keep-alive comments.
func (p *probeSink) KeepAlive(on bool) { p.c.KeepAlive(on) }

// Result keeps a result that is not the resource (input_required) as an error.
func (p *probeSink) Result(_ []byte, _ int, oc string, _ *int) error {
	if oc != outcome.OK {
		p.err = jsonrpc.NewError(jsonrpc.CodeInternalError,
			"Internal error: this resource cannot be read without the user's confirmation, so it cannot be subscribed to")
	}
	return nil
}

// Message keeps a backend's error.
func (p *probeSink) Message(msg []byte, _ int, _ string, _ *int) error {
	m, err := jsonrpc.DecodeMessage(msg, relayLimits)
	if err != nil || m.Error == nil {
		p.err = upstreams.ErrBadResponse
		return nil
	}
	p.err = m.Error
	return nil
}

// Error keeps the gateway's error.
func (p *probeSink) Error(e *mcphttp.Error) error {
	p.err = e
	return nil
}

// refuseAsRead answers a refused subscription with the bytes resources/read of the same URI
// gets: in-band (-32002 for an unknown or hidden resource) unless its status is one a pre-2026
// client acts on (a step-up 403).
func (q *clientReq) refuseAsRead(err error) error {
	e := mcphttp.MapError(err)
	if e.RPC == nil || keepStatus(e.Status, e.RPC.Code) {
		return err
	}
	return q.c.JSON(http.StatusOK, jsonrpc.AppendError(nil, q.id(), era.LegacyClientError("resources/read", e.Legacy())), e.Outcome)
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
