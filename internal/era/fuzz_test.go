package era

import (
	"encoding/json"
	"testing"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

// FuzzLegacyClient: what a backend or client sends is hostile. The pre-2026 client
// translations never panic, and what they accept they turn into valid JSON.
func FuzzLegacyClient(f *testing.F) {
	for _, s := range []string{
		`{"k":{"method":"elicitation/create","params":{"mode":"url","message":"m","url":"https://u.example/"}}}`,
		`{"k":{"method":"sampling/createMessage","params":{"messages":[],"maxTokens":1,"tools":[]}},"r":{"method":"roots/list"}}`,
		`{"k":{"method":"sampling/createMessage","params":{"messages":[],"maxTokens":1,"includeContext":"thisServer"}}}`,
		`{"k":{"method":"sampling\/createMessage","params":{"include\u0043ontext":null,"tools":[]}}}`,
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
			for _, info := range [][]byte{nil, []byte(`{"name":"gw","version":"1"}`)} {
				if out, err := ToLegacyClientResult(method, version, data, info); err == nil && !json.Valid(out) {
					t.Fatalf("%s: invalid JSON %s", method, out)
				}
			}
		}
		checkWithoutContext(t, data, version)
		check20250326(t, data)
		checkModernParams(t, data)
		if out, err := InitializeResult(version, data, InitializeOptions{ResourceSubscribe: true}); err == nil && !json.Valid(out) {
			t.Fatalf("InitializeResult: invalid JSON %s", out)
		}
		for _, written := range []string{V20251125, V20250618} {
			if out, err := NormalizeClientCaps(data, written); err == nil {
				if again, err := NormalizeClientCaps(out, written); err != nil || string(again) != string(out) {
					t.Fatalf("NormalizeClientCaps not idempotent: %s -> %s", out, again)
				}
			}
		}
	})
}

// checkModernParams: params ToModernParams accepts become valid JSON whose _meta declares the
// era, capabilities and log level the gateway gave, whatever reserved keys the client wrote, in
// whatever spelling. Only params the strict decode accepts reach it (a case variant of a
// member it reads, "_metA" say, is refused there).
func checkModernParams(t *testing.T, data []byte) {
	if !json.Valid(data) || !isObject(data) {
		return
	}
	if _, err := jsonrpc.ParseParams(data); err != nil {
		return
	}
	out, err := ToModernParams(data, Meta{ProtocolVersion: "2026-07-28", ClientCapabilities: json.RawMessage(`{}`), LogLevel: "info"})
	if err != nil {
		return
	}
	if !json.Valid(out) {
		t.Fatalf("ToModernParams: invalid JSON %s", out)
	}
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(out, &p); err != nil {
		t.Fatalf("ToModernParams: %s: %v", out, err)
	}
	for k, v := range p.Meta {
		if !IsProtocolMetaKey(k) {
			continue
		}
		want := map[string]string{"io.modelcontextprotocol/protocolVersion": `"2026-07-28"`,
			"io.modelcontextprotocol/clientCapabilities": `{}`, "io.modelcontextprotocol/logLevel": `"info"`}[k]
		if string(v) != want {
			t.Fatalf("ToModernParams: _meta %q is %s, want %q: %s", k, v, want, out)
		}
	}
}

// check20250326: whatever a backend returns, what a 2025-03-26 client is sent of it is valid JSON
// without structured output, and its tools carry only the members 2025-03-26 defines.
func check20250326(t *testing.T, data []byte) {
	for _, method := range []string{"tools/call", "tools/list", "prompts/list", "prompts/get", "resources/list",
		"resources/templates/list", "resources/read"} {
		out, err := ToLegacyClientResult(method, V20250326, data, nil)
		if err != nil {
			continue
		}
		if !json.Valid(out) {
			t.Fatalf("%s at 2025-03-26: invalid JSON %s", method, out)
		}
		var r struct {
			Structured json.RawMessage              `json:"structuredContent"`
			Tools      []map[string]json.RawMessage `json:"tools"`
		}
		if json.Unmarshal(out, &r) != nil {
			continue // duplicate keys the scanner let through, say: the shape is not ours to judge
		}
		if method == "tools/call" && r.Structured != nil {
			t.Fatalf("tools/call at 2025-03-26 kept structuredContent: %s", out)
		}
		for _, tool := range r.Tools {
			for k := range tool {
				if _, ok := tool0326[k]; !ok && method == "tools/list" {
					t.Fatalf("tools/list at 2025-03-26 kept %q: %s", k, out)
				}
			}
		}
	}
}

// checkWithoutContext: a round with its sampling requests' context taken out is valid JSON, has
// nothing more to take out, and asks no client for sampling.context.
func checkWithoutContext(t *testing.T, data []byte, version string) {
	out, changed, err := InputRequestsWithoutContext(data)
	if err != nil {
		return
	}
	if !json.Valid(out) || (!changed && string(out) != string(data)) {
		t.Fatalf("InputRequestsWithoutContext: %s -> %s (changed %v)", data, out, changed)
	}
	if again, more, err := InputRequestsWithoutContext(out); err != nil || more || string(again) != string(out) {
		t.Fatalf("InputRequestsWithoutContext not idempotent: %s -> %s", out, again)
	}
	reqs, err := InputRequests(version, out)
	if err != nil {
		return
	}
	for _, r := range reqs {
		if r.Capability == CapSamplingContext || r.Capability == CapSamplingToolsContext {
			t.Fatalf("entry %q still needs %s: %s", r.Key, r.Capability, r.Params)
		}
	}
}
