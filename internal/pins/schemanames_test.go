package pins

import "testing"

// TestSchemaTextInMemberNames: text the model reads as a member name of a keyword that maps
// names to subschemas or to lists of names (properties, patternProperties, dependentSchemas,
// dependentRequired, $defs), added where the classifier otherwise proves the schema narrower
// (a new conjunct, a not widened, a dependency added), is new text: text-changed, never only
// input-schema-narrowed with its log action.
func TestSchemaTextInMemberNames(t *testing.T) {
	p := poison // a JSON string literal, used here as a member name
	base := `{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`
	with := func(kw, v string) string {
		return `{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false,"` + kw + `":` + v + `}`
	}
	for _, c := range []struct{ name, schema string }{
		{"dependentRequired name", with("dependentRequired", `{`+p+`:["path"]}`)},
		{"dependentSchemas name", with("dependentSchemas", `{`+p+`:{"required":["path"]}}`)},
		{"dependentSchemas name, true", with("dependentSchemas", `{`+p+`:true}`)},
		{"property of an added allOf branch", with("allOf", `[{"properties":{`+p+`:{}}}]`)},
		{"property of an added not", with("not", `{"properties":{`+p+`:false}}`)},
		{"property of an added if", with("if", `{"properties":{`+p+`:{}}}`)},
		{"property inside an added propertyNames", with("propertyNames", `{"not":{"properties":{`+p+`:{}}}}`)},
		{"patternProperties of an added allOf branch", with("allOf", `[{"patternProperties":{`+p+`:{}}}]`)},
		{"$defs of an added allOf branch", with("allOf", `[{"$defs":{`+p+`:{}}}]`)},
	} {
		got := Classify(schemaTool(t, base), schemaTool(t, c.schema))
		act, _ := (&Config{}).ActionFor("be", got)
		if !got.Has(ClassTextChanged) || act == ActionLog {
			t.Errorf("%s: %v (action %s), want text-changed", c.name, got, act)
		}
	}
}
