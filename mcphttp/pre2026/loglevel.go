package pre2026

import (
	"encoding/json"
	"errors"

	"github.com/mcp-gateway/gateway/internal/era"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

// Logging for pre-2026 clients (docs/protocol.md §9.6). A 2025 client sets one level for its
// session with logging/setLevel; 2026-07-28 asks for logs per request, with the
// io.modelcontextprotocol/logLevel _meta key, and a backend sends notifications/message on that
// request's own stream only. The edge keeps the session's level in the shared store
// (state.go), puts it in the _meta of each later request of the session, on whichever
// replica it lands, and relays the notifications/message at or above it on the call's stream.

// errBadLogLevel answers a logging/setLevel whose level is not one of the eight.
var errBadLogLevel = jsonrpc.NewError(jsonrpc.CodeInvalidParams,
	"Invalid params: level must be one of "+jsonrpc.LogLevelsText())

// setLevel serves logging/setLevel: the level is validated, then recorded for the session. A
// session-less request has no session to scope a level to: it is answered {} and changes
// nothing (such a client gets no log messages), since a client that calls setLevel because
// initialize advertised logging must not fail for it.
func (q *clientReq) setLevel() error {
	var p struct {
		Level *string `json:"level"`
	}
	if len(q.msg.Params) == 0 || json.Unmarshal(q.msg.Params, &p) != nil || p.Level == nil {
		return q.rpcError(errBadLogLevel)
	}
	if !jsonrpc.LogLevelKnown(*p.Level) {
		return q.rpcError(errBadLogLevel)
	}
	if sessionBound(q.sess) {
		if err := q.e.state.setLevel(q.in.Context(), q.sess, stateCaller(q.sess, q.in), *p.Level); err != nil {
			if tooFast, ok := errors.AsType[*tooFastError](err); ok {
				return q.in.Limited(tooFast.retryAfter, tooFastMessage)
			}
			if errors.Is(err, errStateBound) {
				return q.rpcError(jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: "+err.Error()))
			}
			q.e.log.Warn("legacy session log level not recorded", "request_id", q.in.RequestID(), "error", err)
			if errors.Is(err, errStateStore) {
				return stateUnavailable("the log level could not be recorded")
			}
			return q.rpcError(jsonrpc.NewError(jsonrpc.CodeInternalError, "Internal error: the log level could not be recorded; try again"))
		}
	}
	return q.result([]byte(`{}`))
}

// logPasses reports whether a notifications/message with params may reach a client that asked
// for level ("" asked for none): the backend was asked for that level already, so this only
// holds back what a backend sends regardless.
func logPasses(params json.RawMessage, level string) bool {
	if level == "" {
		return false
	}
	var p struct {
		Level string `json:"level"`
	}
	if json.Unmarshal(params, &p) != nil {
		return false
	}
	return era.LogLevelAtLeast(p.Level, level)
}
