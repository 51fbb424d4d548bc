package gateway

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
