package catalog

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run if any test leaves a goroutine behind: a backend stream, relay or
// probe that outlives its context would show up here.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
