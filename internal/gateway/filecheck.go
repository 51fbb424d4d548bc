package gateway

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/mcp-gateway/gateway/internal/configerr"
)

// keyFile is a setting that names a file: its key path, and the file.
type keyFile struct{ path, file string }

// tlsFiles are the file settings of the TLS block at path.
func tlsFiles(path, ca, cert, key string) []keyFile {
	return []keyFile{{path + ".caFile", ca}, {path + ".certFile", cert}, {path + ".keyFile", key}}
}

// fileErrors makes err, the failure to load the files the block at path names, precise: each
// setting whose file is missing, a directory or unreadable, at its own key path and saying what
// was expected, in place of the loader's message, which names neither the setting nor what it
// wanted. When every file opens, what is wrong is their content, and the loader's message at
// path says so. Only a load that failed is looked into, so nothing is refused that serve, which
// runs the same loaders, would accept.
func fileErrors(path string, files []keyFile, err error) []error {
	if err == nil {
		return nil
	}
	var out []error
	for _, f := range files {
		if f.file == "" {
			continue
		}
		if p := fileProblem(f.file); p != "" {
			out = append(out, configerr.At(f.path, "%s", p))
		}
	}
	if len(out) > 0 || halfPair(files) {
		return out
	}
	return []error{configerr.At(path, "%w", err)}
}

// halfPair reports whether files name a certificate without its key or a key without its
// certificate: the settings' check already says they go together, and the loader's failure to
// open the one not set ("open : no such file or directory") is only a consequence.
func halfPair(files []keyFile) bool {
	var cert, key *keyFile
	for i, f := range files {
		switch {
		case strings.HasSuffix(f.path, ".certFile"):
			cert = &files[i]
		case strings.HasSuffix(f.path, ".keyFile"):
			key = &files[i]
		}
	}
	return cert != nil && key != nil && (cert.file == "") != (key.file == "")
}

// fileProblem says why file cannot be read as a file, or "" when it can.
func fileProblem(file string) string {
	f, err := os.Open(file)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return fmt.Sprintf("%s: %v: want a readable file", file, pe.Err)
		}
		return err.Error()
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return file + " is a directory: want a file"
	}
	return ""
}
