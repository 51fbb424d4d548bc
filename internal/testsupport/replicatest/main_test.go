package replicatest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// gatewayModule is the package built into the binary under test.
const gatewayModule = "github.com/mcp-gateway/gateway/cmd/gateway"

// gatewayBinary is the path of the gateway binary built by TestMain. It is written once, before
// any test runs, and only read afterwards: TestMain has no other way to hand a value to tests.
var gatewayBinary string

// TestMain builds the gateway once per test run, so every test drives the real binary exactly as
// an operator runs it. A failed build fails the run: skipping would hide the scaled-out paths.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "replicatest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "replicatest:", err)
		os.Exit(1)
	}
	gatewayBinary, err = buildGateway(dir)
	code := 1
	if err != nil {
		fmt.Fprintln(os.Stderr, "replicatest: building the gateway:", err)
	} else {
		code = m.Run()
	}
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

func buildGateway(dir string) (string, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "gateway")
	cmd := exec.Command(goBin, "build", "-o", out, gatewayModule)
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%w\n%s", err, b)
	}
	return out, nil
}
