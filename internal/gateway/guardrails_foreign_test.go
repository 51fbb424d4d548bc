package gateway

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/guardrails"
	"github.com/mcp-gateway/gateway/internal/testsupport/legacyclient"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestGuardrailsForeignParams attacks the shortcut of stage guardrails (a call's params are not
// read again when stage decode saw nothing in them but the members left alone) with the
// spellings a client controls: member names written with escapes, names near the ones left
// alone, _meta keys near the protocol's namespace and trace context's, nested values, in
// tools/call and prompts/get on the 2026-07-28 edge and through the pre-2026 edge. Each carries
// a credential that a rule blocks: it is refused and never reaches the backend. Spellings that
// differ from a member the gateway reads only in case are refused as invalid params.
func TestGuardrailsForeignParams(t *testing.T) {
	be := mcptest.StartServer(t, "be", railOptions()...)
	old := mcptest.StartLegacyServer(t, "old", railOptions()...)
	gw := startTestGateway(t, func(c *Config) {
		c.Auth.Disabled = true
		c.Legacy.Enabled = true
		c.Guardrails = guardrails.Config{Rules: []guardrails.RuleConfig{{ID: "params", Tools: []string{"*"},
			Prompts: []string{"*"}, Arguments: guardrails.DirectionConfig{Secrets: "block"}}}}
	}, be, old)
	url := "http://" + gw.MCP + "/mcp"
	const key = railAWSKey
	const proto = `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}`
	type target struct{ method, name, args string }
	targets := []target{
		{"tools/call", "be__echo_args", `"arguments":{"n":1}`},
		{"prompts/get", "be__contact", `"arguments":{"who":"bob"}`},
	}
	// Each is the rest of the params after the target's name and arguments: the _meta (always
	// sent, the protocol's members first) and any other member.
	refused := map[string]string{
		"an escaped name":                                  `"_meta":{` + proto + `},"x\u002dnote":"` + key + `"`,
		"a name escaped as a known one's":                  `"_meta":{` + proto + `},"n\u0061mes":"` + key + `"`,
		"an escaped _meta name":                            `"_m\u0065ta":{` + proto + `,"x.example/note":"` + key + `"}`,
		"an escaped _meta key":                             `"_meta":{` + proto + `,"x.example\/n\u006fte":"` + key + `"}`,
		"a key of the namespace the gateway does not read": `"_meta":{` + proto + `,"io.modelcontextprotocol/x-note":{"k":"` + key + `"}}`,
		"one escaped into it":                              `"_meta":{` + proto + `,"io.modelcontextprotocol\/n\u006fte":"` + key + `"}`,
		"a key beside the namespace":                       `"_meta":{` + proto + `,"io.modelcontextprotocol":"` + key + `"}`,
		"a key escaped out of it":                          `"_meta":{` + proto + `,"io.modelcontextprotocol\u002e/x":"` + key + `"}`,
		"a key near progressToken":                         `"_meta":{` + proto + `,"progressToken2":"` + key + `"}`,
		"a key near traceparent":                           `"_meta":{` + proto + `,"traceparent-x":"` + key + `"}`,
		"a nested _meta":                                   `"_meta":{` + proto + `,"x.example/n":{"_meta":{"k":["` + key + `"]}}}`,
		"a nested object":                                  `"_meta":{` + proto + `},"extra":{"_meta":{"progressToken":"` + key + `"}}`,
		"a name that is one":                               `"_meta":{` + proto + `},"` + key + `":1`,
		"a _meta key that is one":                          `"_meta":{` + proto + `,"` + key + `":1}`,
		"beside a progress token":                          `"_meta":{` + proto + `,"progressToken":"p1","traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01","x":"` + key + `"}`,
	}
	variants := map[string]string{
		"Name":                     `"_meta":{` + proto + `},"Name":"x"`,
		"ARGUMENTS":                `"_meta":{` + proto + `},"ARGUMENTS":{"who":"` + key + `"}`,
		"_Meta":                    `"_meta":{` + proto + `},"_Meta":{"x":"` + key + `"}`,
		"request_state":            `"_meta":{` + proto + `},"request_state":"` + key + `"`,
		"inputresponses":           `"_meta":{` + proto + `},"inputresponses":{"a":"` + key + `"}`,
		"_meta ProgressToken":      `"_meta":{` + proto + `,"ProgressToken":"` + key + `"}`,
		"_meta TRACEPARENT":        `"_meta":{` + proto + `,"TRACEPARENT":"` + key + `"}`,
		"_meta clientcapabilities": `"_meta":{` + proto + `,"io.modelcontextprotocol/clientcapabilities":{"x":"` + key + `"}}`,
	}
	for _, tg := range targets {
		body := func(rest string) string {
			return `{"jsonrpc":"2.0","id":1,"method":"` + tg.method + `","params":{"name":"` + tg.name + `",` + tg.args + `,` + rest + `}}`
		}
		for what, rest := range refused {
			be.Reset()
			r := mcptest.Do(t, "POST", url, mcptest.RequestHeaders(tg.method, tg.name), body(rest))
			if strings.Contains(string(r.Body), key) || !strings.Contains(string(r.Body), "Refused by guardrail") {
				t.Errorf("%s, %s: %d %.300s", tg.method, what, r.Status, r.Body)
			}
			if n := len(be.RequestsOf(tg.method)); n != 0 {
				t.Errorf("%s, %s: the backend got it", tg.method, what)
			}
		}
		for what, rest := range variants {
			be.Reset()
			r := mcptest.Do(t, "POST", url, mcptest.RequestHeaders(tg.method, tg.name), body(rest))
			if r.RPC.Error == nil || r.RPC.Error.Code != -32602 || strings.Contains(string(r.Body), key) {
				t.Errorf("%s, %s: %d %.300s", tg.method, what, r.Status, r.Body)
			}
			if n := len(be.RequestsOf(tg.method)); n != 0 {
				t.Errorf("%s, %s: the backend got it", tg.method, what)
			}
		}
		// The members left alone are left alone: a clean call goes through.
		be.Reset()
		r := mcptest.Do(t, "POST", url, mcptest.RequestHeaders(tg.method, tg.name),
			body(`"_meta":{`+proto+`,"progressToken":"p1"}`))
		if r.Status != 200 || r.RPC.Error != nil || strings.Contains(string(r.Body), "Refused") || len(be.RequestsOf(tg.method)) != 1 {
			t.Errorf("%s, a clean call: %d %.300s", tg.method, r.Status, r.Body)
		}
	}
	// A 2025-03-26 batch: each message is an element the edge builds a request of.
	raw := &legacyclient.Raw{Protocol: legacyclient.Protocol20250326}
	sid := raw.Initialize(t, url)
	be.Reset()
	call := func(id int, rest string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"be__echo_args","arguments":{"n":%d}%s}}`, id, id, rest)
	}
	r := raw.Post(t, url, sid, "["+strings.Join([]string{call(1, ""),
		call(2, `,"x-note":"`+key+`"`), call(3, `,"_meta":{"x.example/note":{"k":"`+key+`"}}`), call(4, `,"`+key+`":1`),
		call(5, `,"_meta":{"progressToken":"p5"}`)}, ",")+"]")
	if strings.Contains(r.Body, key) || strings.Count(r.Body, "Refused by guardrail") != 3 {
		t.Errorf("2025-03-26 batch: %s", r)
	}
	if n := len(be.RequestsOf("tools/call")); n != 2 {
		t.Errorf("2025-03-26 batch: the backend got %d calls, want the 2 clean ones", n)
	}
	// Through the pre-2026 edge, whose params the edge builds: the client's own _meta member,
	// nested, on a 2026-07-28 backend and on a 2025-11-25 one.
	ctx := context.Background()
	cs := mcptest.Connect(t, url, mcptest.WithProtocolVersion("2025-11-25"))
	for _, prefix := range []string{"be__", "old__"} {
		be.Reset()
		old.Reset()
		meta := mcp.Meta{"x.example/note": map[string]any{"deep": []any{key}}, "progressToken": "p1"}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Meta: meta, Name: prefix + "echo_args", Arguments: map[string]any{"n": 1}})
		if err != nil || !res.IsError || strings.Contains(mcptest.ResultText(res), key) {
			t.Errorf("2025-11-25 %secho_args: %v %+v", prefix, err, res)
		}
		_, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Meta: meta, Name: prefix + "contact"})
		if err == nil || strings.Contains(err.Error(), key) {
			t.Errorf("2025-11-25 %scontact: %v", prefix, err)
		}
		if n := len(be.RequestsOf("tools/call")) + len(old.RequestsOf("tools/call")) + len(be.RequestsOf("prompts/get")) +
			len(old.RequestsOf("prompts/get")); n != 0 {
			t.Errorf("2025-11-25 %s: the backends got %d requests", prefix, n)
		}
	}
}
