package guardrails

import (
	"errors"
	"strings"
	"testing"
	"unique"
)

const testSchema = `{"type":"object",
 "properties":{
  "path":{"type":"string","pattern":"^/srv/"},
  "count":{"type":"integer","minimum":1,"maximum":10},
  "mode":{"enum":["fast","safe"]},
  "tags":{"type":"array","items":{"type":"string","maxLength":8}},
  "opts":{"$ref":"#/$defs/Opts"},
  "meta":{"type":"object","additionalProperties":{"type":"number"}}
 },
 "required":["path"],
 "additionalProperties":false,
 "$defs":{"Opts":{"type":"object","properties":{"depth":{"type":"integer"}},"required":["depth"]}}}`

// Violations name the failing path and what the schema wants, never the value.
func TestSchemaViolations(t *testing.T) {
	e := testEngine(t, everything("log"))
	s := e.ContentSchema(unique.Make(testSchema))
	for _, c := range []struct {
		args, path, problem string
	}{
		{`{"path":"/srv/a"}`, "", ""},
		{`{"path":"/srv/a","count":3,"mode":"safe","tags":["a"],"opts":{"depth":2},"meta":{"x":1.5}}`, "", ""},
		{`{}`, "", `is missing required properties "path"`},
		{`{"path":"/etc/SECRETVALUE"}`, "/path", `must match the pattern "^/srv/"`},
		{`{"path":"/srv/a","count":"SECRETVALUE"}`, "/count", "must be integer, not string"},
		{`{"path":"/srv/a","count":11}`, "/count", "must be at most 10"},
		{`{"path":"/srv/a","mode":"SECRETVALUE"}`, "/mode", `must be one of ["fast","safe"]`},
		{`{"path":"/srv/a","tags":["ok","SECRETVALUE"]}`, "/tags/1", "must be at most 8 characters long"},
		{`{"path":"/srv/a","opts":{}}`, "/opts", `is missing required properties "depth"`},
		{`{"path":"/srv/a","opts":{"depth":"SECRETVALUE"}}`, "/opts/depth", "must be integer, not string"},
		{`{"path":"/srv/a","meta":{"a":1,"b":"SECRETVALUE"}}`, "/meta/b", "must be number, not string"},
		{`{"path":"/srv/a","SECRETKEY":1}`, "", `has properties the schema does not allow: "SECRETKEY"`},
		{`{"path":"/srv/a","Count":100}`, "", `has a property "Count" that differs from a declared property only in case or punctuation`},
		{`{"path":"/srv/a","opts":{"Depth":1,"depth":1}}`, "/opts", `has a property "Depth" that differs from a declared property only in case or punctuation`},
		{`{"path":"/srv/a","count":1e400}`, "/count", "holds a number that JSON parsers read as different values"},
		{`{"path":"/srv/a","count":9007199254740993}`, "/count", "holds a number that JSON parsers read as different values"},
		{`{"path":"/srv/a","meta":{"x":0.10000000000000001}}`, "/meta/x", "holds a number that JSON parsers read as different values"},
		{`{"path":"/srv/a","opts":{"depth":2,"l":[1,2.50000000000000001]}}`, "/opts/l/1", "holds a number that JSON parsers read as different values"},
		{`{"path":"/srv/a","meta":{"x":9007199254740994,"y":0.1,"z":1e2,"w":-0}}`, "", ""},
	} {
		v, err := s.Validate([]byte(c.args))
		if err != nil {
			t.Fatalf("%s: %v", c.args, err)
		}
		if c.problem == "" {
			if v != nil {
				t.Errorf("%s: unexpected violation %s", c.args, v)
			}
			continue
		}
		if v == nil {
			t.Errorf("%s: no violation", c.args)
			continue
		}
		if v.Path != c.path || v.Problem != c.problem {
			t.Errorf("%s: got %q %q, want %q %q", c.args, v.Path, v.Problem, c.path, c.problem)
		}
		if strings.Contains(v.String(), "SECRETVALUE") {
			t.Errorf("%s: the value is in the violation: %s", c.args, v)
		}
	}
}

// A schema that accepts any object is not decoded against; absent arguments are an empty
// object.
func TestSchemaObjectOnly(t *testing.T) {
	e := testEngine(t, everything("log"))
	s := e.ContentSchema(unique.Make(`{"type":"object","properties":{}}`))
	if !s.objectOnly {
		t.Fatal("not recognised as object-only")
	}
	for _, args := range []string{`{"x":1}`, ``} {
		if v, err := s.Validate([]byte(args)); v != nil || err != nil {
			t.Errorf("%q: %v %v", args, v, err)
		}
	}
	s = e.ContentSchema(unique.Make(`{"type":"object","required":["a"]}`))
	if v, _ := s.Validate(nil); v == nil {
		t.Error("absent arguments passed a schema with a required property")
	}
}

// A schema that cannot be used fails every check with ErrSchema, and is cached as such.
func TestSchemaUnusable(t *testing.T) {
	e := testEngine(t, everything("log"))
	for _, raw := range []string{`{"$ref":"https://schemas.example.com/remote.json"}`, `{"$schema":"http://json-schema.org/draft-04/schema#"}`, `[1]`} {
		s := e.ContentSchema(unique.Make(raw))
		if _, err := s.Validate([]byte(`{}`)); !errors.Is(err, ErrSchema) {
			t.Errorf("%s: err %v", raw, err)
		}
	}
	calls := 0
	src := func() ([]byte, error) { calls++; return []byte(`{"type":"object"}`), nil }
	for range 3 {
		e.Schema(PinKey("abc", false), src)
	}
	if calls != 1 {
		t.Errorf("compiled %d times", calls)
	}
}

// The cache is bounded: the least recently used schema goes first.
func TestSchemaCacheBound(t *testing.T) {
	c := newSchemaCache(2)
	a, b, d := PinKey("a", false), PinKey("b", false), PinKey("d", false)
	c.put(a, &CompiledSchema{})
	c.put(b, &CompiledSchema{})
	c.get(a)
	c.put(d, &CompiledSchema{})
	if c.get(b) != nil || c.get(a) == nil || c.get(d) == nil || c.Len() != 2 {
		t.Fatal("not LRU")
	}
	big := newSchemaCache(100)
	for i := range 5 {
		big.put(PinKey(string(rune('a'+i)), false), &CompiledSchema{raw: make([]byte, (16<<20)/3)})
	}
	// docs/guardrails.md: at most 16 MiB of schema text.
	if big.Len() != 3 {
		t.Fatalf("%d schemas of a third of 16 MiB each kept, want 3", big.Len())
	}
}

// TestSchemaNamesOutsideProperties: a property name a schema refers to only in a condition
// ("required" inside an "if", "dependentRequired", "dependentSchemas", a patternProperties
// pattern ^name$) is a declared name too: an argument spelled like it only up to case would
// leave the condition untriggered while a case-insensitive backend (encoding/json into a
// struct) reads it as that name. Such an argument is refused; the exact spelling is checked by
// the condition as before.
func TestSchemaNamesOutsideProperties(t *testing.T) {
	e := testEngine(t, everything("log"))
	for _, c := range []struct{ schema, variant, exact string }{
		{`{"type":"object","dependentSchemas":{"force":{"required":["confirm"]}}}`, `{"Force":true}`, `{"force":true}`},
		{`{"type":"object","dependentRequired":{"force":["confirm"]}}`, `{"FORCE":true}`, `{"force":true}`},
		{`{"type":"object","if":{"required":["force"]},"then":{"required":["confirm"]}}`, `{"Force":true}`, `{"force":true}`},
		{`{"type":"object","patternProperties":{"^path$":{"pattern":"^/srv/"}}}`, `{"Path":"/etc/passwd"}`, `{"path":"/etc/passwd"}`},
		{`{"type":"object","dependentRequired":{"a":["force"]},"properties":{"a":{}}}`, `{"a":1,"force":1,"Force":2}`, `{"a":1}`},
	} {
		s := e.ContentSchema(unique.Make(c.schema))
		v, err := s.Validate([]byte(c.variant))
		if err != nil || v == nil || !strings.Contains(v.Problem, "only in case or punctuation") {
			t.Errorf("%s with %s: %v %v, want the variant refused", c.schema, c.variant, v, err)
		}
		if v, err := s.Validate([]byte(c.exact)); err != nil || v == nil {
			t.Errorf("%s with %s: %v %v, want the condition to fail", c.schema, c.exact, v, err)
		}
	}
}
