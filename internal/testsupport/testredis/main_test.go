package testredis

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that stopped servers leave no waiting goroutines behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
