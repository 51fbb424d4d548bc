package replicatest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Bounds on waiting for child processes and loopback ports.
const (
	// exitTimeout bounds how long a process may take to exit after a signal: the gateway's
	// drainDelay plus its shutdown of in-flight requests fits well inside.
	exitTimeout = 20 * time.Second
	// pollInterval is the pause between two readiness or status probes.
	pollInterval = 20 * time.Millisecond
	// logTail is how many lines of a child's log a failed test prints.
	logTail = 40
)

// errTimeout reports that a bounded wait ran out.
var errTimeout = errors.New("timed out")

// process is a child process whose stdout and stderr are appended to a log file.
type process struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error // the exit status; read only after done is closed
}

// startProcess runs bin with args, appending its output to logPath.
func startProcess(logPath, bin string, args ...string) (*process, error) {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, err
	}
	p := &process{cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		f.Close()
		close(p.done)
	}()
	return p, nil
}

// exited reports whether the process has exited.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// signal sends sig unless the process has already exited.
func (p *process) signal(sig syscall.Signal) {
	if !p.exited() {
		_ = p.cmd.Process.Signal(sig)
	}
}

// stop sends sig and waits for the exit; see wait.
func (p *process) stop(sig syscall.Signal) error {
	p.signal(sig)
	return p.wait(sig)
}

// wait waits for the exit after sig was sent; after exitTimeout it kills the process and
// reports errTimeout. It returns the exit status otherwise.
func (p *process) wait(sig syscall.Signal) error {
	select {
	case <-p.done:
		return p.err
	case <-time.After(exitTimeout):
		_ = p.cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("pid %d did not exit within %v of %v: %w", p.cmd.Process.Pid, exitTimeout, sig, errTimeout)
	}
}

// dumpLog prints the tail of a child's log when the test has failed, so a failure shows what
// the gateway or the balancer said.
func dumpLog(t *testing.T, name, path string) {
	t.Helper()
	if !t.Failed() {
		return
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Logf("%s log: %v", name, err)
		return
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > logTail {
		lines = lines[len(lines)-logTail:]
	}
	t.Logf("last %d lines of the %s log:\n%s", len(lines), name, strings.Join(lines, "\n"))
}

// waitFor polls cond every pollInterval until it holds or timeout passes; it returns the last
// error cond reported, wrapped in errTimeout.
func waitFor(timeout time.Duration, cond func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := cond()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w after %v: %w", errTimeout, timeout, err)
		}
		time.Sleep(pollInterval)
	}
}
