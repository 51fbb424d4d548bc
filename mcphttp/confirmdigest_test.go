package mcphttp

import (
	"encoding/json"
	"testing"

	"github.com/mcp-gateway/gateway/mrtr"
)

// TestBoundDigest: a call with nothing beyond its arguments digests as its arguments; the
// client's own _meta members, what it declares of itself (protocol version, capabilities,
// clientInfo) and unknown params members are bound, in any order and spelling of the same JSON;
// the other reserved _meta members and what answered the gateway are not; and the wider form
// never equals the digest of arguments shaped like it.
func TestBoundDigest(t *testing.T) {
	args := json.RawMessage(`{"text":"pay 10"}`)
	digest := func(params string) [32]byte {
		t.Helper()
		d, err := boundDigest(args, json.RawMessage(params))
		if err != nil {
			t.Fatalf("%s: %v", params, err)
		}
		return d
	}
	plain, _ := mrtr.Digest(args)
	for _, p := range []string{
		`{"name":"t","arguments":{"text":"pay 10"}}`,
		`{"_meta":{"progressToken":1,"traceparent":"x","io.modelcontextprotocol/logLevel":"debug","io.modelcontextprotocol/authorization-context-id":"h"},"name":"t","arguments":{"text":"pay 10"},"requestState":"s","inputResponses":{}}`,
	} {
		if digest(p) != plain {
			t.Errorf("%s: digest differs from the arguments' alone", p)
		}
	}
	declared := digest(`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}},"io.modelcontextprotocol/clientInfo":{"name":"a","version":"1"}}}`)
	if same := digest(`{"_meta":{"io.modelcontextprotocol/clientInfo":{"version":"1","name":"\u0061"},"progressToken":2,"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}},"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"requestState":"t"}`); same != declared {
		t.Error("the same declaration in another order or spelling digests differently")
	}
	for _, p := range []string{
		`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}},"sampling":{}},"io.modelcontextprotocol/clientInfo":{"name":"a","version":"1"}}}`,
		`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}},"io.modelcontextprotocol/clientInfo":{"name":"a","version":"1"}}}`,
		`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}},"io.modelcontextprotocol/clientInfo":{"name":"b","version":"1"}}}`,
		`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}}`,
		`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}},"io.modelcontextprotocol/clientInfo":{"name":"a","version":"1"}}}`,
		// The declaration moved out of _meta is another request.
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}},"io.modelcontextprotocol/clientInfo":{"name":"a","version":"1"}}`,
	} {
		if digest(p) == declared {
			t.Errorf("%s: digests as the declaration it differs from", p)
		}
	}
	bound := digest(`{"_meta":{"com.example/a":1,"com.example/b":{"x":"y"}},"x-mode":"safe","arguments":{}}`)
	if same := digest(`{"x-mode" : "safe","_meta":{"com.example/b":{"x":"\u0079"},"progressToken":"p","com.example/a":1}}`); same != bound {
		t.Error("the same members in another order or spelling digest differently")
	}
	for _, p := range []string{
		`{"_meta":{"com.example/a":2,"com.example/b":{"x":"y"}},"x-mode":"safe"}`,
		`{"_meta":{"com.example/b":{"x":"y"}},"x-mode":"safe"}`,
		`{"_meta":{"com.example/a":1,"com.example/b":{"x":"y"}}}`,
		`{"_meta":{"com.example/a":1,"com.example/b":{"x":"y"}},"x-mode":"safe","other":null}`,
	} {
		if digest(p) == bound {
			t.Errorf("%s: digests as the bound members it differs from", p)
		}
	}
	// Arguments shaped like the wider form do not stand for it.
	wide, err := boundDigest(json.RawMessage(`{"text":"pay 10"}`), json.RawMessage(`{"x-mode":"safe"}`))
	if err != nil {
		t.Fatal(err)
	}
	if shaped, _ := mrtr.Digest(json.RawMessage(`{"arguments":{"text":"pay 10"},"params":{"x-mode":"safe"}}`)); shaped == wide {
		t.Error("arguments shaped like the wider form digest as it")
	}
}
