package gateway

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestSIGHUPWhileDrainingIsLogged: a SIGHUP that arrives once SIGTERM has started the drain is
// not applied (the gateway is leaving) but says so, once, at INFO. Before, serve's loop no longer
// read the signal and it vanished without a line, so an operator whose config-reloader sidecar
// fired during a rollout could not tell a lost reload from an applied one.
func TestSIGHUPWhileDrainingIsLogged(t *testing.T) {
	t.Parallel()
	be := mcptest.StartServer(t, "be")
	file := filepath.Join(t.TempDir(), "config.yaml")
	// A drain delay of its own (reloadBase has none), so that the drain is still under way when
	// the test sends SIGHUP after it has begun.
	body := `server: {listen: "127.0.0.1:0", drainDelay: 5s, shutdownTimeout: 5s, publicURL: "` + testResource + `"}
admin: {listen: "127.0.0.1:0"}
log: {level: info, format: json}
auth: {disabled: true}
upstreams:
` + upstreamYAML(be)
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	logs := &mcptest.LogBuffer{}
	hup := make(chan os.Signal, 1)
	_, cancel, done := serveFile(t, file, logs, hup, nil)
	defer cancel()
	cancel() // SIGTERM
	mcptest.WaitFor(t, "the drain to start", func() bool { return strings.Contains(logs.String(), `"msg":"draining"`) })
	hup <- syscall.SIGHUP
	const want = `"level":"INFO","msg":"reload ignored: the gateway is draining"`
	mcptest.WaitFor(t, "the log to say the reload is ignored", func() bool { return strings.Contains(logs.String(), want) })
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(reloadWait):
		t.Fatalf("the gateway did not stop; log:\n%s", logs.String())
	}
	if n := strings.Count(logs.String(), want); n != 1 {
		t.Errorf("the ignored reload is logged %d times, want once; log:\n%s", n, logs.String())
	}
	if strings.Contains(logs.String(), "reloading the configuration") {
		t.Errorf("a SIGHUP during the drain started a reload; log:\n%s", logs.String())
	}
}
