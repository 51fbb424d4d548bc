package certreload

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that Run and the test servers leave no goroutine behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
