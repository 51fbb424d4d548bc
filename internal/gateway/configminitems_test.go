package gateway

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/schemawalk"
)

// emptyListRefusals are the lists the gateway refuses when written empty, by schema path ([]
// for a list's entries), each with a configuration (on top of minimalBase) that writes it
// non-empty; "[]" in it is replaced by an empty list.
var emptyListRefusals = map[string]struct{ good, empty string }{
	"interceptors[].rules": {
		`interceptors: [{name: i, url: "http://127.0.0.1:1/mcp", type: validation, rules: [{tools: ["*"]}]}]`,
		`interceptors: [{name: i, url: "http://127.0.0.1:1/mcp", type: validation, rules: []}]`,
	},
	"interceptors[].rules[].phases": {
		`interceptors: [{name: i, url: "http://127.0.0.1:1/mcp", type: validation, rules: [{tools: ["*"], phases: [request]}]}]`,
		`interceptors: [{name: i, url: "http://127.0.0.1:1/mcp", type: validation, rules: [{tools: ["*"], phases: []}]}]`,
	},
	"toolsets[].include": {
		`toolsets: [{name: ro, include: [{upstream: a}]}]`,
		`toolsets: [{name: ro, include: []}]`,
	},
}

// TestSchemaMinItemsAreRefusals: the published schema says minItems exactly where the gateway
// refuses an empty list (the fields' minItems tags), so an editor flags what the gateway would
// refuse, and nothing it accepts: for each, the list written empty is refused by the loader
// and by the schema, and written with an entry is accepted by both.
func TestSchemaMinItemsAreRefusals(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(configDocsRoot, SchemaFile))
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	var found []string
	schemawalk.Walk(s, "", func(n map[string]any, path string) {
		if _, ok := n["minItems"]; ok {
			found = append(found, strings.TrimPrefix(path, "."))
		}
	})
	slices.Sort(found)
	if want := slices.Sorted(maps.Keys(emptyListRefusals)); !slices.Equal(found, want) {
		t.Errorf("the schema has minItems at %q; the refusals tested are %q", found, want)
	}

	schema := resolvedSchema(t)
	const base = `server: {listen: "127.0.0.1:0", drainDelay: 0s}
admin: {listen: "127.0.0.1:0"}
auth: {disabled: true}
upstreams: [{name: a, url: "http://127.0.0.1:1/mcp"}]
`
	load := func(src string) error {
		c := newConfig()
		if err := decodeYAML(strings.NewReader(src), &c); err != nil {
			return err
		}
		c.applyDefaults()
		return c.validate()
	}
	for path, tc := range emptyListRefusals {
		t.Run(path, func(t *testing.T) {
			good, empty := base+tc.good+"\n", base+tc.empty+"\n"
			if err := load(good); err != nil {
				t.Fatalf("the gateway refuses the list with an entry: %v", err)
			}
			if inst, err := schemaInstance([]byte(good)); err != nil || schema.Validate(inst) != nil {
				t.Fatalf("the schema refuses the list with an entry: %v", err)
			}
			key := path[strings.LastIndex(path, ".")+1:]
			if err := load(empty); err == nil || !strings.Contains(err.Error(), key) {
				t.Errorf("the gateway accepts the list empty, or does not name it: %v", err)
			}
			inst, err := schemaInstance([]byte(empty))
			if err != nil {
				t.Fatal(err)
			}
			if schema.Validate(inst) == nil {
				t.Error("the schema accepts the list empty")
			}
		})
	}
}
