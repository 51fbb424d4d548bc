package mcphttp

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestArchitectureStages keeps docs/architecture.md "The request pipeline" and the declared
// pipeline in step: the doc's table lists exactly the stages of pipeline.go, by name and in
// order; every stage has a reason for its place; and no comment cites a stage by a number, as
// the pipeline once numbered them (comments name them: "stage authorize").
func TestArchitectureStages(t *testing.T) {
	doc, err := os.ReadFile("../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	var declared []string
	for _, st := range stages {
		declared = append(declared, st.name)
		if strings.TrimSpace(st.why) == "" || st.run == nil {
			t.Errorf("stage %s has no reason or no function", st.name)
		}
	}
	section := string(doc)
	if i := strings.Index(section, "## The request pipeline"); i >= 0 {
		section = section[i:]
		if j := strings.Index(section[3:], "\n## "); j >= 0 {
			section = section[:j+3]
		}
	}
	row := regexp.MustCompile("(?m)^\\| `([a-z-]+)` \\|")
	var documented []string
	for _, m := range row.FindAllStringSubmatch(section, -1) {
		documented = append(documented, m[1])
	}
	if !slices.Equal(documented, declared) {
		t.Errorf("docs/architecture.md lists the stages\n  %v\npipeline.go declares\n  %v", documented, declared)
	}

	numbered := regexp.MustCompile(`(?i)\bstages? \d`)
	fset := token.NewFileSet()
	for _, dir := range []string{".", "pre2026"} {
		paths, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, p := range paths {
			f, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			for _, cg := range f.Comments {
				text := cg.Text()
				if numbered.MatchString(text) {
					t.Errorf("%s cites a stage by number; cite it by name", fset.Position(cg.Pos()))
				}
			}
		}
	}
}

// TestStagesTakeNoServerState: a stage function reaches nothing of the HTTP exchange but through
// the request value and its Sink: none of them writes to an http.ResponseWriter itself.
func TestStagesTakeNoServerState(t *testing.T) {
	fset := token.NewFileSet()
	paths, _ := filepath.Glob("*.go")
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") || p == "client.go" {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if ok && (sel.Sel.Name == "WriteHeader" || sel.Sel.Name == "Write") {
				if id, ok := sel.X.(*ast.SelectorExpr); ok && id.Sel.Name == "w" {
					t.Errorf("%s writes to the response outside ClientSink", fset.Position(sel.Pos()))
				}
			}
			return true
		})
	}
}

// TestGuardrailsStagePlace holds the place docs/guardrails.md gives stage guardrails: after
// authorize, pin and bind-headers (a refusal reveals nothing of a tool the caller may not see)
// and before mrtr-in (a person confirms the arguments that will be forwarded, redacted).
func TestGuardrailsStagePlace(t *testing.T) {
	at := map[string]int{}
	for i, st := range stages {
		at[st.name] = i
	}
	g, ok := at["guardrails"]
	if !ok {
		t.Fatal("no stage guardrails")
	}
	for _, before := range []string{"authorize", "pin", "bind-headers"} {
		if i, ok := at[before]; !ok || i > g {
			t.Errorf("stage %s does not run before guardrails", before)
		}
	}
	if i, ok := at["mrtr-in"]; !ok || i < g {
		t.Error("stage mrtr-in does not run after guardrails")
	}
}

// TestClientBodyDecodedOnce: a client's body is decoded by stage decode alone (decodeBody, under
// the decode gate), which yields whatever the edges need of it, a pre-2026 client's answer
// included (Incoming.Answer): no other function of mcphttp or its pre-2026 edge hands a client's
// body (Incoming.Body, or the request's body field) to a jsonrpc decoder, and only decodeBody
// calls the client decoders (Decode, DecodeClient).
func TestClientBodyDecodedOnce(t *testing.T) {
	decoders := map[string]bool{"Decode": true, "DecodeClient": true, "DecodeMessage": true}
	fset := token.NewFileSet()
	for _, dir := range []string{".", "pre2026"} {
		paths, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, p := range paths {
			if strings.HasSuffix(p, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, p, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range f.Decls {
				fn, ok := d.(*ast.FuncDecl)
				if !ok || fn.Body == nil {
					continue
				}
				ast.Inspect(fn.Body, func(n ast.Node) bool {
					call, ok := n.(*ast.CallExpr)
					if !ok {
						return true
					}
					sel, ok := call.Fun.(*ast.SelectorExpr)
					if !ok {
						return true
					}
					if id, isID := sel.X.(*ast.Ident); !isID || id.Name != "jsonrpc" || !decoders[sel.Sel.Name] {
						return true
					}
					if sel.Sel.Name != "DecodeMessage" && fn.Name.Name != "decodeBody" {
						t.Errorf("%s: %s calls jsonrpc.%s: a client's body is decoded by decodeBody alone", fset.Position(call.Pos()), fn.Name.Name, sel.Sel.Name)
					}
					if fn.Name.Name != "decodeBody" && len(call.Args) > 0 && readsClientBody(call.Args[0]) {
						t.Errorf("%s: %s decodes a client's body again: take what stage decode read (Incoming.Message, Params, Answer)", fset.Position(call.Pos()), fn.Name.Name)
					}
					return true
				})
			}
		}
	}
}

// readsClientBody reports whether e reads a client's body: a call of a Body method or a field
// named body.
func readsClientBody(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		switch v := n.(type) {
		case *ast.CallExpr:
			if sel, ok := v.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Body" {
				found = true
			}
		case *ast.SelectorExpr:
			if v.Sel.Name == "body" {
				found = true
			}
		}
		return !found
	})
	return found
}
