package gateway

import (
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/configerr"
)

// TestClosedKeysInSchema: the mapping settings the schema closes to a set of keys (configKeys)
// take every key of the set and refuse any other, naming it, so that the schema (and the Helm
// chart's values schema derived from it) refuses exactly the misspelt keys the gateway would.
func TestClosedKeysInSchema(t *testing.T) {
	keys := configKeys()
	if len(keys) == 0 {
		t.Fatal("configKeys lists no mapping")
	}
	for path, names := range keys {
		// guardrails.rules[].arguments.detectors → a rule whose arguments (or results) set one
		// detector to off, which every detector of either direction takes.
		dir := strings.TrimSuffix(strings.TrimPrefix(path, "guardrails.rules[]."), ".detectors")
		if dir == path || len(names) == 0 {
			t.Fatalf("%s: a closed mapping this test does not know how to write", path)
		}
		check := func(name string) error {
			yaml := "server: {listen: \"127.0.0.1:0\"}\nauth: {disabled: true}\n" +
				"upstreams: [{name: a, url: \"http://127.0.0.1:1/mcp\"}]\n" +
				"guardrails: {rules: [{tools: [\"*\"], " + dir + ": {detectors: {\"" + name + "\": \"off\"}}}]}\n"
			c := newConfig()
			if err := decodeYAML(strings.NewReader(yaml), &c); err != nil {
				t.Fatal(err)
			}
			c.applyDefaults()
			return c.check(func(string) string { return "" }, checkSettings)
		}
		for _, name := range names {
			if err := check(name); err != nil {
				t.Errorf("%s: the schema lists %q, the gateway refuses it: %v", path, name, err)
			}
		}
		err := check("not-a-detector")
		want := "guardrails.rules[0]." + dir + ".detectors.not-a-detector"
		found := false
		for _, e := range configerr.List(err) {
			if p, _ := configerr.PathOf(e); p == want {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: a key the schema refuses is not refused at %s: %v", path, want, err)
		}
	}
}
