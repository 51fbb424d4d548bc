package mcphttp

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-gateway/gateway/internal/era"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/legacysession"
	"github.com/mcp-gateway/gateway/upstreams"
)

// legacyAsker carries the gateway's requests to a legacy client and back (docs/protocol.md §9.5):
// the requests go on the client's POST stream, the answers may be POSTed to any replica. The
// edge needs exactly these four operations.
type legacyAsker interface {
	// ask writes one JSON-RPC request per entry through emit, waits for every answer and
	// returns the inputResponses object. It fails at once, writing nothing, for an entry whose
	// capability the session does not declare; when ctx ends it returns ctx's error.
	ask(ctx context.Context, sess *legacysession.Session, reqs []era.InputRequest, emit func(msg []byte) error) (json.RawMessage, error)
	// deliver hands a client's answer to the replica waiting for it; any answer nobody waits
	// for (forged, used, expired, another session's) is an error.
	deliver(ctx context.Context, sess *legacysession.Session, msg *jsonrpc.Message) error
	// track registers a running call, by the JSON-RPC id the client gave it, for
	// notifications/cancelled.
	track(sess *legacysession.Session, id json.RawMessage, cancel context.CancelFunc) (untrack func())
	// cancel cancels the call a client's notifications/cancelled names, on whichever replica
	// runs it.
	cancel(ctx context.Context, sess *legacysession.Session, id json.RawMessage)
}

// legacyAsk is one input round of the MRTR loop: the inputRequests of an input_required result
// (a backend's, or the gateway's own confirmation) become requests to the legacy client, whose
// answers become the next round's inputResponses; the sealed requestState goes with them and
// never reaches the client. done reports that the request has been answered (an entry the client
// cannot answer, a timeout).
func (x *request) legacyAsk(ctx context.Context, sess *legacysession.Session, result []byte) (responses json.RawMessage, state string, done bool, err error) {
	le := x.s.legacy
	var ir struct {
		InputRequests json.RawMessage `json:"inputRequests"`
		RequestState  string          `json:"requestState"`
	}
	if json.Unmarshal(result, &ir) != nil || len(ir.InputRequests) == 0 {
		return nil, "", false, upstreams.ErrBadResponse
	}
	reqs, err := era.InputRequests(sess.Version, ir.InputRequests)
	if err != nil || len(reqs) == 0 {
		return nil, "", false, upstreams.ErrBadResponse
	}
	// Nothing is asked, and nothing forwarded, when any entry needs what the client did not
	// declare at initialize.
	for _, q := range reqs {
		if !era.Declares(sess.Caps, q.Capability) {
			return nil, "", true, x.legacyNoCapability(capabilityWord(q.Capability))
		}
	}
	if le.asker == nil {
		return nil, "", true, x.legacyNoCapability(capabilityWord(reqs[0].Capability))
	}
	rctx, cancel := context.WithTimeout(ctx, le.cfg.BridgeTimeout)
	defer cancel()
	// The requests switch the response to SSE; keep-alive comments hold it open while the user
	// thinks.
	x.armKeepAlive()
	asked := x.s.now()
	responses, err = le.asker.ask(rctx, sess, reqs, x.emit)
	x.legacy.waited += x.s.now().Sub(asked)
	x.pauseKeepAlive()
	switch {
	case err == nil:
		return responses, ir.RequestState, false, nil
	case x.out.writeErr != nil:
		return nil, "", false, errClientWrite
	case ctx.Err() != nil:
		// The client went away or cancelled the call: nothing runs on at a backend between
		// rounds, and nothing more is written.
		return nil, "", false, context.Canceled
	case legacyTimedOut(rctx, err):
		return nil, "", true, x.legacyFailed("no answer from the client within " + le.cfg.BridgeTimeout.String())
	}
	var nc *noCapabilityError
	if errors.As(err, &nc) {
		return nil, "", true, x.legacyNoCapability(capabilityWord(nc.Capability))
	}
	return nil, "", true, x.legacyFailed("the client could not be asked: " + err.Error())
}

// clientWait is the time the request spent waiting for a pre-2026 client's answers, which the
// request duration metric leaves out (metrics.Recorder.ObserveRequestWaited).
func (x *request) clientWait() time.Duration {
	if x.legacy == nil {
		return 0
	}
	return x.legacy.waited
}

// legacyTimedOut reports whether ask gave up waiting: the round's deadline passed. The bridge's
// own timeout is configured to the same legacy.bridgeTimeout.
func legacyTimedOut(rctx context.Context, err error) bool {
	return errors.Is(rctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, errBridgeTimeout)
}

// capabilityWord names a capability of era.InputRequest for a user.
func capabilityWord(c string) string {
	switch c {
	case "elicitation.form":
		return "elicitation"
	case "elicitation.url":
		return "URL-mode elicitation"
	}
	return c
}

// legacyNoCapability answers a call that needs a capability the client did not declare: a failed
// tool call for tools/call (so the model sees why), -32603 otherwise. Nothing was forwarded.
func (x *request) legacyNoCapability(what string) error {
	return x.legacyFailed("requires " + what + ", which this client did not declare")
}

// legacyFailed ends a legacy call the gateway could not complete: isError text for tools/call,
// an in-band -32603 for the other methods.
func (x *request) legacyFailed(why string) error {
	x.out.outcome = outcomeClientError
	what := x.in.req.Method
	if x.in.params != nil && x.in.params.Name != "" {
		what = x.in.params.Name
	}
	text := "The call to " + what + " " + why
	if !strings.HasPrefix(why, "requires") {
		text = "The call to " + what + " failed: " + why
	}
	if x.in.req.Method == upstreams.MethodToolsCall {
		res := []byte(`{"content":[{"type":"text","text":`)
		res = jsonrpc.AppendString(res, text)
		res = append(res, `}],"isError":true}`...)
		return x.legacyEmitLast(jsonrpc.AppendResult(nil, x.in.req.ID, res), 200, nil)
	}
	return x.legacyEmitLast(jsonrpc.AppendError(nil, x.in.req.ID, jsonrpc.NewError(jsonrpc.CodeInternalError, text)), 200, nil)
}

// pauseKeepAlive stops the keep-alive timer between rounds, leaving it free to be armed again.
func (x *request) pauseKeepAlive() {
	x.out.mu.Lock()
	defer x.out.mu.Unlock()
	if x.out.ka != nil {
		x.out.ka.Stop()
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func joinSorted(s []string) string {
	slices.Sort(s)
	return strings.Join(s, " and ")
}
