package era

import (
	"encoding/json"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

// LogLevelAtLeast reports whether a message of level is at or above min, so a client that asked
// for min should get it. An unknown level of the message is let through: the backend chose to
// send it, and a client shows what it cannot rank rather than lose it.
func LogLevelAtLeast(level, min string) bool {
	m, ok := jsonrpc.LogLevelRank(min)
	if !ok {
		return false
	}
	l, ok := jsonrpc.LogLevelRank(level)
	return !ok || l >= m
}

// LogAtLeast reports whether a notifications/message with params is at level min or above. A
// message whose level cannot be read, or an unknown min, is let through: the level only filters.
func LogAtLeast(params json.RawMessage, min string) bool {
	floor, ok := jsonrpc.LogLevelRank(min)
	if !ok {
		return true
	}
	var p struct {
		Level string `json:"level"`
	}
	if json.Unmarshal(params, &p) != nil {
		return true
	}
	got, ok := jsonrpc.LogLevelRank(p.Level)
	return !ok || got >= floor
}
