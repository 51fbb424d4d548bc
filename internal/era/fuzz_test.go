package era

import (
	"encoding/json"
	"testing"
)

// FuzzLegacyClient: what a backend or client sends is hostile. The pre-2026 client
// translations never panic, and what they accept they turn into valid JSON.
func FuzzLegacyClient(f *testing.F) {
	for _, s := range []string{
		`{"k":{"method":"elicitation/create","params":{"mode":"url","message":"m","url":"u"}}}`,
		`{"k":{"method":"sampling/createMessage","params":{"messages":[],"maxTokens":1,"tools":[]}},"r":{"method":"roots/list"}}`,
		`{"content":[{"type":"text","text":"1"}],"structuredContent":[1],"resultType":"complete"}`,
		`{"tools":[{"name":"a","outputSchema":{"type":"array"}}],"ttlMs":1}`,
		`{"action":"accept","_meta":{"io.modelcontextprotocol/x":1}}`,
		`{"a":{"b":`, `[]`, `{"a":1,"a":2}`, `"\ud800"`,
	} {
		f.Add([]byte(s), true)
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, data []byte, newer bool) {
		version := V20250618
		if newer {
			version = V20251125
		}
		reqs, err := InputRequests(version, data)
		if err == nil {
			for _, r := range reqs {
				if !isObject(r.Params) || !json.Valid(r.Params) || r.Capability == "" {
					t.Fatalf("entry %q: params %s, capability %q", r.Key, r.Params, r.Capability)
				}
				if out, err := InputResponse(r, data); err == nil && !json.Valid(out) {
					t.Fatalf("InputResponse gave invalid JSON %s", out)
				}
			}
		}
		for _, method := range []string{"tools/call", "tools/list"} {
			if out, err := ToLegacyClientResult(method, version, data, nil); err == nil && !json.Valid(out) {
				t.Fatalf("%s: invalid JSON %s", method, out)
			}
		}
		if out, err := InitializeResult(version, data, InitializeOptions{ResourceSubscribe: true}); err == nil && !json.Valid(out) {
			t.Fatalf("InitializeResult: invalid JSON %s", out)
		}
		if out, err := NormalizeClientCaps(data); err == nil {
			if again, err := NormalizeClientCaps(out); err != nil || string(again) != string(out) {
				t.Fatalf("NormalizeClientCaps not idempotent: %s -> %s", out, again)
			}
		}
	})
}
