package era

import "github.com/mcp-gateway/gateway/internal/jsonrpc"

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
