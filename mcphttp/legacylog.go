package mcphttp

import (
	"encoding/json"
	"strings"

	"github.com/mcp-gateway/gateway/internal/era"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/legacysession"
)

// Logging for pre-2026 clients (docs/protocol.md §9.6). A 2025 client sets one level for its
// session with logging/setLevel; 2026-07-28 asks for logs per request, with the
// io.modelcontextprotocol/logLevel _meta key, and a backend sends notifications/message on that
// request's own stream only. The edge keeps the session's level in the shared store
// (legacystate.go), puts it in the _meta of each later request of the session, on whichever
// replica it lands, and relays the notifications/message at or above it on the call's stream.

// errBadLogLevel answers a logging/setLevel whose level is not one of the eight.
var errBadLogLevel = jsonrpc.NewError(jsonrpc.CodeInvalidParams,
	"Invalid params: level must be one of "+strings.Join(era.LogLevels, ", "))

// legacySetLevel serves logging/setLevel: the level is validated, then recorded for the
// session. A session-less request has no session to scope a level to: it is answered {} and
// changes nothing (such a client gets no log messages), since a client that calls setLevel
// because initialize advertised logging must not fail for it.
func (x *request) legacySetLevel(sess *legacysession.Session) error {
	var p struct {
		Level *string `json:"level"`
	}
	if len(x.in.req.Params) == 0 || json.Unmarshal(x.in.req.Params, &p) != nil || p.Level == nil {
		x.writeLegacyError(errBadLogLevel)
		return nil
	}
	if _, ok := era.LogLevelRank(*p.Level); !ok {
		x.writeLegacyError(errBadLogLevel)
		return nil
	}
	if sessionBound(sess) {
		if err := x.s.legacy.state.setLevel(x.ctx, sess, *p.Level); err != nil {
			x.s.log.Warn("legacy session log level not recorded", "request_id", x.requestID, "error", err)
			x.writeLegacyError(jsonrpc.NewError(jsonrpc.CodeInternalError, "Internal error: the log level could not be recorded; try again"))
			return nil
		}
	}
	x.writeLegacyResult([]byte(`{}`))
	return nil
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
