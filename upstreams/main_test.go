package upstreams

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"
)

// everythingServer is the go-sdk's conformance everything-server, built once by TestMain.
var everythingServer string

// TestMain builds the go-sdk's conformance everything-server for the legacy interop tests, and
// fails the run if any test leaves a goroutine behind: a backend stream, listen relay or probe
// that outlives its context would show up here.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "upstreams-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	everythingServer = filepath.Join(dir, "everything-server")
	build := exec.Command("go", "build", "-o", everythingServer, "github.com/modelcontextprotocol/go-sdk/conformance/everything-server")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building everything-server: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := 0
	func() {
		defer os.RemoveAll(dir)
		code = goleakRun(m)
	}()
	os.Exit(code)
}

func goleakRun(m *testing.M) int {
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			return 1
		}
	}
	return code
}
