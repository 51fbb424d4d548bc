package gateway

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"

	"github.com/mcp-gateway/gateway/internal/configerr"
	"github.com/mcp-gateway/gateway/internal/configyaml"
)

// source is the configuration file the settings were read from and the line of each key path it
// sets, so that a problem found later, by validation or by reading a secret, points at its line.
type source struct {
	file  string
	lines configyaml.Lines
}

// yamlOptions says what the gateway's own value types look like, where their Go kind says too
// little.
func yamlOptions() configyaml.Options {
	return configyaml.Options{Expect: map[reflect.Type]string{
		reflect.TypeFor[Secret](): "a secret: {file: PATH}, {env: NAME} or (for development) {value: …}",
	}}
}

// decodeYAML reads one YAML document into c strictly (configyaml.Decode): a misspelt key must
// not silently leave a security setting at its default, and no error quotes a value, which may
// be a secret. Every problem is reported at once.
func decodeYAML(r io.Reader, c *Config) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	lines, err := configyaml.Decode(data, c, yamlOptions())
	if err != nil {
		return c.src.locate(err)
	}
	c.src.lines = lines
	return nil
}

// loadFile reads the configuration file at path into c.
func loadFile(path string, c *Config) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	c.src.file = path
	if err := decodeYAML(bytes.NewReader(b), c); err != nil {
		return fmt.Errorf("%s is not a valid configuration:\n%w", path, err)
	}
	return nil
}

// locate puts the file and line in front of each problem in err that names a setting the file
// sets ("gateway.yaml:12: upstreams[1].url: …"), and leaves the others as they are (a setting
// from a flag or the environment, or left at its default).
func (s source) locate(err error) error {
	problems := configerr.List(err)
	out := make([]error, 0, len(problems))
	for _, p := range problems {
		out = append(out, s.locateOne(p))
	}
	return errors.Join(out...)
}

func (s source) locateOne(err error) error {
	var ce *configerr.Error
	if !errors.As(err, &ce) {
		return err
	}
	line := ce.Line
	if line == 0 {
		line = s.lineOf(ce.Path)
	}
	if line == 0 {
		return err
	}
	where := fmt.Sprintf("line %d", line)
	if s.file != "" {
		where = fmt.Sprintf("%s:%d", s.file, line)
	}
	return fmt.Errorf("%s: %w", where, err)
}

// lineOf is the line of path in the file, or of the nearest enclosing setting the file sets
// (a missing key is reported at its block); 0 when the file sets none of it.
func (s source) lineOf(path string) int {
	for path != "" {
		if l, ok := s.lines[path]; ok {
			return l
		}
		i := max(strings.LastIndexByte(path, '.'), strings.LastIndexByte(path, '['))
		if i <= 0 {
			return 0
		}
		path = path[:i]
	}
	return 0
}
