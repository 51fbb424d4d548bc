package gateway

import (
	"os"
	"testing"
)

// TestMain removes the gateway binary the end-to-end tests shared (see buildGatewayBinary) once
// every test of the package has run.
func TestMain(m *testing.M) {
	code := m.Run()
	if builtGateway.dir != "" {
		_ = os.RemoveAll(builtGateway.dir)
	}
	os.Exit(code)
}
