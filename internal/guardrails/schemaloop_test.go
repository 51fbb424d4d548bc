package guardrails

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unique"
)

// doubling is a schema whose $defs d0…d(n-1) each apply the next twice to the same value
// (allOf of two references): 2^n checks of one value against d(n).
func doubling(n int, keyword string) string {
	var b strings.Builder
	b.WriteString(`{"type":"object","$ref":"#/$defs/d0","$defs":{`)
	for i := range n {
		fmt.Fprintf(&b, `"d%d":{%q:[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]},`, i, keyword, i+1, i+1)
	}
	fmt.Fprintf(&b, `"d%d":{"type":"object"}}}`, n)
	return b.String()
}

// TestSchemaReferenceLoops: a schema that applies itself to the same value through references
// and the in-place keywords, which the validator follows until the stack is exhausted (the
// process ends, not the call), or applies one subschema to a value through more than 65536
// paths, does not compile: every check against it fails with ErrSchema, without running the
// validator. Recursion that descends into the value (a tree) compiles and validates.
func TestSchemaReferenceLoops(t *testing.T) {
	refused := map[string]string{
		"self":              `{"$ref":"#"}`,
		"self in a $def":    `{"type":"object","properties":{"x":{"$ref":"#/$defs/a"}},"$defs":{"a":{"$ref":"#/$defs/a"}}}`,
		"two $defs":         `{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}`,
		"allOf":             `{"type":"object","allOf":[{"$ref":"#"}]}`,
		"anyOf":             `{"anyOf":[{"type":"string"},{"$ref":"#"}]}`,
		"oneOf":             `{"oneOf":[{"$ref":"#"}]}`,
		"not":               `{"not":{"not":{"$ref":"#"}}}`,
		"if":                `{"if":{"$ref":"#"}}`,
		"then":              `{"if":true,"then":{"$ref":"#"}}`,
		"else":              `{"if":false,"else":{"$ref":"#"}}`,
		"dependentSchemas":  `{"dependentSchemas":{"a":{"$ref":"#"}}}`,
		"an anchor":         `{"$defs":{"a":{"$anchor":"x","allOf":[{"$ref":"#x"}]}},"$ref":"#x"}`,
		"an escaped name":   `{"$defs":{"a/b~c":{"$ref":"#/$defs/a~1b~0c"}},"$ref":"#/$defs/a~1b~0c"}`,
		"a percent-encoded": `{"$defs":{"a b":{"$ref":"#/$defs/a%20b"}},"$ref":"#/$defs/a%20b"}`,
		"an $id":            `{"$id":"https://schemas.example.com/s.json","$defs":{"a":{"$ref":"https://schemas.example.com/s.json#/$defs/a"}},"$ref":"#/$defs/a"}`,
		"a nested $id":      `{"$defs":{"a":{"$id":"https://schemas.example.com/a.json","$ref":"#"}},"$ref":"#/$defs/a"}`,
		"a $dynamicRef":     `{"$dynamicAnchor":"node","$dynamicRef":"#node"}`,
		"draft-07":          `{"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"a":{"$ref":"#/definitions/a"}},"$ref":"#/definitions/a"}`,
		"allOf fan-out":     doubling(15, "allOf"),
		"anyOf fan-out":     doubling(15, "anyOf"),
	}
	e := testEngine(t, everything("log"))
	for name, raw := range refused {
		s := e.ContentSchema(unique.Make(raw))
		if _, err := s.Validate([]byte(`{"x":{}}`)); !errors.Is(err, ErrSchema) {
			t.Errorf("%s: err %v", name, err)
		}
	}
	accepted := map[string]struct{ schema, ok, bad string }{
		"a tree": {`{"type":"object","properties":{"name":{"type":"string"},"children":{"type":"array","items":{"$ref":"#"}}}}`,
			`{"name":"a","children":[{"name":"b","children":[]}]}`, `{"children":[{"name":1}]}`},
		"a linked list through $defs": {`{"type":"object","properties":{"head":{"$ref":"#/$defs/node"}},"$defs":{"node":{"type":"object","properties":{"v":{"type":"integer"},"next":{"$ref":"#/$defs/node"}}}}}`,
			`{"head":{"v":1,"next":{"v":2}}}`, `{"head":{"next":{"v":"2"}}}`},
		"shared $defs": {`{"type":"object","allOf":[{"$ref":"#/$defs/a"},{"$ref":"#/$defs/a"}],"$defs":{"a":{"properties":{"n":{"type":"integer"}}}}}`,
			`{"n":1}`, `{"n":"1"}`},
		"a mutual recursion through properties": {`{"$defs":{"a":{"type":"object","properties":{"b":{"$ref":"#/$defs/b"}}},"b":{"type":"object","properties":{"a":{"$ref":"#/$defs/a"}}}},"$ref":"#/$defs/a"}`,
			`{"b":{"a":{"b":{}}}}`, `{"b":{"a":1}}`},
		"the fan-out's bound": {doubling(14, "allOf"), `{}`, `[]`},
		"an $id":              {`{"$id":"https://schemas.example.com/s.json","type":"object","properties":{"o":{"$ref":"#/$defs/o"}},"$defs":{"o":{"type":"string"}}}`, `{"o":"x"}`, `{"o":1}`},
		"draft-07": {`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"o":{"$ref":"#/definitions/o"}},"definitions":{"o":{"type":"string"}}}`,
			`{"o":"x"}`, `{"o":1}`},
	}
	// A large union, as a schema generated from an API's events is: 500 variants, each a
	// shared base of three references and its own properties (about 6,000 applications).
	var union strings.Builder
	union.WriteString(`{"type":"object","properties":{"event":{"anyOf":[`)
	for i := range 500 {
		if i > 0 {
			union.WriteString(",")
		}
		fmt.Fprintf(&union, `{"allOf":[{"$ref":"#/$defs/base"},{"properties":{"kind":{"const":"k%d"}}}]}`, i)
	}
	union.WriteString(`]}},"$defs":{"base":{"allOf":[{"$ref":"#/$defs/a"},{"$ref":"#/$defs/b"},{"$ref":"#/$defs/c"}]},` +
		`"a":{"type":"object"},"b":{"required":["kind"]},"c":{"properties":{"kind":{"type":"string"}}}}}`)
	accepted["a large union"] = struct{ schema, ok, bad string }{union.String(), `{"event":{"kind":"k499"}}`, `{"event":{"kind":1}}`}
	for name, c := range accepted {
		s := e.ContentSchema(unique.Make(c.schema))
		if v, err := s.Validate([]byte(c.ok)); v != nil || err != nil {
			t.Errorf("%s: %s refused: %v %v", name, c.ok, v, err)
		}
		if v, err := s.Validate([]byte(c.bad)); v == nil || err != nil {
			t.Errorf("%s: %s passed: %v", name, c.bad, err)
		}
	}
}

// nested is {"x":{"x":…{}}}, depth deep.
func nested(depth int) string {
	return strings.Repeat(`{"x":`, depth) + `{}` + strings.Repeat(`}`, depth)
}

// TestSchemaValueChecksCounted: a schema that applies one subschema to a part of a value
// through two paths at each level costs 2^depth checks of a value nested depth deep, whether
// it recurses or spells out its levels; such a value is refused, without running the
// validator, past a bound proportional to its size, and a shallow one is validated. Recursive
// schemas of one path a level validate large values. Before, a value 40 deep held the
// validator for hours.
func TestSchemaValueChecksCounted(t *testing.T) {
	var levels strings.Builder
	levels.WriteString(`{"type":"object","$ref":"#/$defs/d0","$defs":{`)
	for i := range 40 {
		fmt.Fprintf(&levels, `"d%d":{"allOf":[{"properties":{"x":{"$ref":"#/$defs/d%d"}}},{"properties":{"x":{"$ref":"#/$defs/d%d"}}}]},`, i, i+1, i+1)
	}
	levels.WriteString(`"d40":{"type":"object"}}}`)
	multiplying := map[string]string{
		"recursive": `{"type":"object","allOf":[{"$ref":"#/$defs/n"},{"$ref":"#/$defs/n"}],"$defs":{"n":{"properties":{"x":{"$ref":"#"}}}}}`,
		"levels":    levels.String(),
		"items":     `{"anyOf":[{"type":"object","properties":{"x":{"$ref":"#"}}},{"type":"object","additionalProperties":{"$ref":"#"}}]}`,
	}
	e := testEngine(t, everything("log"))
	for name, raw := range multiplying {
		s := e.ContentSchema(unique.Make(raw))
		if v, err := s.Validate([]byte(nested(40))); err != nil || v == nil || !strings.Contains(v.Problem, "more checks") {
			t.Errorf("%s: 40 deep: %v %v", name, v, err)
		}
		if v, err := s.Validate([]byte(nested(3))); err != nil || v != nil {
			t.Errorf("%s: 3 deep: %v %v", name, v, err)
		}
	}
	// At the bound: the recursive schema checks a value nested d deep 12·2^d − 7 times, against
	// a bound of 65,536 + 256 a value (d+1 values): 49,145 at 12 deep pass, 98,297 at 13 not.
	s := e.ContentSchema(unique.Make(multiplying["recursive"]))
	if v, err := s.Validate([]byte(nested(12))); err != nil || v != nil {
		t.Errorf("12 deep: %v %v", v, err)
	}
	if v, err := s.Validate([]byte(nested(13))); err != nil || v == nil || !strings.Contains(v.Problem, "more checks") {
		t.Errorf("13 deep: %v %v", v, err)
	}
	// A JSON value of any shape, and a tree, over large values.
	anyValue := `{"$defs":{"v":{"anyOf":[{"type":["string","number","boolean","null"]},{"type":"array","items":{"$ref":"#/$defs/v"}},{"type":"object","additionalProperties":{"$ref":"#/$defs/v"}}]}},"type":"object","additionalProperties":{"$ref":"#/$defs/v"}}`
	tree := `{"type":"object","properties":{"name":{"type":"string"},"children":{"type":"array","items":{"$ref":"#"}}}}`
	var wide strings.Builder
	wide.WriteString(`{"name":"r","children":[`)
	for i := range 5000 {
		if i > 0 {
			wide.WriteString(",")
		}
		fmt.Fprintf(&wide, `{"name":"n%d","children":[{"name":"leaf","children":[]}]}`, i)
	}
	wide.WriteString(`]}`)
	for name, raw := range map[string]string{"any value": anyValue, "tree": tree} {
		s := e.ContentSchema(unique.Make(raw))
		for _, inst := range []string{wide.String(), nested(200)} {
			if v, err := s.Validate([]byte(inst)); err != nil || v != nil {
				t.Errorf("%s: %.40s…: %v %v", name, inst, v, err)
			}
		}
	}
}
