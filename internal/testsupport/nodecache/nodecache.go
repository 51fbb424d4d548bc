// Package nodecache finds what .ci/setup installs for the tests that run Node: Node 22 and the
// npm packages each test client or backend needs, under CACHE_DIR as the .ci scripts read it
// (relative to the repository root), else the repository's .cache.
package nodecache

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
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
