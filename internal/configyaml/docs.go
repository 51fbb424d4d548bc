package configyaml

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"
)

// Docs are the doc comments of struct fields, read from Go source, by "package.Type.Field".
type Docs map[string]string

// Field returns the documentation of owner's field, as one paragraph; "" when it has none.
func (d Docs) Field(owner reflect.Type, field string) string {
	return d[owner.PkgPath()+"."+owner.Name()+"."+field]
}

// ReadDocs reads the doc comments of the struct fields of every package root's keys are declared
// in, from the source of module (its path) in the directory dir.
func ReadDocs(root reflect.Type, module, dir string) (Docs, error) {
	docs := Docs{}
	for _, pkg := range packagesOf(root) {
		rel, ok := strings.CutPrefix(pkg, module)
		if !ok {
			continue // a type of another module documents itself elsewhere
		}
		if err := readPackageDocs(docs, pkg, filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(rel, "/")))); err != nil {
			return nil, err
		}
	}
	return docs, nil
}

func readPackageDocs(docs Docs, pkg, dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	fset := token.NewFileSet()
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.ParseComments)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok {
				return true
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				return true
			}
			for _, field := range st.Fields.List {
				text := paragraph(field.Doc.Text())
				for _, name := range field.Names {
					docs[pkg+"."+ts.Name.Name+"."+name.Name] = text
				}
			}
			return true
		})
	}
	return nil
}

// paragraph joins a comment's lines into one.
func paragraph(s string) string { return strings.Join(strings.Fields(s), " ") }

// packagesOf lists the packages declaring the structs whose keys a file read into root has.
func packagesOf(root reflect.Type) []string {
	seen := map[string]bool{}
	var walk func(t reflect.Type, depth int)
	walk = func(t reflect.Type, depth int) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || selfDecoding(t) || t == reflect.TypeFor[time.Time]() || depth > maxDepth {
			return
		}
		for _, f := range Fields(t) {
			seen[f.Owner.PkgPath()] = true
			walk(f.Type, depth+1)
		}
	}
	walk(root, 0)
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}
