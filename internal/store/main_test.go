package store

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that closed stores leave no goroutines behind (go-redis
// pools, Sentinel watchers).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
