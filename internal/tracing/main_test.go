package tracing

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a test leaves a goroutine behind: Shutdown must stop the
// batch processor and release the exporter's connections.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
