package era

import (
	"strings"
	"testing"
)

// TestFormSchemaFlat: a form-mode elicitation is translated only when its requestedSchema is the
// flat object of primitive properties the specification allows, on both paths (a 2026-07-28
// round's entry, a 2025 backend's own request); anything nested, referenced, composed, spelled
// so that a case-folding client reads a keyword the check did not, or of another type is
// refused, naming the requestedSchema and no property of the backend's.
func TestFormSchemaFlat(t *testing.T) {
	ok := []string{
		``,
		`,"requestedSchema":{}`,
		`,"requestedSchema":{"type":"object","properties":{}}`,
		`,"requestedSchema":{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","additionalProperties":false,"properties":{"n":{"type":"string"}},"required":["n"]}`,
		`,"requestedSchema":{"type":"object","properties":{"e":{"type":"string","format":"email","minLength":1,"maxLength":9,"title":"t","description":"d","default":"x"}}}`,
		`,"requestedSchema":{"type":"object","properties":{"n":{"type":"number","minimum":0,"maximum":1},"i":{"type":"integer","default":3},"b":{"type":"boolean","default":true}}}`,
		`,"requestedSchema":{"type":"object","properties":{"s":{"type":"string","enum":["a","b"],"enumNames":["A","B"]},"u":{"enum":["x"]}}}`,
		`,"requestedSchema":{"type":"object","properties":{"s":{"type":"string","oneOf":[{"const":"a","title":"A"}]}}}`,
		`,"requestedSchema":{"type":"object","properties":{"m":{"type":"array","minItems":1,"items":{"type":"string","enum":["a","b"]},"default":["a"]}}}`,
		`,"requestedSchema":{"type":"object","properties":{"m":{"type":"array","items":{"anyOf":[{"const":"a","title":"A"}]}}}}`,
	}
	bad := []struct{ schema, why string }{
		{`"x"`, "not an object"},
		{`[]`, "not an object"},
		{`{"type":"array"}`, "not of type object"},
		{`{"type":"object","properties":[]}`, "properties are not an object"},
		{`{"type":"object","required":"a"}`, "required is not an array"},
		{`{"type":"object","properties":{"secret_name":{"type":"object","properties":{"a":{"type":"string"}}}}}`, "property 1 is not a primitive"},
		{`{"type":"object","properties":{"a":{"type":"string"},"b":{"properties":{}}}}`, "property 2 is not a primitive: it holds properties"},
		{`{"type":"object","properties":{"a":{"type":"array","items":{"type":"object","properties":{}}}}}`, "items are not strings"},
		{`{"type":"object","properties":{"a":{"type":"array","items":{"type":"string","items":{}}}}}`, "items hold items"},
		{`{"type":"object","properties":{"a":{"type":"array"}}}`, "without items"},
		{`{"type":"object","properties":{"a":{"type":"string","items":{"type":"string"}}}}`, "has items but is not an array"},
		{`{"type":"object","properties":{"a":{"$ref":"#"}}}`, "holds $ref"},
		{`{"type":"object","$ref":"#/$defs/x"}`, "holds $ref"},
		{`{"type":"object","$defs":{"x":{"type":"object"}},"properties":{}}`, "holds $defs"},
		{`{"type":"object","properties":{"a":{"allOf":[{"type":"string"}]}}}`, "holds allOf"},
		{`{"type":"object","properties":{"a":{"type":"string","oneOf":[{"type":"object","properties":{}}]}}}`, "oneOf is not a list of titled values"},
		{`{"type":"object","properties":{"a":{"type":["string","object"]}}}`, "type is not a string"},
		{`{"type":"object","properties":{"a":{"type":"null"}}}`, "is not one of"},
		{`{"type":"object","properties":{"a":{"type":"string","enum":[{"a":1}]}}}`, "enum holds more than primitive values"},
		{`{"type":"object","Properties":{"a":{"type":"object"}}}`, "spells properties"},
		{`{"type":"object","properties":{"a":{"type":"string","TYPE":"object"}}}`, "spells type"},
		{`{"type":"object","properties":{"a":{"type":"array","items":{"Enum":[{}]}}}}`, "spells enum"},
		{`{"type":"object","additionalProperties":{"type":"object"}}`, "holds additionalProperties"},
	}
	for _, path := range []string{"round", "backend request"} {
		translate := func(params string) error {
			if path == "round" {
				_, err := InputRequests(V20251125, []byte(`{"k":{"method":"elicitation/create","params":`+params+`}}`))
				return err
			}
			_, err := ServerRequest(V20250618, "k", MethodElicitationCreate, []byte(params))
			return err
		}
		for _, s := range ok {
			if err := translate(`{"message":"m"` + s + `}`); err != nil {
				t.Errorf("%s: %s: %v, want it relayed", path, s, err)
			}
		}
		for _, tt := range bad {
			err := translate(`{"mode":"form","message":"m","requestedSchema":` + tt.schema + `}`)
			if err == nil || !strings.Contains(err.Error(), "requestedSchema") || !strings.Contains(err.Error(), tt.why) ||
				strings.Contains(err.Error(), "secret_name") {
				t.Errorf("%s: %s: %v, want refused saying %q", path, tt.schema, err, tt.why)
			}
		}
	}
	// The member itself spelled another way is read by a case-folding client as the schema.
	if _, err := InputRequests(V20251125, []byte(`{"k":{"method":"elicitation/create","params":{"message":"m","RequestedSchema":{"type":"object"}}}}`)); err == nil ||
		!strings.Contains(err.Error(), "spells requestedSchema") {
		t.Errorf("RequestedSchema: %v, want refused", err)
	}
	// URL mode has no schema to check.
	if _, err := InputRequests(V20251125, []byte(`{"k":{"method":"elicitation/create","params":{"mode":"url","message":"m","url":"https://example.com"}}}`)); err != nil {
		t.Errorf("URL mode: %v", err)
	}
}
