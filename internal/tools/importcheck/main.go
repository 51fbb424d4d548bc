// Command importcheck reports Go files whose imports are not in the
// repository's layout: the standard library first, then third-party modules,
// then this module's own packages, each group one block sorted by path, the
// groups separated by a blank line.
//
// gofmt sorts only within a block and goimports only splits a block that
// mixes groups, so neither notices a module import written into the
// standard-library block behind a blank line, groups in the wrong order, or
// one group spread over two blocks. `make vet` runs this command.
//
// Usage:
//
//	go run ./internal/tools/importcheck [-local module/path] [dir ...]
//
// -local defaults to the module path in ./go.mod; the directories default to
// ".". Directories named testdata or vendor, and those whose name starts with
// "." or "_", are skipped, as the go command skips them; so are generated
// files. It prints one "file:line: message" per finding and exits 1 if there
// is any.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("importcheck", flag.ContinueOnError)
	flags.SetOutput(stderr)
	local := flags.String("local", "", "import path prefix of this module's packages (default: the module path in ./go.mod)")
	if err := flags.Parse(args); err != nil {
		return 2
	}
	if *local == "" {
		mod, err := modulePath("go.mod")
		if err != nil {
			fmt.Fprintln(stderr, "importcheck:", err)
			return 2
		}
		*local = mod
	}
	dirs := flags.Args()
	if len(dirs) == 0 {
		dirs = []string{"."}
	}
	found := 0
	for _, dir := range dirs {
		err := walk(dir, func(path string) error {
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			findings, err := check(path, src, *local)
			if err != nil {
				return err
			}
			for _, f := range findings {
				fmt.Fprintln(stdout, f)
			}
			found += len(findings)
			return nil
		})
		if err != nil {
			fmt.Fprintln(stderr, "importcheck:", err)
			return 2
		}
	}
	if found > 0 {
		return 1
	}
	return 0
}

// modulePath reads the module directive of a go.mod file.
func modulePath(gomod string) (string, error) {
	f, err := os.Open(gomod)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module"); ok && rest != "" && (rest[0] == ' ' || rest[0] == '\t') {
			return strings.Trim(strings.TrimSpace(rest), `"`), nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("%s: no module directive", gomod)
}

// walk calls fn for every .go file under root that the go command would
// build or test.
func walk(root string, fn func(path string) error) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !strings.HasSuffix(name, ".go") || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
			return nil
		}
		return fn(path)
	})
}

// group is an import's place in the layout, in the order the groups appear.
type group int

const (
	groupStd group = iota
	groupThirdParty
	groupLocal
)

func (g group) String() string {
	switch g {
	case groupStd:
		return "standard library"
	case groupThirdParty:
		return "third-party"
	default:
		return "module"
	}
}

// groupOf classifies an import path the way goimports does: a first element
// without a dot is the standard library.
func groupOf(path, local string) group {
	if path == local || strings.HasPrefix(path, local+"/") {
		return groupLocal
	}
	first, _, _ := strings.Cut(path, "/")
	if strings.Contains(first, ".") {
		return groupThirdParty
	}
	return groupStd
}

// spec is one import with what the checks need to know about it.
type spec struct {
	path  string
	group group
	line  int // line of the import path
	block int // index of its run of imports: a new declaration or a blank line starts a new one
}

// check returns the findings for one file's source. Files marked as
// generated have none.
func check(filename string, src []byte, local string) ([]string, error) {
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, filename, src, parser.ImportsOnly|parser.ParseComments)
	if err != nil {
		return nil, err
	}
	if ast.IsGenerated(file) {
		return nil, nil
	}
	specs, err := collect(fset, file, src, local)
	if err != nil {
		return nil, err
	}
	var out []string
	report := func(s spec, format string, args ...any) {
		out = append(out, fmt.Sprintf("%s:%d: %s", filename, s.line, fmt.Sprintf(format, args...)))
	}
	for i := 1; i < len(specs); i++ {
		prev, cur := specs[i-1], specs[i]
		switch {
		case cur.group < prev.group:
			report(cur, "%q (%s) comes after %q (%s): standard library first, then third-party, then module (%s)", cur.path, cur.group, prev.path, prev.group, local)
		case cur.group > prev.group && cur.block == prev.block:
			report(cur, "%q (%s) is in one block with %q (%s): separate the groups with a blank line", cur.path, cur.group, prev.path, prev.group)
		case cur.group == prev.group && cur.block != prev.block:
			report(cur, "%q is split from the other %s imports above it: one block per group", cur.path, cur.group)
		case cur.group == prev.group && cur.path < prev.path:
			report(cur, "%q is not sorted: it belongs before %q", cur.path, prev.path)
		}
	}
	return out, nil
}

// collect returns the file's imports in source order, leaving out cgo's
// "C", which must stand alone.
func collect(fset *token.FileSet, file *ast.File, src []byte, local string) ([]spec, error) {
	var specs []spec
	block := -1
	for _, decl := range file.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.IMPORT {
			continue
		}
		block++
		var prevEnd token.Pos
		for _, s := range gd.Specs {
			is := s.(*ast.ImportSpec)
			path, err := strconv.Unquote(is.Path.Value)
			if err != nil {
				return nil, fmt.Errorf("%s: import path %s: %w", fset.Position(is.Pos()), is.Path.Value, err)
			}
			if path == "C" {
				prevEnd = token.NoPos
				block++
				continue
			}
			start := is.Pos()
			if is.Doc != nil {
				start = is.Doc.Pos()
			}
			if prevEnd.IsValid() && blankLineBetween(fset, src, prevEnd, start) {
				block++
			}
			prevEnd = is.End()
			if is.Comment != nil {
				prevEnd = is.Comment.End()
			}
			specs = append(specs, spec{path: path, group: groupOf(path, local), line: fset.Position(is.Path.Pos()).Line, block: block})
		}
	}
	return specs, nil
}

// blankLineBetween reports whether a line holding only white space lies
// between the lines of from and to.
func blankLineBetween(fset *token.FileSet, src []byte, from, to token.Pos) bool {
	a, b := fset.Position(from), fset.Position(to)
	if b.Line-a.Line < 2 {
		return false
	}
	between := src[a.Offset:b.Offset]
	// Drop the rest of from's line and the start of to's line.
	if i := bytes.IndexByte(between, '\n'); i >= 0 {
		between = between[i+1:]
	}
	if i := bytes.LastIndexByte(between, '\n'); i >= 0 {
		between = between[:i]
	}
	for line := range bytes.SplitSeq(between, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			return true
		}
	}
	return false
}
