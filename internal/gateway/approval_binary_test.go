package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// The gateway binary as an operator runs it, for the end-to-end tests that must not run the
// gateway in-process: built once per test run (see builtGateway), started from a written
// configuration file, stopped with SIGTERM, its log printed when the test fails.

// Bounds on building and running gateway processes.
const (
	// binaryBuildTimeout bounds `go build`: the packages are in the build cache after the test
	// binary's own build, but a loaded machine may still need minutes to link.
	binaryBuildTimeout = 5 * time.Minute
	// binaryReadyTimeout bounds waiting for a started gateway to answer /readyz with 200.
	binaryReadyTimeout = 30 * time.Second
	// binaryExitTimeout bounds waiting for a gateway to exit after SIGTERM (its drain delay is
	// off and its shutdown timeout shorter), after which it is killed.
	binaryExitTimeout = 20 * time.Second
	// binaryPoll is the pause between two readiness probes.
	binaryPoll = 25 * time.Millisecond
	// binaryLogTail is how many lines of a gateway's log a failing test prints.
	binaryLogTail = 40
)

// builtGateway is the gateway binary of this test run: built once, when the run starts or by the
// first test that needs it (see TestMain), and shared by the others (linking it, with the race
// detector, costs more than most of those tests), removed by TestMain when the run ends.
var builtGateway struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// buildGatewayBinary returns the path of the gateway command (cmd/gateway) built for this test
// run. Under the race detector the binary is built with it too, so the code the test drives in
// the child processes is still checked for races. Tests only execute it, so they can share it.
func buildGatewayBinary(t *testing.T) string {
	t.Helper()
	builtGateway.once.Do(buildGatewayOnce)
	if builtGateway.err != nil {
		t.Fatal(builtGateway.err)
	}
	return builtGateway.path
}

// buildGatewayOnce is builtGateway's build, run once (by TestMain or by the first test that
// needs the binary).
func buildGatewayOnce() {
	builtGateway.path, builtGateway.err = goBuildGateway()
}

// goBuildGateway builds cmd/gateway into a new temporary directory and returns the binary's
// path.
func goBuildGateway() (string, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("building the gateway binary needs the go command: %w", err)
	}
	dir, err := os.MkdirTemp("", "gateway-test-bin-")
	if err != nil {
		return "", err
	}
	builtGateway.dir = dir
	out := filepath.Join(dir, "gateway")
	args := []string{"build", "-o", out}
	if testBinaryUsesRace() {
		args = append(args, "-race")
	}
	ctx, cancel := context.WithTimeout(context.Background(), binaryBuildTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, goBin, append(args, "github.com/mcp-gateway/gateway/cmd/gateway")...)
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, b)
	}
	return out, nil
}

// testBinaryUsesRace reports whether this test binary was built with -race, read from its
// build settings.
func testBinaryUsesRace() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

// writeYAML writes doc as a YAML file in dir, readable by the owner only like a real
// configuration holding file paths to secrets, and returns its path.
func writeYAML(t *testing.T, dir, name string, doc any) string {
	t.Helper()
	b, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// writeSecretFile writes a secret to a file, as a mounted secret would be, and returns its path.
func writeSecretFile(t *testing.T, dir, name, value string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(value+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// gatewayProcess is one running gateway binary whose output goes to a log file.
type gatewayProcess struct {
	name      string
	adminAddr string
	logPath   string
	cmd       *exec.Cmd
	done      chan struct{}
	err       error // the exit status; read only after done is closed
}

// startGatewayProcess runs `bin serve --config configPath` and returns at once; waitReady
// waits for it. When the test ends the process gets SIGTERM, is killed if it does not exit
// within binaryExitTimeout, must have exited cleanly, and, if the test failed, the tail of its
// log is printed.
func startGatewayProcess(t *testing.T, bin, name, configPath, adminAddr string) *gatewayProcess {
	t.Helper()
	logPath := filepath.Join(filepath.Dir(configPath), name+".log")
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--config", configPath)
	cmd.Stdout, cmd.Stderr = f, f
	// The environment is the test's minus MCPGW_* settings, which would override the file.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MCPGW_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.SysProcAttr = gatewayProcAttr()
	if err := cmd.Start(); err != nil {
		f.Close()
		t.Fatalf("%s: starting %s: %v", name, bin, err)
	}
	p := &gatewayProcess{name: name, adminAddr: adminAddr, logPath: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		f.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		if err := p.stop(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if report := p.raceReport(); report != "" {
			t.Errorf("%s: the race detector reported:\n%s", name, report)
		} else if t.Failed() {
			t.Logf("last lines of the %s log:\n%s", name, p.logTail())
		}
	})
	return p
}

// exited reports whether the process has exited.
func (p *gatewayProcess) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM and waits, bounded, for a clean exit; a process that does not exit in
// time is killed and reported.
func (p *gatewayProcess) stop() error {
	if !p.exited() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
	}
	select {
	case <-p.done:
		if p.err != nil {
			return fmt.Errorf("exit after SIGTERM: %w", p.err)
		}
		return nil
	case <-time.After(binaryExitTimeout):
		_ = p.cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("did not exit within %v of SIGTERM; killed", binaryExitTimeout)
	}
}

// waitReady polls the process's /readyz until it answers 200; it fails the test, with the
// log's tail, if the process exits or is not ready within binaryReadyTimeout.
func (p *gatewayProcess) waitReady(t *testing.T) {
	t.Helper()
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(binaryReadyTimeout)
	var last error
	for {
		if p.exited() {
			t.Fatalf("%s exited before it was ready (%v); its log:\n%s", p.name, p.err, p.logTail())
		}
		last = readyzOK(client, "http://"+p.adminAddr+"/readyz")
		if last == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not ready within %v: %v; its log:\n%s", p.name, binaryReadyTimeout, last, p.logTail())
		}
		time.Sleep(binaryPoll)
	}
}

// readyzOK reports why url does not answer 200, or nil.
func readyzOK(client *http.Client, url string) error {
	res, err := client.Get(url)
	if err != nil {
		return err
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return errors.New(res.Status)
	}
	return nil
}

// raceReport is the race detector's first report in the process's log, "" when there is none.
// A process built with -race exits with status 66 after a report, which stop reports too; the
// report itself is longer than a log's tail.
func (p *gatewayProcess) raceReport() string {
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		return ""
	}
	_, report, found := strings.Cut(string(b), "WARNING: DATA RACE")
	if !found {
		return ""
	}
	report, _, _ = strings.Cut(report, "\n==================")
	return "WARNING: DATA RACE" + report
}

// logTail is the last binaryLogTail lines of the process's log.
func (p *gatewayProcess) logTail() string {
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		return fmt.Sprintf("(reading the log: %v)", err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > binaryLogTail {
		lines = lines[len(lines)-binaryLogTail:]
	}
	return strings.Join(lines, "\n")
}
