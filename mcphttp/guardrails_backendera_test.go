package mcphttp

import (
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/guardrails"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams"
)

// TestGuardrailsReadWhatALegacyBackendGets: the argument detectors read a request as its
// backend receives it. A backend configured to speak 2025-11-25 (go-sdk) gets a request without
// the 2026-07-28 shape's own _meta keys (clientInfo, logLevel, ...) and MRTR members
// (era.ToLegacyRequest): a secret in the client's clientInfo must not refuse a call to it,
// while a secret in a member it does get (the client's own _meta key) still does, and the same
// clientInfo still refuses a call to a 2026-07-28 backend, which gets it, and to a backend whose
// era was only learnt (a later answer may change it before the request goes out). Before, the
// members a configured pre-2026 backend never sees were read all the same, and their findings
// refused the call.
func TestGuardrailsReadWhatALegacyBackendGets(t *testing.T) {
	engine, err := guardrails.New(&guardrails.Config{Rules: []guardrails.RuleConfig{{ID: "r", Tools: []string{"*"},
		Arguments: guardrails.DirectionConfig{Secrets: "block"}}}})
	if err != nil {
		t.Fatal(err)
	}
	old := mcptest.StartLegacyServer(t, "old")
	cur := mcptest.StartServer(t, "cur")
	ups := upstreams.Config{Upstreams: []upstreams.UpstreamConfig{
		{Name: "pinned", URL: old.URL(), Protocol: "2025-11-25"},
		{Name: "learnt", URL: old.URL()},
		{Name: "cur", URL: cur.URL()},
	}}
	_, e := testServer(t, Config{}, ups, upstreams.Options{}, Deps{Version: "test", Guardrails: engine})
	url := serveTest(t, e).URL + DefaultPath
	// The learnt backend's era is learnt as the gateway lists its tools.
	if r := do(t, "POST", url, modern("tools/list", ""), body("tools/list", "")); r.Status != 200 || r.RPC.Error != nil {
		t.Fatalf("tools/list: %s", r.Body)
	}
	const secret = "AKIAIOSFODNN7EXAMPLE"
	// call calls tool with meta among the params' _meta members and extra among the params.
	call := func(tool, meta, extra string) *response {
		t.Helper()
		b := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{` +
			`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}` +
			meta + `},"name":"` + tool + `","arguments":{"text":"hello"}` + extra + `}}`
		return do(t, "POST", url, modern("tools/call", tool), b)
	}
	clientInfo := `,"io.modelcontextprotocol/clientInfo":{"name":"` + secret + `","version":"1"}`
	answers := `,"inputResponses":{"k":{"action":"accept","content":{"name":"` + secret + `"}}}`
	for _, tc := range []struct {
		name, tool, meta, extra string
		refused                 bool
	}{
		{"clientInfo to a configured 2025-11-25 backend", "pinned__echo", clientInfo, "", false},
		{"inputResponses to a configured 2025-11-25 backend", "pinned__echo", "", answers, false},
		{"the client's own _meta key to a 2025-11-25 backend", "pinned__echo", `,"com.example/note":"` + secret + `"`, "", true},
		{"a member it gets to a 2025-11-25 backend", "pinned__echo", "", `,"note":"` + secret + `"`, true},
		{"clientInfo to a 2026-07-28 backend", "cur__echo", clientInfo, "", true},
		{"inputResponses to a 2026-07-28 backend", "cur__echo", "", answers, true},
		// A learnt era may change before the request goes out: read in full, fail closed.
		{"clientInfo to a learnt 2025-11-25 backend", "learnt__echo", clientInfo, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := call(tc.tool, tc.meta, tc.extra)
			refused := strings.Contains(string(r.Body), `Refused by guardrail rule \"r\": found secrets`)
			if refused != tc.refused || (!tc.refused && (r.Status != 200 || r.RPC.Error != nil || !strings.Contains(string(r.Body), "hello"))) {
				t.Errorf("refused %v, want %v: %d %s", refused, tc.refused, r.Status, r.Body)
			}
		})
	}
}
