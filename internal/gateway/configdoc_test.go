package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"go.yaml.in/yaml/v3"
)

// starterConfig is the commented starter configuration the docs point to.
const starterConfig = "docs/examples/gateway.yaml"

// TestConfigDocsGenerated: the JSON Schema and the configuration reference in docs/ are what
// the code generates from the configuration's types, doc comments and defaults today (run go
// generate ./internal/gateway after changing any of them).
func TestConfigDocsGenerated(t *testing.T) {
	files, err := ConfigDocs(configDocsRoot)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(configDocsRoot, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is not what the code generates: run go generate ./internal/gateway", name)
		}
	}
}

// resolvedSchema is the checked-in JSON Schema, ready to validate.
func resolvedSchema(t *testing.T) *jsonschema.Resolved {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(configDocsRoot, SchemaFile))
	if err != nil {
		t.Fatal(err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	r, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("the schema does not resolve: %v", err)
	}
	return r
}

// schemaInstance reads one YAML document as the JSON value a schema validates; a file that is
// not exactly one document is an error, as it is to an editor.
func schemaInstance(src []byte) (any, error) {
	var v any
	dec := yaml.NewDecoder(bytes.NewReader(src))
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if err := dec.Decode(new(any)); !errors.Is(err, io.EOF) {
		return nil, errors.New("more than one YAML document")
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var inst any
	return inst, json.Unmarshal(b, &inst)
}

// docExample is one YAML example of the documentation.
type docExample struct {
	where string
	src   []byte
}

// docExamples extracts every YAML example of the README and docs/: the ```yaml blocks of the
// Markdown files and the files of docs/examples.
func docExamples(t *testing.T) []docExample {
	t.Helper()
	mds, err := filepath.Glob(filepath.Join(configDocsRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	var out []docExample
	for _, md := range append([]string{filepath.Join(configDocsRoot, "README.md"), filepath.Join(configDocsRoot, "SECURITY.md")}, mds...) {
		raw, err := os.ReadFile(md)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(raw), "\n")
		for i := 0; i < len(lines); i++ {
			if strings.TrimSpace(lines[i]) != "```yaml" {
				continue
			}
			start := i + 1
			for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			}
			out = append(out, docExample{where: filepath.Base(md) + ":" + strconv.Itoa(start+1), src: []byte(strings.Join(lines[start:i], "\n"))})
		}
	}
	files, err := filepath.Glob(filepath.Join(configDocsRoot, "docs", "examples", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, docExample{where: "docs/examples/" + filepath.Base(f), src: raw})
	}
	return out
}

// gatewayPart is the part of an example that is a gateway configuration: the example itself,
// the config: block of Helm values (which the chart passes through; an example of values has
// config: or secrets: at the top, or a first line naming a values file), or nothing for a pins
// lock file.
func gatewayPart(src []byte) ([]byte, bool, error) {
	var top map[string]any
	if err := yaml.Unmarshal(src, &top); err != nil {
		return nil, false, err
	}
	first, _, _ := strings.Cut(strings.TrimSpace(string(src)), "\n")
	helmValues := strings.HasPrefix(first, "#") && strings.Contains(first, "values")
	_, version := top["version"]
	_, backends := top["backends"]
	if version && backends {
		return nil, false, nil // a pins lock file, checked by internal/pins
	}
	_, config := top["config"]
	_, secrets := top["secrets"]
	if !config && !secrets && !helmValues {
		return src, true, nil
	}
	if !config {
		return nil, false, nil // Helm values without a gateway configuration
	}
	b, err := yaml.Marshal(top["config"])
	return b, true, err
}

// TestDocExamplesMatchSchema: every YAML example of the documentation that is (or holds) a
// gateway configuration is valid under the published JSON Schema and is read by the gateway's
// own loader, so the examples, the schema and the code agree.
func TestDocExamplesMatchSchema(t *testing.T) {
	schema := resolvedSchema(t)
	checked := 0
	for _, ex := range docExamples(t) {
		part, ok, err := gatewayPart(ex.src)
		if err != nil {
			t.Errorf("%s: not YAML: %v", ex.where, err)
			continue
		}
		if !ok {
			continue
		}
		checked++
		inst, err := schemaInstance(part)
		if err != nil {
			t.Errorf("%s: %v", ex.where, err)
			continue
		}
		if err := schema.Validate(inst); err != nil {
			t.Errorf("%s: the schema refuses it: %v", ex.where, err)
		}
		c := newConfig()
		if err := decodeYAML(bytes.NewReader(part), &c); err != nil {
			t.Errorf("%s: the gateway refuses it: %v", ex.where, err)
		}
	}
	if checked < 15 {
		t.Errorf("only %d examples checked: the extraction lost some", checked)
	}
}

// TestSchemaRefusesWhatTheLoaderRefuses: every configuration of the corpus the gateway's loader
// refuses while reading the file (unknown keys in list entries too, values of the wrong type, a
// secret written as a plain string) the schema refuses as well, so an editor flags it.
func TestSchemaRefusesWhatTheLoaderRefuses(t *testing.T) {
	schema := resolvedSchema(t)
	n := 0
	for _, c := range readCorpus(t) {
		src := []byte(c.files["config.yaml"])
		cfg := newConfig()
		if decodeYAML(bytes.NewReader(src), &cfg) == nil {
			continue
		}
		n++
		inst, err := schemaInstance(src)
		if err != nil {
			continue // not YAML at all, or a key twice: an editor's YAML parser flags it
		}
		if schema.Validate(inst) == nil {
			t.Errorf("%s (%s): the loader refuses it, the schema accepts it", c.name, c.what)
		}
	}
	if n < 8 {
		t.Errorf("only %d corpus cases fail while reading", n)
	}
}

// TestStarterConfig: the starter configuration passes check-config with the two secrets it
// reads from the environment, and every setting in it is explained by a comment on its line or
// the line above.
func TestStarterConfig(t *testing.T) {
	file := filepath.Join(configDocsRoot, starterConfig)
	env := map[string]string{"MCPGW_MRTR_KEY": "0123456789abcdef0123456789abcdef", "GITHUB_MCP_TOKEN": "Bearer t0ken"}
	if code, out, errOut := runMain([]string{"check-config", "--config", file}, env); code != 0 {
		t.Fatalf("check-config refuses the starter configuration: exit %d\n%s%s", code, out, errOut)
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(raw), "\n")
	setting := regexp.MustCompile(`^\s*(- )?[A-Za-z{]`)
	for i, l := range lines {
		if !setting.MatchString(l) || strings.Contains(l, "#") {
			continue
		}
		if i > 0 && strings.HasPrefix(strings.TrimSpace(lines[i-1]), "#") {
			continue
		}
		t.Errorf("%s:%d has no comment: %s", starterConfig, i+1, l)
	}
	// The legacy: block's comment says which clients it serves: every revision served by default.
	c := newConfig()
	c.applyDefaults()
	legacy := regexp.MustCompile(`(?m)^legacy:.*$`).FindString(string(raw))
	for _, v := range c.Legacy.Versions {
		if !strings.Contains(legacy, v) {
			t.Errorf("%s: the legacy: block's comment does not name %s, which it serves: %s", starterConfig, v, legacy)
		}
	}
}

// TestDocumentedDefaultsHaveValues: a setting whose description says its default by a Go
// constant's name (Default DefaultTimeout, Zero means DefaultTokenTimeout) has its value in
// the reference's default column, so an operator reads "2s", not a name in the source. A block
// added without its defaults in configDefaults fails here. The settings listed are the ones
// whose default is not one value.
func TestDocumentedDefaultsHaveValues(t *testing.T) {
	notOneValue := map[string]string{
		"rateLimit.lease":         "min(DefaultLeaseMax, burst ÷ 8), per limit",
		"pins.backends.*.actions": "pins.actions, for every backend without its own",
	}
	raw, err := os.ReadFile(filepath.Join(configDocsRoot, ReferenceFile))
	if err != nil {
		t.Fatal(err)
	}
	constName := regexp.MustCompile(`\b(?:[a-z]+\.)?Default[A-Z][A-Za-z]*\b`)
	rows := 0
	for _, line := range strings.Split(string(raw), "\n") {
		cells := strings.Split(line, "|")
		if !strings.HasPrefix(line, "| `") || len(cells) < 6 {
			continue
		}
		rows++
		key, def, desc := strings.Trim(strings.TrimSpace(cells[1]), "`"), strings.TrimSpace(cells[3]), cells[4]
		name := constName.FindString(desc)
		if name == "" || def != "" {
			continue
		}
		if _, ok := notOneValue[key]; !ok {
			t.Errorf("%s: described as defaulting to %s, but the reference shows no default (add it to configDefaults)", key, name)
		}
	}
	if rows < 200 {
		t.Fatalf("read %d rows of docs/configuration.md: the table's layout changed", rows)
	}
	for key := range notOneValue {
		if !strings.Contains(string(raw), "| `"+key+"` |") {
			t.Errorf("%s is no setting of the reference any more", key)
		}
	}
}
