package mcphttp

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestArchitectureStages keeps docs/architecture.md "The request pipeline" and the code in step:
// every request.method the table names exists, request.run declares the stages in the table's
// order, and every "stage N" a comment of this package cites is a row of the table.
func TestArchitectureStages(t *testing.T) {
	doc, err := os.ReadFile("../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	methods := map[string]bool{}
	var run *ast.FuncDecl
	var files []*ast.File
	paths, _ := filepath.Glob("*.go")
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv == nil {
				continue
			}
			if star, ok := fd.Recv.List[0].Type.(*ast.StarExpr); ok {
				if id, ok := star.X.(*ast.Ident); ok && id.Name == "request" {
					methods[fd.Name.Name] = true
					if fd.Name.Name == "run" {
						run = fd
					}
				}
			}
		}
	}

	// The table: "| N | stage | where | ... |".
	row := regexp.MustCompile(`(?m)^\| (\d+) \| ([^|]+) \| ([^|]+) \|`)
	named := regexp.MustCompile("`request\\.(\\w+)`")
	stages := 0
	for _, m := range row.FindAllStringSubmatch(string(doc), -1) {
		n, _ := strconv.Atoi(m[1])
		if n != stages+1 {
			t.Fatalf("the pipeline table has stage %d after %d", n, stages)
		}
		stages = n
		for _, mm := range named.FindAllStringSubmatch(m[3], -1) {
			if !methods[mm[1]] {
				t.Errorf("stage %d (%s) names request.%s, which does not exist", n, strings.TrimSpace(m[2]), mm[1])
			}
		}
	}
	if stages < 11 {
		t.Fatalf("the pipeline table has %d stages", stages)
	}

	// request.run declares each stage, in order.
	if run == nil {
		t.Fatal("request.run not found")
	}
	declared := regexp.MustCompile(`^// Stages? (\d+)(?: to (\d+))?:`)
	next := 1
	for _, f := range files {
		for _, cg := range f.Comments {
			if cg.Pos() < run.Body.Lbrace || cg.End() > run.Body.Rbrace {
				continue
			}
			m := declared.FindStringSubmatch(cg.List[0].Text)
			if m == nil {
				continue
			}
			from, _ := strconv.Atoi(m[1])
			to := from
			if m[2] != "" {
				to, _ = strconv.Atoi(m[2])
			}
			if from != next {
				t.Errorf("request.run declares stage %d where stage %d comes next", from, next)
			}
			next = to + 1
		}
	}
	if next != stages+1 {
		t.Errorf("request.run declares stages up to %d; the table has %d", next-1, stages)
	}

	// Every stage a comment cites is in the table.
	cited := regexp.MustCompile(`(?i)\bstages? (\d+)(?: (?:to|and) (\d+))?`)
	for _, f := range files {
		for _, cg := range f.Comments {
			for _, m := range cited.FindAllStringSubmatch(cg.Text(), -1) {
				for _, s := range m[1:] {
					if n, err := strconv.Atoi(s); err == nil && (n < 1 || n > stages) {
						t.Errorf("%s cites stage %d, which docs/architecture.md does not define",
							fset.Position(cg.Pos()), n)
					}
				}
			}
		}
	}
}
