package gateway

import (
	"flag"
	"os"
	"testing"
)

// TestMain removes the gateway binary the end-to-end tests shared (see buildGatewayBinary) once
// every test of the package has run.
//
// A run of the whole package (no -run) starts building that binary at once, beside the first
// tests: the tests that execute it run in parallel, after every serial test, and would
// otherwise all wait for the link then. A run of chosen tests builds it only if one needs it.
func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.run"); f != nil && f.Value.String() == "" {
		go builtGateway.once.Do(buildGatewayOnce)
	}
	code := m.Run()
	builtGateway.once.Do(func() {}) // waits for a build still under way, so its directory goes too
	if builtGateway.dir != "" {
		_ = os.RemoveAll(builtGateway.dir)
	}
	os.Exit(code)
}
