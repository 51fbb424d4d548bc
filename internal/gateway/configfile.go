package gateway

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"slices"
	"strings"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/configerr"
	"github.com/mcp-gateway/gateway/internal/configyaml"
)

// source is the configuration file the settings were read from and the line of each key path it
// sets, so that a problem found later, by validation or by reading a secret, points at its line;
// and the problems found while reading the file, the environment and the flags, which the check
// reports with every other problem, in the same pass.
type source struct {
	file string
	// sum is the SHA-256 of the file as read; nil without a file.
	sum      []byte
	lines    configyaml.Lines
	decoded  *configyaml.Decoded
	problems []error
	// overridden is set when a variable or flag could not be applied: a setting it was meant to
	// change, anywhere, is in doubt.
	overridden bool
	// nothingGiven is set when no file, variable or flag was given: the check says how to give
	// a configuration, beside what is missing.
	nothingGiven bool
	// overrides are the key paths an MCPGW_* variable or a flag set, each with its name: a
	// problem with such a setting is the variable's or flag's, not the file's line.
	overrides map[string]string
}

// setBy records that the variable or flag by set the setting at path.
func (s *source) setBy(path, by string) {
	if path == "" {
		return
	}
	if s.overrides == nil {
		s.overrides = map[string]string{}
	}
	s.overrides[path] = by
}

// overrideOf is the variable or flag that set the setting err is about, or "".
func (s source) overrideOf(err error) string {
	p, ok := configerr.PathOf(err)
	if !ok {
		return ""
	}
	return s.overrides[p]
}

// errNothingGiven is the check's advice to someone who gave no configuration at all.
var errNothingGiven = errors.New("no configuration given: pass --config FILE (docs/examples/gateway.yaml in the repository is a " +
	"starter), or try it on loopback with --upstream NAME=URL --no-auth; 'gateway --help' lists the commands and flags")

// consequence reports whether err may be a consequence of a problem already reported while
// reading: it is about a setting in a block the file could not all be read into (a misspelt
// url, then no url), or a variable or flag could not be applied.
func (s source) consequence(err error) bool {
	if s.overridden {
		return true
	}
	p, ok := configerr.PathOf(err)
	return ok && s.decoded != nil && len(s.problems) > 0 && s.decoded.Covers(p)
}

// yamlOptions says what the gateway's own value types look like, where their Go kind says too
// little.
func yamlOptions() configyaml.Options {
	return configyaml.Options{Expect: map[reflect.Type]string{
		reflect.TypeFor[Secret]():            "a secret: {file: PATH}, {env: NAME} or (for development) {value: …}",
		reflect.TypeFor[authz.ConfirmMode](): "true (the client's form), false, form or url (the approval page)",
	}}
}

// decodeYAML reads one YAML document into c strictly (configyaml.Decode): a misspelt key must
// not silently leave a security setting at its default, and no error quotes a value, which may
// be a secret. Every problem is returned at once, and also kept in c, which holds every value
// that could be read, for check to report with the configuration's other problems.
func decodeYAML(r io.Reader, c *Config) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	decoded, err := configyaml.Decode(data, c, yamlOptions())
	if decoded != nil {
		c.src.decoded, c.src.lines = decoded, decoded.Lines
		c.src.problems = append(c.src.problems, configerr.List(err)...)
	}
	if err != nil {
		return c.src.locate(err)
	}
	return nil
}

// loadFile reads the configuration file at path into c. A file that is not one YAML document is
// an error at once; problems with its settings are kept in c for check to report with the rest.
func loadFile(path string, c *Config) error {
	b, err := readConfigFile(path)
	if err != nil {
		return err
	}
	c.src.file = path
	sum := sha256.Sum256(b)
	c.src.sum = sum[:]
	if err := decodeYAML(bytes.NewReader(b), c); err != nil && c.src.decoded == nil {
		return fmt.Errorf("%s is not a valid configuration:\n%w", path, err)
	}
	if c.src.decoded != nil && c.src.decoded.Empty {
		// Said once, rather than as every setting the file should have had: a file left empty
		// (a ConfigMap not rendered, the wrong path) is the mistake, not each missing setting.
		return fmt.Errorf("%s is empty: it holds no settings, only blank lines or comments (docs/examples/gateway.yaml "+
			"in the repository is a starter)", path)
	}
	return nil
}

// maxConfigBytes bounds what is read of the configuration file. A configuration is kilobytes; a
// path that names something else (a device, a log, an image) must not take the process's memory,
// least of all on a reload, where the running configuration is to stay.
const maxConfigBytes = 32 << 20

// readConfigFile reads the configuration file at path, refusing one larger than maxConfigBytes
// after reading no more than that.
func readConfigFile(path string) ([]byte, error) {
	b, err := readAtMost(path, maxConfigBytes)
	if errors.Is(err, errFileTooLarge) {
		return nil, fmt.Errorf("%s is larger than %d MiB: a configuration is a few kilobytes (is it the right file?)",
			path, maxConfigBytes>>20)
	}
	return b, err
}

// errFileTooLarge is readAtMost's refusal of a file larger than its bound.
var errFileTooLarge = errors.New("larger than its bound")

// readAtMost reads the file at path, reading no more than limit bytes and one, and refuses it
// with errFileTooLarge when it holds more than limit.
func readAtMost(path string, limit int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return nil, err
	}
	if len(b) > limit {
		return nil, errFileTooLarge
	}
	return b, nil
}

// locate puts the file and line in front of each problem in err that names a setting the file
// sets ("gateway.yaml:12: upstreams[1].url: …"), in the order of the file, and leaves the others
// as they are, after them (a setting from a flag or the environment, or left at its default).
func (s source) locate(err error) error {
	type located struct {
		line int
		err  error
	}
	var out []located
	for _, p := range configerr.List(err) {
		line := s.lineOf(p)
		if by := s.overrideOf(p); by != "" {
			// The file's line holds a value that was replaced: it is not where to look.
			line = 0
			p = fmt.Errorf("%w (set by %s)", p, by)
		}
		if line == 0 && s.fromFlags(p) {
			p = fmt.Errorf("%w (a backend given by --upstream or MCPGW_UPSTREAMS)", p)
		}
		if line > 0 {
			where := fmt.Sprintf("line %d", line)
			if s.file != "" {
				where = fmt.Sprintf("%s:%d", s.file, line)
			}
			p = fmt.Errorf("%s: %w", where, p)
		}
		out = append(out, located{line, p})
	}
	slices.SortStableFunc(out, func(a, b located) int {
		return cmp.Compare(cmp.Or(a.line, math.MaxInt), cmp.Or(b.line, math.MaxInt))
	})
	errs := make([]error, len(out))
	for i, l := range out {
		errs[i] = l.err
	}
	return errors.Join(errs...)
}

// lineOf is the line of the setting err names: where the file was read wrong, or the line of
// its key path; 0 when the file does not set it.
func (s source) lineOf(err error) int {
	var ce *configerr.Error
	if !errors.As(err, &ce) {
		return 0
	}
	if ce.Line > 0 {
		return ce.Line
	}
	return s.lineOfPath(ce.Path)
}

// lineOf is the line of path in the file, or of the nearest enclosing setting the file sets
// (a missing key is reported at its block); 0 when the file sets none of it. A list entry the
// file does not have (a backend added by --upstream) is not the file's: its problems are not put
// at the line of the file's list.
func (s source) lineOfPath(path string) int {
	for path != "" {
		if l, ok := s.lines[path]; ok {
			return l
		}
		i := max(strings.LastIndexByte(path, '.'), strings.LastIndexByte(path, '['))
		if i <= 0 || path[i] == '[' {
			return 0
		}
		path = path[:i]
	}
	return 0
}

// fromFlags reports whether err is about a backend the file does not list: one --upstream or
// MCPGW_UPSTREAMS added after the file's.
func (s source) fromFlags(err error) bool {
	p, ok := configerr.PathOf(err)
	if !ok || !strings.HasPrefix(p, "upstreams[") {
		return false
	}
	entry, _, _ := strings.Cut(p, "]")
	_, inFile := s.lines[entry+"]"]
	return !inFile
}
