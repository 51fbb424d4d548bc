package main

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestServingBinaryLinksNoDevelopmentParts: the production binary is the product only. The demo,
// its development token issuer, the MCP SDK (which only the demo backends and the tests use) and
// every test-support or tool package stay out of it; `make demo` runs cmd/gateway-demo instead.
func TestServingBinaryLinksNoDevelopmentParts(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	forbidden := []string{
		"github.com/mcp-gateway/gateway/internal/demo",
		"github.com/mcp-gateway/gateway/internal/testsupport/",
		"github.com/mcp-gateway/gateway/internal/tools/",
		"github.com/modelcontextprotocol/go-sdk/",
		"testing",
	}
	deps := strings.Fields(string(out))
	if len(deps) < 20 {
		t.Fatalf("go list -deps printed %d packages; expected the gateway's whole dependency tree", len(deps))
	}
	for _, dep := range deps {
		for _, f := range forbidden {
			if dep == strings.TrimSuffix(f, "/") || strings.HasPrefix(dep, f) {
				t.Errorf("cmd/gateway links %s", dep)
			}
		}
	}
}

// Budgets of the code's shape, which keep its rooms matching their names: no type grows past
// maxMethods methods (a type that needs more is several things), the top level of upstreams
// stays the thin registry over its rooms (backend, catalog, listen, names), and the pre-2026
// edge stays in its own package rather than in files of mcphttp.
const (
	maxMethods            = 40
	maxUpstreamsTopLevel  = 3500
	moduleRootFromCommand = "../.."
)

// TestTypesStaySmall: no type of the module, tests and test support included, has more than
// maxMethods methods (pointer and value receivers together).
func TestTypesStaySmall(t *testing.T) {
	counts := map[string]int{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(moduleRootFromCommand, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != moduleRootFromCommand && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv != nil {
				counts[filepath.Dir(path)+"."+f.Name.Name+"."+receiverName(fn.Recv.List[0].Type)]++ // a _test package is its own
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(counts) < 100 {
		t.Fatalf("found methods on %d types; expected the whole module", len(counts))
	}
	for typ, n := range counts {
		if n > maxMethods {
			t.Errorf("%s has %d methods; split it (at most %d)", strings.TrimPrefix(typ, moduleRootFromCommand+"/"), n, maxMethods)
		}
	}
}

// receiverName is the type a method's receiver names, without pointer or type parameters.
func receiverName(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.ParenExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return "?"
		}
	}
}

// TestRoomsKeepTheirSize: the top level of upstreams (non-test Go) stays within
// maxUpstreamsTopLevel lines, and mcphttp has no legacy or bridge files: the pre-2026 edge is
// mcphttp/pre2026.
func TestRoomsKeepTheirSize(t *testing.T) {
	lines := 0
	files, err := filepath.Glob(filepath.Join(moduleRootFromCommand, "upstreams", "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("upstreams: %v (%d files)", err, len(files))
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines += bytes.Count(b, []byte("\n"))
	}
	if lines > maxUpstreamsTopLevel {
		t.Errorf("upstreams has %d lines at its top level; at most %d: move per-backend, catalog or listen code to its room", lines, maxUpstreamsTopLevel)
	}
	entries, err := os.ReadDir(filepath.Join(moduleRootFromCommand, "mcphttp"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if n := e.Name(); strings.HasSuffix(n, ".go") && (strings.Contains(n, "legacy") || strings.Contains(n, "bridge")) {
			t.Errorf("mcphttp/%s: the pre-2026 edge lives in mcphttp/pre2026", n)
		}
	}
}
