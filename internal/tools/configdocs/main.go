// Command configdocs writes the files that describe the gateway's configuration file, generated
// from its Go types, their doc comments and the defaults the code applies: the JSON Schema
// (docs/config.schema.json) and the reference of every setting (docs/configuration.md).
//
// Usage, from the repository's root or through go generate in internal/gateway:
//
//	go run ./internal/tools/configdocs [-root DIR]
//
// -root is the repository's root; by default the directory holding go.mod, found from the
// current directory upwards.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/mcp-gateway/gateway/internal/gateway"
)

func main() {
	root := flag.String("root", "", "the repository's root (default: the directory of go.mod above the current one)")
	flag.Parse()
	if err := run(*root); err != nil {
		fmt.Fprintln(os.Stderr, "configdocs:", err)
		os.Exit(1)
	}
}

func run(root string) error {
	if root == "" {
		var err error
		if root, err = moduleRoot(); err != nil {
			return err
		}
	}
	files, err := gateway.ConfigDocs(root)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(name)), files[name], 0o644); err != nil {
			return err
		}
		fmt.Println("wrote", name)
	}
	return nil
}

// moduleRoot is the nearest directory at or above the current one that holds go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the current directory")
		}
		dir = parent
	}
}
