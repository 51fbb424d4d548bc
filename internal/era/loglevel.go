package era

// LogLevels are the levels of notifications/message and logging/setLevel, least severe first:
// the eight syslog severities of RFC 5424 as MCP spells them
// (https://modelcontextprotocol.io/specification/2025-11-25/server/utilities/logging).
var LogLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// LogLevelRank is the position of level in LogLevels, and false for anything else (levels are
// case-sensitive: a client that sends "DEBUG" gets invalid params, not a guess).
func LogLevelRank(level string) (int, bool) {
	for i, l := range LogLevels {
		if l == level {
			return i, true
		}
	}
	return 0, false
}

// LogLevelAtLeast reports whether a message of level is at or above min, so a client that asked
// for min should get it. An unknown level of the message is let through: the backend chose to
// send it, and a client shows what it cannot rank rather than lose it.
func LogLevelAtLeast(level, min string) bool {
	m, ok := LogLevelRank(min)
	if !ok {
		return false
	}
	l, ok := LogLevelRank(level)
	return !ok || l >= m
}
