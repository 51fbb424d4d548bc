package gateway

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckConfigOnlineOnlyItsLines: check-config --online, run as the binary, writes one line
// per item and nothing else: a Redis that cannot be reached is its FAILED line, without the
// redis client's own pool messages ("redis: … failed to dial …") on standard error beside it.
func TestCheckConfigOnlineOnlyItsLines(t *testing.T) {
	bin := buildGatewayBinary(t)
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	yaml := "server: {listen: \"127.0.0.1:0\"}\nadmin: {listen: \"127.0.0.1:0\"}\nauth: {disabled: true}\n" +
		"redis: {url: \"redis://" + closedPort(t) + "/0\"}\nupstreams: [{name: a, url: \"http://" + closedPort(t) + "/mcp\"}]\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "check-config", "--config", cfg, "--online")
	cmd.Env = []string{}
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("an unreachable Redis passed:\n%s", out)
	}
	var failed int
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		switch {
		case strings.HasPrefix(line, "FAILED redis "):
			failed++
		case strings.HasPrefix(line, "redis: "):
			t.Errorf("a line of the redis client's own: %q\n%s", line, out)
		}
	}
	if failed != 1 {
		t.Errorf("%d FAILED redis lines, want 1:\n%s", failed, out)
	}
}
