package pre2026

import (
	"bytes"
	"net/http"

	"github.com/mcp-gateway/gateway/internal/era"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/outcome"
	"github.com/mcp-gateway/gateway/mcphttp"
	"github.com/mcp-gateway/gateway/upstreams"
)

// relayLimits bound the reading of a message the pipeline relays: a backend's message has been
// checked once already (by upstreams), so only the depth is bounded, not the size of a string.
var relayLimits = jsonrpc.Limits{MaxDepth: 1 << 10, MaxTokenBytes: 1 << 30}

// roundSink is the pipeline's Sink for one round of a translated request. It writes to the
// client's response, through its ClientSink, what a 2025 client may see and in the shape it
// knows: the notifications before the last message at once (notifications/message only at or
// above the session's log level), the last message reshaped for the negotiated version, written
// once from where the pipeline holds it. An input_required result is never written: the edge
// keeps it (asked) to ask the client for the input and run the next round. No SSE id: line is
// ever written, so no client tries to resume a stream that cannot be resumed statelessly.
type roundSink struct {
	q *clientReq
	// asked is the input_required result of this round (a copy), nil when the round wrote its
	// last message. askedBytes of the budget of response bytes in flight are charged for it and
	// the requests built from it until they are written (letGo).
	asked      []byte
	askedBytes int
	// done is set once the last message is written.
	done bool
}

var _ mcphttp.Sink = (*roundSink)(nil)

// Event relays a notification of the call's stream.
func (s *roundSink) Event(msg []byte, held *int) error {
	m, err := jsonrpc.DecodeMessage(msg, relayLimits)
	switch {
	case err != nil, m.IsResponse(), m.ID != nil:
		// The pipeline relays valid notifications only; server-to-client requests never come
		// this way (they are MRTR input requests, or a backend request, backendrequests.go).
		return nil
	case m.Method == era.NotifMessage && !logPasses(m.Params, s.q.logLevel):
		return nil
	}
	return s.q.c.Event(msg, held)
}

// FlushHeld sends the held notifications.
func (s *roundSink) FlushHeld(held *int) { s.q.c.FlushHeld(held) }

// KeepAlive arms or pauses the client's keep-alive comments.
func (s *roundSink) KeepAlive(on bool) { s.q.c.KeepAlive(on) }

// Result writes the call's result in the 2025 shape (no resultType, ttlMs or cacheScope;
// 2025-06-18's object-only structured content), or keeps an input_required one.
func (s *roundSink) Result(result []byte, _ int, oc string, held *int) error {
	q := s.q
	q.c.FlushHeld(held)
	if oc == outcome.InputRequired {
		// The copy, and the requests to the client built from it, are held until written
		// (ask), by a client that may read slowly: they count against the budget of response
		// bytes in flight, as the input_required result a 2026-07-28 client is written does.
		n := 2 * len(result)
		if err := q.in.TakeResultBytes(n); err != nil {
			return err
		}
		s.asked, s.askedBytes = bytes.Clone(result), n
		return nil
	}
	info := q.in.ServerInfo()
	// The reshaped copy is held beside the result until written: it counts against the same
	// budget of response bytes in flight, so the edge holds no more than the budget says.
	size := len(result) + len(info) + len(q.msg.ID) + 128
	if err := q.in.TakeResultBytes(size); err != nil {
		return err
	}
	defer q.in.ReturnResultBytes(size)
	head := jsonrpc.AppendResultHead(make([]byte, 0, size), q.msg.ID)
	res, err := era.AppendLegacyClientResult(head, q.msg.Method, q.version, result, info)
	if err != nil {
		return upstreams.ErrBadResponse
	}
	s.done = true
	return q.c.JSON(http.StatusOK, append(res, '}'), oc)
}

// letGo gives back what asked is charged for; a second call gives back nothing.
func (s *roundSink) letGo() {
	if s.askedBytes > 0 {
		s.q.in.ReturnResultBytes(s.askedBytes)
		s.askedBytes = 0
	}
}

// Message writes a backend's JSON-RPC error in-band, in the 2025 shape.
func (s *roundSink) Message(msg []byte, status int, oc string, held *int) error {
	s.q.c.FlushHeld(held)
	m, err := jsonrpc.DecodeMessage(msg, relayLimits)
	if err != nil || m.Error == nil {
		return upstreams.ErrBadResponse
	}
	return s.rpcError(m.Error, status, nil, oc)
}

// Error writes the gateway's own error: in-band with 200 unless its status is one a 2025
// client acts on (docs/protocol.md §9.4); a capability the client did not declare is the failed
// call that names it.
func (s *roundSink) Error(e *mcphttp.Error) error {
	e = s.q.in.Shaped(e)
	if e.RPC == nil {
		s.done = true
		return s.q.c.Error(e)
	}
	return s.rpcError(e.Legacy(), e.Status, e.Header, e.Outcome)
}

func (s *roundSink) rpcError(e *jsonrpc.Error, status int, hdr http.Header, oc string) error {
	q := s.q
	s.done = true
	if e.Code == jsonrpc.CodeMissingRequiredClientCapability {
		// The gateway's confirmation or a backend needs what the client did not declare.
		return q.noCapability(requiredCapabilities(e.Data)...)
	}
	if !keepStatus(status, e.Code) {
		status, hdr = http.StatusOK, nil
	}
	for _, k := range []string{"Www-Authenticate", "Retry-After", "Connection"} {
		if v := hdr[k]; v != nil {
			q.c.Header()[k] = v
		}
	}
	return q.c.JSON(status, jsonrpc.AppendError(nil, q.msg.ID, era.LegacyClientError(q.msg.Method, e)), oc)
}
