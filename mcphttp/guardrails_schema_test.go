package mcphttp

import (
	"runtime"
	"testing"
	"unique"

	"github.com/mcp-gateway/gateway/internal/guardrails"
	"github.com/mcp-gateway/gateway/upstreams"
)

// TestListedSchemaKeptWithTheTool: a listed tool's compiled schema is found with its entry in
// the tool index, the one the engine's cache holds; once the cache has let it go (the cache
// alone bounds what is kept), it is compiled again from the entry's text, never lost or mixed
// up with the other schema.
func TestListedSchemaKeptWithTheTool(t *testing.T) {
	engine, err := guardrails.New(&guardrails.Config{SchemaCache: 1, Rules: []guardrails.RuleConfig{{ID: "r",
		Tools: []string{"*"}, Validate: guardrails.ValidateConfig{Arguments: "block"}}}})
	if err != nil {
		t.Fatal(err)
	}
	g := &railer{engine: engine}
	ts := &upstreams.ToolSchemas{Input: unique.Make(`{"type":"object","required":["a"]}`), HasInput: true,
		Output: unique.Make(`{"type":"object","required":["b"]}`), HasOutput: true}
	check := func(output bool, valid, invalid string) *guardrails.CompiledSchema {
		t.Helper()
		cs := g.listedSchema(ts, output)
		if v, err := cs.Validate([]byte(valid)); v != nil || err != nil {
			t.Fatalf("output %v: %s refused: %v %v", output, valid, v, err)
		}
		if v, err := cs.Validate([]byte(invalid)); v == nil || err != nil {
			t.Fatalf("output %v: %s passed (%v)", output, invalid, err)
		}
		return cs
	}
	in := check(false, `{"a":1}`, `{"b":1}`)
	if again := check(false, `{"a":1}`, `{"b":1}`); again != in {
		t.Error("the input schema was not found with the tool")
	}
	// The output schema takes the cache's one place: the input schema's compiled form may go.
	check(true, `{"b":1}`, `{"a":1}`)
	// Out of the cache but still alive (in holds it): found with the tool, not compiled again
	// (the cache alone would compile it again, a schema of its own).
	if again := g.listedSchema(ts, false); again != in {
		t.Error("the input schema, gone from the cache, was not found with the tool")
	}
	runtime.GC()
	runtime.GC()
	check(false, `{"a":1}`, `{"b":1}`)
	check(true, `{"b":1}`, `{"a":1}`)
	if none := g.listedSchema(&upstreams.ToolSchemas{}, true); none != nil {
		t.Error("a tool without an output schema has one")
	}
}
