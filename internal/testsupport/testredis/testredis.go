// Package testredis runs a real redis-server on a loopback port for tests.
//
// Tests that exercise Redis-backed code start one server per test (or per
// package) with Start; the server lives in its own temporary directory, keeps
// nothing on disk, and is stopped by tb.Cleanup. A missing redis-server binary
// fails the test rather than skipping it: the CI script installs it, and a
// silently skipped Redis suite would hide the scaled-out code paths.
package testredis

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const (
	// DefaultBinary is the redis-server executable looked up in PATH.
	DefaultBinary = "redis-server"
	// DefaultStartTimeout bounds how long Start waits for the first PONG.
	DefaultStartTimeout = 10 * time.Second
	// stopTimeout bounds the graceful SIGTERM shutdown before SIGKILL.
	stopTimeout = 5 * time.Second
	// pollInterval is the pause between readiness probes.
	pollInterval = 10 * time.Millisecond
	// portAttempts bounds retries when another process grabs the chosen port
	// between probing it and redis-server binding it.
	portAttempts = 5
)

// Option configures a Server before it starts.
type Option func(*options)

type options struct {
	binary       string
	password     string
	startTimeout time.Duration
	extraArgs    []string
	cluster      bool
	sentinelOf   *Server
	masterName   string
}

// WithSentinelFor starts a Redis Sentinel (quorum 1) monitoring master under
// masterName instead of a data server, so Sentinel clients can be tested.
// The Sentinel authenticates to master with master's password; WithPassword
// on the Sentinel makes the Sentinel itself require one.
func WithSentinelFor(master *Server, masterName string) Option {
	return func(o *options) { o.sentinelOf, o.masterName = master, masterName }
}

// WithCluster starts the server as a one-node Redis Cluster owning all 16384
// slots, so cluster clients (MOVED handling, slot routing of scripts) can be
// tested against the real protocol.
func WithCluster() Option {
	return func(o *options) { o.cluster = true }
}

// WithPassword makes the server require AUTH with password (requirepass), for
// tests of authenticated connections.
func WithPassword(password string) Option {
	return func(o *options) { o.password = password }
}

// WithBinary runs the given redis-server executable instead of the one in PATH.
func WithBinary(path string) Option {
	return func(o *options) { o.binary = path }
}

// WithStartTimeout changes how long Start waits for the server to answer PING.
func WithStartTimeout(d time.Duration) Option {
	return func(o *options) { o.startTimeout = d }
}

// WithArgs appends raw redis-server arguments (for example "--maxmemory", "1mb").
func WithArgs(args ...string) Option {
	return func(o *options) { o.extraArgs = append(o.extraArgs, args...) }
}

// Server is a running redis-server child process bound to 127.0.0.1.
type Server struct {
	tb   testing.TB
	opts options
	bin  string
	dir  string
	port int

	mu     sync.Mutex
	cmd    *exec.Cmd
	done   chan struct{}
	paused bool
}

// Start runs redis-server on a free loopback port, waits until it answers
// PING, and registers its shutdown with tb.Cleanup. It fails tb (never skips)
// when the binary is missing or the server does not come up.
func Start(tb testing.TB, opts ...Option) *Server {
	tb.Helper()
	o := options{binary: DefaultBinary, startTimeout: DefaultStartTimeout}
	for _, opt := range opts {
		opt(&o)
	}
	bin, err := exec.LookPath(o.binary)
	if err != nil {
		tb.Fatalf("testredis: %q not found (%v); install redis-server "+
			"(for example `apt-get install -y redis-server`; the CI script installs it)", o.binary, err)
	}
	s := &Server{tb: tb, opts: o, bin: bin, dir: tb.TempDir()}
	tb.Cleanup(s.Stop)
	var lastErr error
	for range portAttempts {
		port, err := freePort()
		if err != nil {
			tb.Fatalf("testredis: pick a port: %v", err)
		}
		s.port = port
		if lastErr = s.start(); lastErr == nil {
			return s
		}
		s.Stop()
	}
	tb.Fatalf("testredis: %v", lastErr)
	return nil
}

// Addr is the server's host:port on the loopback interface.
func (s *Server) Addr() string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port))
}

// URL is a redis:// URL for the server, including the password when set.
func (s *Server) URL() string {
	u := url.URL{Scheme: "redis", Host: s.Addr(), Path: "/0"}
	if s.opts.password != "" {
		u.User = url.UserPassword("", s.opts.password)
	}
	return u.String()
}

// Password is the password the server requires, or "" when it requires none.
func (s *Server) Password() string { return s.opts.password }

// Stop terminates the server and waits for it to exit. It is idempotent and
// is also run by tb.Cleanup.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	if s.paused {
		// A stopped process cannot act on SIGTERM; let it run so it exits cleanly.
		_ = s.cmd.Process.Signal(sigCont)
		s.paused = false
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(stopTimeout):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
	s.cmd = nil
}

// Pause stops the server process with SIGSTOP, for fault tests of a Redis that
// hangs rather than refuses: connections stay open and the kernel still accepts
// new ones, but no command is answered until Resume. Stop (and so tb.Cleanup)
// resumes a paused server before terminating it.
func (s *Server) Pause() {
	s.tb.Helper()
	s.signal(sigStop, true)
}

// Resume continues a server stopped by Pause with SIGCONT.
func (s *Server) Resume() {
	s.tb.Helper()
	s.signal(sigCont, false)
}

func (s *Server) signal(sig os.Signal, paused bool) {
	s.tb.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		s.tb.Fatalf("testredis: %v: server not running", sig)
	}
	if err := s.cmd.Process.Signal(sig); err != nil {
		s.tb.Fatalf("testredis: %v: %v", sig, err)
	}
	s.paused = paused
}

// Restart stops the server and starts a fresh one on the same port, for fault
// tests: clients keep their address and must reconnect by themselves. The
// dataset is empty afterwards because persistence is off.
func (s *Server) Restart() {
	s.tb.Helper()
	s.Stop()
	if err := s.start(); err != nil {
		s.tb.Fatalf("testredis: restart: %v", err)
	}
}

// start launches the process and waits for readiness; s.port must be set.
func (s *Server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	logPath := filepath.Join(s.dir, "redis.log")
	if s.opts.sentinelOf != nil {
		return s.launch(logPath, s.sentinelArgs(logPath))
	}
	args := []string{
		"--port", strconv.Itoa(s.port),
		"--bind", "127.0.0.1",
		"--save", "",
		"--appendonly", "no",
		"--dir", s.dir,
		"--logfile", logPath,
		"--daemonize", "no",
	}
	if s.opts.password != "" {
		args = append(args, "--requirepass", s.opts.password)
	}
	if s.opts.cluster {
		args = append(args, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf")
	}
	args = append(args, s.opts.extraArgs...)
	if err := s.launch(logPath, args); err != nil {
		return err
	}
	if s.opts.cluster {
		if err := s.claimSlots(); err != nil {
			return fmt.Errorf("%w; log:\n%s", err, readLog(logPath))
		}
	}
	return nil
}

// sentinelArgs writes the Sentinel's config file (Sentinel rewrites it at
// run time, so it cannot be given on the command line) and returns the
// arguments that run it.
func (s *Server) sentinelArgs(logPath string) []string {
	m := s.opts.sentinelOf
	conf := fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %q\nlogfile %q\nsentinel monitor %s 127.0.0.1 %d 1\n",
		s.port, s.dir, logPath, s.opts.masterName, m.port)
	if m.opts.password != "" {
		conf += fmt.Sprintf("sentinel auth-pass %s %s\n", s.opts.masterName, m.opts.password)
	}
	if s.opts.password != "" {
		conf += fmt.Sprintf("requirepass %s\n", s.opts.password)
	}
	path := filepath.Join(s.dir, "sentinel.conf")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		s.tb.Fatalf("testredis: write sentinel config: %v", err)
	}
	return append([]string{path, "--sentinel"}, s.opts.extraArgs...)
}

// launch starts the process with args and waits until it answers PING.
func (s *Server) launch(logPath string, args []string) error {
	cmd := exec.Command(s.bin, args...)
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", s.bin, err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	s.cmd, s.done = cmd, done
	if err := s.waitReady(done); err != nil {
		return fmt.Errorf("%w; log:\n%s", err, readLog(logPath))
	}
	return nil
}

// waitReady polls PING until PONG, the process exits, or the timeout passes.
func (s *Server) waitReady(exited <-chan struct{}) error {
	deadline := time.Now().Add(s.opts.startTimeout)
	var err error
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return fmt.Errorf("redis-server on port %d exited during start-up", s.port)
		default:
		}
		if err = ping(s.Addr(), s.opts.password); err == nil {
			return nil
		}
		time.Sleep(pollInterval)
	}
	return fmt.Errorf("redis-server on port %d not ready after %v: %w", s.port, s.opts.startTimeout, err)
}

// claimSlots gives the node every slot (unless a restart kept them in
// nodes.conf) and waits until the cluster reports itself healthy.
func (s *Server) claimSlots() error {
	info, err := s.Do("CLUSTER", "INFO")
	if err != nil {
		return err
	}
	if !strings.Contains(info, "cluster_slots_assigned:16384") {
		if _, err := s.Do("CLUSTER", "ADDSLOTSRANGE", "0", "16383"); err != nil {
			return err
		}
	}
	deadline := time.Now().Add(s.opts.startTimeout)
	for time.Now().Before(deadline) {
		if info, err = s.Do("CLUSTER", "INFO"); err == nil && strings.Contains(info, "cluster_state:ok") {
			return nil
		}
		time.Sleep(pollInterval)
	}
	return fmt.Errorf("cluster on port %d not ok after %v: %v", s.port, s.opts.startTimeout, err)
}

// Do sends one command on a fresh connection (authenticating when the
// server has a password) and returns a simple, integer or bulk string reply.
// It is meant for test set-up, not for the code under test.
func (s *Server) Do(args ...string) (string, error) {
	conn, err := net.DialTimeout("tcp", s.Addr(), time.Second)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Second))
	r := bufio.NewReader(conn)
	if s.opts.password != "" {
		if err := roundTrip(conn, r, "+OK", "AUTH", s.opts.password); err != nil {
			return "", err
		}
	}
	if err := writeCommand(conn, args); err != nil {
		return "", err
	}
	return readReply(r)
}

// readReply reads one RESP2 reply; array elements are joined with newlines.
func readReply(r *bufio.Reader) (string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", errors.New("empty reply")
	}
	switch line[0] {
	case '+', ':':
		return line[1:], nil
	case '-':
		return "", errors.New(line[1:])
	case '$':
		return readBulk(r, line)
	case '*':
		return readArray(r, line)
	}
	return "", fmt.Errorf("unsupported reply %q", line)
}

func readBulk(r *bufio.Reader, header string) (string, error) {
	n, err := strconv.Atoi(header[1:])
	if err != nil || n < 0 {
		return "", fmt.Errorf("bulk reply %q", header)
	}
	buf := make([]byte, n+2)
	if _, err := io.ReadFull(r, buf); err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}

// readArray reads flat arrays only, which is all test set-up needs.
func readArray(r *bufio.Reader, header string) (string, error) {
	const maxElems = 1 << 16
	n, err := strconv.Atoi(header[1:])
	if err != nil || n < 0 || n > maxElems {
		return "", fmt.Errorf("array reply %q", header)
	}
	elems := make([]string, 0, n)
	for range n {
		e, err := readReply(r)
		if err != nil {
			return "", err
		}
		elems = append(elems, e)
	}
	return strings.Join(elems, "\n"), nil
}

// ping speaks just enough RESP to authenticate and check for +PONG, so that
// this package does not depend on the client library under test.
func ping(addr, password string) error {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Second))
	r := bufio.NewReader(conn)
	if password != "" {
		if err := roundTrip(conn, r, "+OK", "AUTH", password); err != nil {
			return err
		}
	}
	return roundTrip(conn, r, "+PONG", "PING")
}

func writeCommand(conn net.Conn, args []string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	_, err := conn.Write([]byte(b.String()))
	return err
}

func roundTrip(conn net.Conn, r *bufio.Reader, want string, args ...string) error {
	if err := writeCommand(conn, args); err != nil {
		return err
	}
	line, err := r.ReadString('\n')
	if err != nil {
		return err
	}
	if got := strings.TrimRight(line, "\r\n"); got != want {
		return fmt.Errorf("%s: got %q, want %q", args[0], got, want)
	}
	return nil
}

// freePort asks the kernel for an unused loopback port. Another process may
// take it before redis-server binds it; Start retries in that case.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func readLog(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	const maxLog = 4096
	if len(b) > maxLog {
		b = b[len(b)-maxLog:]
	}
	return string(b)
}
