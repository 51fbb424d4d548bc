// Package nodecache finds what .ci/setup installs for the tests that run Node: Node 22 and the
// npm packages each test client or backend needs, under CACHE_DIR as the .ci scripts read it
// (relative to the repository root), else the repository's .cache.
package nodecache

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// nodeBinary is Node 22's binary inside the cache, as .ci/setup installs it from npm.
const nodeBinary = "node/node_modules/node/bin/node"

// Dir is the cache directory.
func Dir(tb testing.TB) string {
	tb.Helper()
	dir := os.Getenv("CACHE_DIR")
	if dir == "" {
		dir = ".cache"
	}
	if !filepath.IsAbs(dir) {
		_, file, _, ok := runtime.Caller(0)
		if !ok {
			tb.Fatal("nodecache: cannot locate the package source")
		}
		dir = filepath.Join(filepath.Dir(file), "..", "..", "..", dir)
	}
	return filepath.Clean(dir)
}

// CallerDir is the source directory of the function calling it: where a test client keeps its
// node/ scripts, found this way by the test binary of any package, whatever its working
// directory.
func CallerDir(tb testing.TB) string {
	tb.Helper()
	_, file, _, ok := runtime.Caller(1)
	if !ok {
		tb.Fatal("nodecache: cannot locate the caller's source")
	}
	return filepath.Dir(file)
}

// Require returns Node 22 and the install directory sub of the cache, failing the test, in the
// words of what needs them, unless Node and every marker (slash-separated, relative to that
// directory) are there: .ci/setup has not run otherwise.
func Require(tb testing.TB, what, sub string, markers ...string) (node, dir string) {
	tb.Helper()
	cache := Dir(tb)
	node = filepath.Join(cache, filepath.FromSlash(nodeBinary))
	dir = filepath.Join(cache, filepath.FromSlash(sub))
	paths := []string{node}
	for _, m := range markers {
		paths = append(paths, filepath.Join(dir, filepath.FromSlash(m)))
	}
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			tb.Fatalf("%s needs .ci/setup to have run: %v", what, err)
		}
	}
	return node, dir
}

// StartServer runs node with args as an MCP server until the test ends and returns its endpoint,
// http://127.0.0.1:<port>/mcp, once the script has written the line "LISTENING <port>". The
// script must exit when its stdin ends; past 5 seconds it is killed. what names the server in
// the test's messages, with its stderr when the test fails or the server does not start within
// 30 seconds.
func StartServer(tb testing.TB, what, node string, args ...string) string {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, node, args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		_ = stdin.Close() // the script exits when its stdin ends
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cancel()
			<-done
		}
		cancel()
		if tb.Failed() && stderr.Len() > 0 {
			tb.Logf("%s stderr:\n%s", what, stderr.String())
		}
	})
	port := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if p, ok := strings.CutPrefix(sc.Text(), "LISTENING "); ok {
				port <- p
				break
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case p := <-port:
		return "http://127.0.0.1:" + p + "/mcp"
	case <-time.After(30 * time.Second):
		tb.Fatalf("%s did not start; stderr:\n%s", what, stderr.String())
	}
	return ""
}
