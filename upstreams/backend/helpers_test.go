package backend

import (
	"strings"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams/names"
)

// newTestClock returns the manual clock the backend tests inject.
func newTestClock() *mcptest.Clock {
	return mcptest.NewClock(time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC))
}

// hideSecret is a caller's policy: everything under file:///secret/ is hidden, and a deny rule
// covers it (embedded resources are dropped too).
func hideSecret(_ names.Kind, t names.Target) bool {
	return !strings.HasPrefix(t.Name, "file:///secret/")
}
