package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/racetest"
)

// The demo's end-to-end tests run the real command: `go build` of this package, started as
// `make demo` starts it but on ports the kernel picks, driven through what its banner prints.

const (
	// buildTimeout bounds building the demo (with -race on a busy machine).
	buildTimeout = 5 * time.Minute
	// startTimeout bounds the demo's start, until its banner is printed.
	startTimeout = 2 * time.Minute
	// stopTimeout bounds the demo's exit after SIGTERM.
	stopTimeout = 30 * time.Second
)

// builtDemo is the demo binary, built once per test binary.
type builtDemo struct {
	once sync.Once
	path string
	err  error
}

func (b *builtDemo) get(t *testing.T) string {
	t.Helper()
	b.once.Do(func() { b.path, b.err = buildDemo() })
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// demoBinary is shared by the tests of this package; TestMain removes its directory.
var demoBinary = &builtDemo{}

func TestMain(m *testing.M) {
	code := m.Run()
	if demoBinary.path != "" {
		_ = os.RemoveAll(filepath.Dir(demoBinary.path))
	}
	os.Exit(code)
}

// buildDemo builds this command, with the race detector when the tests run with it.
func buildDemo() (string, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("building the demo needs the go command: %w", err)
	}
	dir, err := os.MkdirTemp("", "gateway-demo-test-")
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "gateway-demo")
	args := []string{"build", "-o", out}
	if racetest.Enabled {
		args = append(args, "-race")
	}
	ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	defer cancel()
	// The tests run in this command's directory, so "." is the demo's main package.
	if b, err := exec.CommandContext(ctx, goBin, append(args, ".")...).CombinedOutput(); err != nil {
		return "", fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	return out, nil
}

// demoProcess is a running demo and what its banner says.
type demoProcess struct {
	cmd  *exec.Cmd
	done chan struct{}

	mu             sync.Mutex
	stdout, stderr strings.Builder

	banner     string
	mcpURL     string            // http://127.0.0.1:PORT/mcp
	mcp, admin string            // the listeners' addresses
	tokens     map[string]string // by exported variable: ALICE, BOB
}

var (
	bannerFirst  = regexp.MustCompile(`mcp-gateway demo: the gateway on (http://([0-9.:]+)/mcp) fronts`)
	bannerAdmin  = regexp.MustCompile(`(?s)Its admin listener .*? is on http://([0-9.:]+)\.`)
	bannerExport = regexp.MustCompile(`(?m)^  export ([A-Z]+)='([^']+)'$`)
)

// startDemo runs the demo binary with args and ports of the kernel's choosing and waits for
// its banner.
func startDemo(t *testing.T, args ...string) *demoProcess {
	t.Helper()
	bin := demoBinary.get(t)
	cmd := exec.Command(bin, append([]string{"--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0"}, args...)...)
	cmd.SysProcAttr = demoProcAttr()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &demoProcess{cmd: cmd, done: make(chan struct{})}
	cmd.Stderr = writerFunc(func(b []byte) { p.mu.Lock(); p.stderr.Write(b); p.mu.Unlock() })
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the demo: %v", err)
	}
	ready := make(chan struct{})
	go p.read(out, ready)
	t.Cleanup(func() { p.stop(t) })
	select {
	case <-ready:
	case <-p.done:
		t.Fatalf("the demo exited before its banner:\n%s", p.output())
	case <-time.After(startTimeout):
		t.Fatalf("no banner within %v:\n%s", startTimeout, p.output())
	}
	p.parse(t)
	return p
}

// read collects the demo's stdout, closing ready when the banner's last line came.
func (p *demoProcess) read(out io.Reader, ready chan struct{}) {
	defer close(p.done)
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	signalled := false
	for sc.Scan() {
		p.mu.Lock()
		p.stdout.WriteString(sc.Text() + "\n")
		p.mu.Unlock()
		if !signalled && sc.Text() == "Press Ctrl-C to stop." {
			signalled = true
			close(ready)
		}
	}
	_ = p.cmd.Wait()
}

// output is what the demo printed, its tokens left out.
func (p *demoProcess) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	stdout := bannerExport.ReplaceAllString(p.stdout.String(), "  export $1='<token>'")
	return "stdout:\n" + stdout + "\nstderr:\n" + p.stderr.String()
}

// logged is what the demo wrote to stderr.
func (p *demoProcess) logged() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

// parse reads the addresses and tokens off the banner.
func (p *demoProcess) parse(t *testing.T) {
	t.Helper()
	p.mu.Lock()
	p.banner = p.stdout.String()
	p.mu.Unlock()
	m := bannerFirst.FindStringSubmatch(p.banner)
	a := bannerAdmin.FindStringSubmatch(p.banner)
	if m == nil || a == nil {
		t.Fatalf("the banner does not name the gateway's addresses:\n%s", p.banner)
	}
	p.mcpURL, p.mcp, p.admin = m[1], m[2], a[1]
	p.tokens = map[string]string{}
	for _, e := range bannerExport.FindAllStringSubmatch(p.banner, -1) {
		p.tokens[e[1]] = e[2]
	}
}

// stop sends SIGTERM and waits, bounded, for the demo to exit; it reports a race the demo's
// race detector found.
func (p *demoProcess) stop(t *testing.T) {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(stopTimeout):
		_ = p.cmd.Process.Kill()
		<-p.done
		t.Errorf("the demo did not stop within %v of SIGTERM", stopTimeout)
	}
	out := p.output()
	if strings.Contains(out, "WARNING: DATA RACE") {
		t.Errorf("the demo's race detector reported:\n%s", out)
	} else if t.Failed() {
		t.Logf("the demo's output:\n%s", out)
	}
}

// writerFunc adapts a function to io.Writer.
type writerFunc func([]byte)

func (f writerFunc) Write(b []byte) (int, error) { f(b); return len(b), nil }
