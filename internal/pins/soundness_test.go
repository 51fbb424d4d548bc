package pins

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// TestSchemaClassSoundness checks the classifier's promise against a real JSON Schema
// validator: whenever a change is not classed input-schema-widened, every instance the new
// schema accepts was accepted by the old one; and when it is classed neither widened nor
// narrowed, both accept exactly the same instances. Schemas are random combinations of the
// changes a backend makes; instances are random argument objects.
func TestSchemaClassSoundness(t *testing.T) {
	base := `{"type":"object","properties":{"path":{"type":"string","enum":["a","b","abc"],"maxLength":3,"description":"p"},"n":{"type":"integer","minimum":0}},"required":["path"],"additionalProperties":false}`
	mutations := []func(s map[string]any){
		func(s map[string]any) { props(s)["cmd"] = map[string]any{"type": "string"} },
		func(s map[string]any) { delete(props(s), "n") },
		func(s map[string]any) { s["required"] = append(req(s), "n") },
		func(s map[string]any) { s["required"] = []any{} },
		func(s map[string]any) { s["additionalProperties"] = true },
		func(s map[string]any) { delete(s, "additionalProperties") },
		func(s map[string]any) { s["additionalProperties"] = map[string]any{"type": "string"} },
		func(s map[string]any) { prop(s, "path")["type"] = []any{"string", "null"} },
		func(s map[string]any) { prop(s, "path")["type"] = "integer" },
		func(s map[string]any) { delete(prop(s, "path"), "type") },
		func(s map[string]any) { prop(s, "path")["enum"] = []any{"a", "b", "abc", "c"} },
		func(s map[string]any) { prop(s, "path")["enum"] = []any{"a"} },
		func(s map[string]any) { delete(prop(s, "path"), "enum") },
		func(s map[string]any) { prop(s, "path")["maxLength"] = 1.0 },
		func(s map[string]any) { prop(s, "path")["maxLength"] = 10.0 },
		func(s map[string]any) { delete(prop(s, "path"), "maxLength") },
		func(s map[string]any) { prop(s, "path")["pattern"] = "^a" },
		func(s map[string]any) { prop(s, "path")["description"] = "changed" },
		func(s map[string]any) { prop(s, "n")["minimum"] = -5.0 },
		func(s map[string]any) { prop(s, "n")["minimum"] = 5.0 },
		func(s map[string]any) { delete(prop(s, "n"), "minimum") },
		func(s map[string]any) { prop(s, "n")["maximum"] = 3.0 },
		func(s map[string]any) { prop(s, "n")["type"] = "number" },
		func(s map[string]any) { prop(s, "n")["type"] = []any{"integer", "string"} },
		func(s map[string]any) { s["minProperties"] = 2.0 },
		func(s map[string]any) { s["type"] = []any{"object", "null"} },
		func(s map[string]any) { s["allOf"] = []any{map[string]any{"required": []any{"n"}}} },
		func(s map[string]any) { s["not"] = map[string]any{"required": []any{"n"}} },
		func(s map[string]any) {
			prop(s, "path")["anyOf"] = []any{map[string]any{"type": "string"}, map[string]any{"type": "integer"}}
		},
		func(s map[string]any) { s["patternProperties"] = map[string]any{"^x$": map[string]any{}} },
		func(s map[string]any) { s["if"] = map[string]any{"required": []any{"n"}} },
		func(s map[string]any) { s["then"] = map[string]any{"required": []any{"cmd"}} },
		func(s map[string]any) {
			s["else"] = map[string]any{"properties": map[string]any{"path": map[string]any{"const": "a"}}}
		},
		func(s map[string]any) { delete(s, "properties") },
		func(s map[string]any) { s["properties"] = map[string]any{"path": map[string]any{"const": "b"}} },
		func(s map[string]any) { s["dependentRequired"] = map[string]any{"n": []any{"cmd"}} },
		func(s map[string]any) { s["propertyNames"] = map[string]any{"maxLength": 3.0} },
	}
	// Instances near the schemas' edges: each key present with its own odds and values.
	gen := []struct {
		key    string
		odds   int // present in odds/8 of the instances
		values []any
	}{
		{"path", 7, []any{"a", "b", "abc", "c", "abcd", "", 1.0, nil}},
		{"n", 4, []any{0.0, 3.0, 4.0, 7.0, -2.0, -7.0, 1.5, "a", nil}},
		{"cmd", 1, []any{"x", 1.0}},
		{"x", 1, []any{"y"}},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	instances := make([]any, 0, 600)
	for range 600 {
		obj := map[string]any{}
		for _, g := range gen {
			if rng.IntN(8) < g.odds {
				obj[g.key] = g.values[rng.IntN(len(g.values))]
			}
		}
		instances = append(instances, obj)
	}
	instances = append(instances, nil, "s", 1.0, []any{})

	old := mustSchema(t, base)
	oldRes := resolve(t, old)
	oldDef := def(t, KindTool, `{"name":"t","inputSchema":`+base+`}`)
	var notWidened, unchanged int
	for i := range 1200 {
		cur := mustSchema(t, base)
		for range 1 + rng.IntN(3) {
			mutations[rng.IntN(len(mutations))](cur)
		}
		raw, _ := json.Marshal(cur)
		s := Classify(oldDef, def(t, KindTool, `{"name":"t","inputSchema":`+string(raw)+`}`))
		if s.Has(ClassInputSchemaWidened) {
			continue
		}
		notWidened++
		same := !s.Has(ClassInputSchemaNarrowed)
		if same {
			unchanged++
		}
		curRes := resolve(t, cur)
		for _, in := range instances {
			newOK, oldOK := curRes.Validate(in) == nil, oldRes.Validate(in) == nil
			if newOK && !oldOK {
				t.Fatalf("case %d: %v, but the new schema accepts %v, which the old refused\nnew: %s", i, s, fmt.Sprint(in), raw)
			}
			if same && oldOK && !newOK {
				t.Fatalf("case %d: %v, but the new schema refuses %v, which the old accepted\nnew: %s", i, s, fmt.Sprint(in), raw)
			}
		}
	}
	if notWidened < 100 || unchanged < 10 {
		t.Fatalf("only %d not-widened cases (%d unchanged): the generator does not exercise the classifier", notWidened, unchanged)
	}
}

func mustSchema(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func resolve(t *testing.T, m map[string]any) *jsonschema.Resolved {
	t.Helper()
	raw, _ := json.Marshal(m)
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	r, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return r
}

func props(s map[string]any) map[string]any {
	p, ok := s["properties"].(map[string]any)
	if !ok {
		p = map[string]any{}
		s["properties"] = p
	}
	return p
}

func prop(s map[string]any, name string) map[string]any {
	p, ok := props(s)[name].(map[string]any)
	if !ok {
		p = map[string]any{}
		props(s)[name] = p
	}
	return p
}

func req(s map[string]any) []any { r, _ := s["required"].([]any); return r }
