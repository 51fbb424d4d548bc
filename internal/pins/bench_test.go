package pins

import (
	"encoding/json"
	"fmt"
	"testing"
)

// hundredTools is a realistic tools/list of 100 tools, each with a description, a schema of
// six typed properties (descriptions, an enum, bounds), an output schema and annotations.
func hundredTools(tb testing.TB) []json.RawMessage {
	tb.Helper()
	out := make([]json.RawMessage, 100)
	for i := range out {
		props := map[string]any{}
		for j := range 6 {
			props[fmt.Sprintf("arg_%d", j)] = map[string]any{
				"type": "string", "description": fmt.Sprintf("Argument %d of tool %d: what it means and how it is used.", j, i),
				"maxLength": 256, "enum": []string{"alpha", "beta", "gamma", "delta"},
			}
		}
		tool := map[string]any{
			"name": fmt.Sprintf("tool_%03d", i), "title": fmt.Sprintf("Tool %d", i),
			"description": "Does one well-defined thing with the arguments given; returns a structured result. " +
				"Use it when the user asks for that thing; never with secrets.",
			"inputSchema":  map[string]any{"type": "object", "properties": props, "required": []string{"arg_0", "arg_1"}, "additionalProperties": false},
			"outputSchema": map[string]any{"type": "object", "properties": map[string]any{"result": map[string]any{"type": "string"}}},
			"annotations":  map[string]any{"readOnlyHint": i%2 == 0, "destructiveHint": i%3 == 0, "openWorldHint": false},
			"_meta":        map[string]any{"vendor/trace": "x"},
		}
		b, err := json.Marshal(tool)
		if err != nil {
			tb.Fatal(err)
		}
		out[i] = b
	}
	return out
}

// BenchmarkFingerprint100Tools: fingerprinting a whole 100-tool list once (what the gateway will
// do once per backend list fetch, not per request).
func BenchmarkFingerprint100Tools(b *testing.B) {
	tools := hundredTools(b)
	size := 0
	for _, t := range tools {
		size += len(t)
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		for _, t := range tools {
			if _, err := FromJSON(KindTool, t); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkClassify100Unchanged: comparing a 100-tool list with its pins when nothing changed
// (the common case: equal fingerprints plus the invisible-character scan).
func BenchmarkClassify100Unchanged(b *testing.B) {
	tools := hundredTools(b)
	defs := make([]*Definition, len(tools))
	for i, t := range tools {
		d, err := FromJSON(KindTool, t)
		if err != nil {
			b.Fatal(err)
		}
		defs[i] = d
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, d := range defs {
			if s := Classify(d, d); !s.Empty() {
				b.Fatal(s)
			}
		}
	}
}
