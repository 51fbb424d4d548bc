package guardrails

import (
	"testing"
	"unique"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

const flatTestSchema = `{"type":"object","title":"t",
 "properties":{"bytes":{"type":"integer","description":"d"},"ratio":{"type":"number"},"prose":{"type":"boolean"},
  "note":{"type":"string"},"none":{"type":"null"}},
 "required":["bytes","note"]}`

// A flat schema is checked on the arguments' text; whatever the text check accepts, the full
// validator accepts too, and whatever it refuses is refused with the validator's words.
func TestSchemaFlatAgreesWithValidator(t *testing.T) {
	e := testEngine(t, everything("log"))
	s := e.ContentSchema(unique.Make(flatTestSchema))
	if s.flat == nil {
		t.Fatal("not recognised as flat")
	}
	full := compileSchema([]byte(flatTestSchema))
	full.flat = nil
	for _, c := range []struct {
		args string
		fast bool // the text check decides it (accepts)
	}{
		{`{"bytes":4096,"note":"x"}`, true},
		{`{"bytes":-1,"note":"","prose":true,"none":null,"ratio":3,"other":"y"}`, true},
		{`{"bytes":1,"note":"x","\u006eote2":1}`, true},
		{`{"\u0062ytes":1,"\u006eote":"x"}`, true},
		{`{"\u0062ytes":"1","note":"x"}`, false},
		{`{"bytes":1,"note":"x","\u0072atio":"no"}`, false},
		{`{"bytes":1,"\u006eote":{"x":1}}`, false},
		{`{"bytes":1.0,"note":"x"}`, false},
		{`{"bytes":1.5,"note":"x"}`, false},
		{`{"bytes":1e2,"note":"x"}`, false},
		{`{"bytes":1234567890123456789,"note":"x"}`, false},
		{`{"bytes":1,"note":"x","ratio":1e400}`, false},
		{`{"bytes":"1","note":"x"}`, false},
		{`{"note":"x"}`, false},
		{`{"bytes":1}`, false},
		{`{"bytes":1,"note":"x","prose":"true"}`, false},
		{`{"bytes":1,"note":"x","none":0}`, false},
		{`{"bytes":1,"note":"x","Note":"y"}`, false},
		{`{"bytes":1,"note":"x","BYTES":2}`, false},
		{`{"bytes":1,"note":"x","other":{"Bytes":2}}`, false},
		{`{"bytes":1,"note":"x","other":[{"Bytes":2}]}`, false},
		{`{"bytes":1,"note":"x","other":{"fine":2}}`, false},
		{`{"bytes":1,"note":{"x":1}}`, false},
		{`[1]`, false},
		{`  {"bytes":1,"note":"x"}`, true},
	} {
		fast := s.flat.accepts([]byte(c.args), s.names, s.folded)
		if fast != c.fast {
			t.Errorf("%s: text check accepts %v, want %v", c.args, fast, c.fast)
		}
		vf, errf := full.Validate([]byte(c.args))
		if fast && (vf != nil || errf != nil) {
			t.Errorf("%s: the text check accepts what the validator refuses: %v %v", c.args, vf, errf)
		}
		v, err := s.Validate([]byte(c.args))
		if (v == nil) != (vf == nil) || (v != nil && *v != *vf) || (err == nil) != (errf == nil) {
			t.Errorf("%s: got %v %v, the validator says %v %v", c.args, v, err, vf, errf)
		}
	}
}

// Only the schemas that say no more than scalar properties are flat.
func TestSchemaFlatOnlyScalars(t *testing.T) {
	e := testEngine(t, everything("log"))
	for _, sch := range []string{
		testSchema,
		`{"type":"object","properties":{"a":{"type":"string","maxLength":3}}}`,
		`{"type":"object","properties":{"a":{"type":["string","null"]}}}`,
		`{"type":"object","properties":{"a":{"type":"object"}}}`,
		`{"type":"object","properties":{"a":{}}}`,
		`{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}`,
		`{"type":"object","properties":{"a":{"type":"string"}},"minProperties":1}`,
		`{"type":"object","properties":{"a":{"type":"string"}},"required":"a"}`,
		`{"properties":{"a":{"type":"string"}}}`,
	} {
		if s := e.ContentSchema(unique.Make(sch)); s.flat != nil {
			t.Errorf("%s: taken as flat", sch)
		}
	}
}

// The typical call's arguments are checked against a flat schema without allocating.
func TestSchemaFlatAllocatesNothing(t *testing.T) {
	e := testEngine(t, everything("log"))
	s := e.ContentSchema(unique.Make(flatTestSchema))
	args := []byte(`{"bytes":4096,"prose":true,"note":"Customer reported checkout latency above 2s"}`)
	if n := testing.AllocsPerRun(50, func() {
		if v, err := s.Validate(args); v != nil || err != nil {
			t.Fatal(v, err)
		}
	}); n != 0 {
		t.Errorf("%v allocations per check, want 0", n)
	}
}

// FuzzSchemaFlatOnlyAccepts: on any arguments that pass the gateway's strict scan, the text check
// accepts only what the full validator accepts, and the flat schema answers as the validator.
func FuzzSchemaFlatOnlyAccepts(f *testing.F) {
	for _, seed := range []string{
		`{"bytes":4096,"note":"x"}`, `{"bytes":-1,"note":"","prose":true,"none":null,"ratio":3,"other":"y"}`,
		`{"bytes":1.0,"note":"x"}`, `{"bytes":1e2,"note":"x"}`, `{"bytes":"1","note":"x"}`, `{"note":"x"}`,
		`{"bytes":1,"note":"x","\u004eote":"y"}`, `{"bytes":1,"note":"x","other":{"Bytes":2}}`, `[1]`, `  {"bytes":1,"note":"x"}`,
		`{"bytes":123456789012345,"note":"x","ratio":-0}`, `{"bytes":1,"note":"x","ſ":1}`,
	} {
		f.Add([]byte(seed))
	}
	e := testEngine(f, everything("log"))
	s := e.ContentSchema(unique.Make(flatTestSchema))
	if s.flat == nil {
		f.Fatal("not recognised as flat")
	}
	full := compileSchema([]byte(flatTestSchema))
	full.flat = nil
	f.Fuzz(func(t *testing.T, args []byte) {
		if len(args) == 0 || jsonrpc.Scan(args, jsonrpc.Limits{}) != nil {
			return
		}
		vf, errf := full.Validate(args)
		if s.flat.accepts(args, s.names, s.folded) && (vf != nil || errf != nil) {
			t.Fatalf("%s: the text check accepts what the validator refuses: %v %v", args, vf, errf)
		}
		v, err := s.Validate(args)
		if (v == nil) != (vf == nil) || (err == nil) != (errf == nil) {
			t.Fatalf("%s: got %v %v, the validator says %v %v", args, v, err, vf, errf)
		}
	})
}
