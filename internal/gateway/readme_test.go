package gateway

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// yamlBlock returns the first ```yaml block after heading in the README.
func yamlBlock(t *testing.T, readme, heading string) string {
	t.Helper()
	i := strings.Index(readme, heading)
	if i < 0 {
		t.Fatalf("README has no %q", heading)
	}
	j := strings.Index(readme[i:], "```yaml\n")
	k := strings.Index(readme[i+j+8:], "```")
	if j < 0 || k < 0 {
		t.Fatalf("no yaml block after %q", heading)
	}
	return readme[i+j+8 : i+j+8+k]
}

// TestReadmeExamples: the configuration reference and the policy example in the README are
// accepted by the gateway's own loader, so the documentation cannot drift from the code.
func TestReadmeExamples(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	file := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(file, []byte(yamlBlock(t, readme, "### Configuration reference")), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := loadStatic([]string{"--config", file}) // its secret files are examples
	if err != nil {
		t.Fatalf("the README's configuration reference is refused: %v", err)
	}
	var policy Config
	if err := decodeYAML(bytes.NewReader([]byte(yamlBlock(t, readme, "### Policy"))), &policy); err != nil {
		t.Fatalf("the README's policy example does not decode: %v", err)
	}
	if len(policy.Auth.Policy.Rules) == 0 {
		t.Fatal("the README's policy example has no rules")
	}
	cfg.Auth.Policy = policy.Auth.Policy
	if err := cfg.validate(); err != nil {
		t.Fatalf("the README's policy example is refused: %v", err)
	}
}

// TestReadmeDefaults: every value the README's configuration reference shows for a setting
// that has a default is that default, as the code applies it (configDefaults), unless the line
// says it is an example; and the defaults the flag table names are the code's. A default
// changed in the code without the README fails here.
func TestReadmeDefaults(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(yamlBlock(t, readme, "### Configuration reference")), &doc); err != nil {
		t.Fatal(err)
	}
	defaults := configDefaults()
	checked := 0
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		switch n.Kind {
		case yaml.DocumentNode:
			walk(n.Content[0], path)
		case yaml.SequenceNode:
			if d, ok := defaults[path]; ok {
				checked += checkDefault(t, n, path, d)
				return
			}
			for _, item := range n.Content {
				walk(item, path+"[]")
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				p := k.Value
				if path != "" {
					p = path + "." + k.Value
				}
				if strings.Contains(k.LineComment+v.LineComment, "example") {
					continue
				}
				walk(v, p)
			}
		case yaml.ScalarNode:
			if d, ok := defaults[path]; ok {
				checked += checkDefault(t, n, path, d)
			}
		}
	}
	walk(&doc, "")
	if checked < 60 {
		t.Errorf("only %d defaults checked: the walk lost the reference", checked)
	}
	for flag, path := range map[string]string{"--listen ADDR": "server.listen", "--admin-listen ADDR": "admin.listen", "`MCPGW_PATH`": "server.path"} {
		row := regexp.MustCompile(`(?m)^\|[^\n]*` + regexp.QuoteMeta(flag) + `[^\n]*\(default ` + "`([^`]*)`")
		m := row.FindStringSubmatch(readme)
		if m == nil {
			t.Errorf("the README's flag table gives no default for %s", flag)
		} else if m[1] != defaults[path] {
			t.Errorf("the README's flag table says %s defaults to %q; the code's default is %q", flag, m[1], defaults[path])
		}
	}
}

// checkDefault compares the README's value n of path with the code's default d, in d's type;
// it returns 1, one default checked.
func checkDefault(t *testing.T, n *yaml.Node, path string, d any) int {
	t.Helper()
	got := reflect.New(reflect.TypeOf(d))
	if err := n.Decode(got.Interface()); err != nil {
		t.Errorf("README line %d: %s: %v", n.Line, path, err)
		return 1
	}
	if !reflect.DeepEqual(got.Elem().Interface(), d) {
		t.Errorf("README line %d: %s is shown as %v; the code's default is %v (mark the line \"example\" if it is one)",
			n.Line, path, got.Elem().Interface(), d)
	}
	return 1
}
