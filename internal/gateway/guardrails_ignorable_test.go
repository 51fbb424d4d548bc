package gateway

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/guardrails"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestGuardrailsIgnorableInside: a credential with a default-ignorable character inside it
// (zero-width space, soft hyphen, word joiner, variation selector, tag character, byte order
// mark), raw or as a JSON escape, is the credential to any reader that drops what it does not
// display: in the arguments it refuses the call where the rule redacts (the backend receives
// nothing), and in a result it withholds the result, in both eras. A call whose text merely holds
// such characters goes through unchanged.
func TestGuardrailsIgnorableInside(t *testing.T) {
	hide := func(s, mark string) string { return s[:4] + mark + s[4:] }
	marks := []string{"\u200b", "\u00ad", "\u2060", "\ufe0f", "\U000E0041", "\ufeff", "\u200b\u200c\u200d"}
	leak := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "key " + hide(railAWSKey, "\u2060")}}}, nil
	}
	alpha := mcptest.StartServer(t, "alpha", mcptest.WithTool(&mcp.Tool{Name: "leak", InputSchema: map[string]any{"type": "object"}}, leak))
	gw := startTestGateway(t, func(c *Config) {
		c.Legacy.Enabled = true
		c.Guardrails = guardrails.Config{Rules: []guardrails.RuleConfig{
			{ID: "args", Tools: []string{"echo"}, Arguments: guardrails.DirectionConfig{Secrets: "redact"}},
			{ID: "results", Tools: []string{"leak"}, Results: guardrails.DirectionConfig{Secrets: "redact"}},
		}}
	}, alpha)
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(version, func(t *testing.T) {
			cs := mcptest.Connect(t, "http://"+gw.MCP+"/mcp", mcptest.WithProtocolVersion(version))
			alpha.Reset()
			for _, m := range marks {
				for _, secret := range []string{hide(railAWSKey, m), hide(railGHToken, m)} {
					res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": "my key " + secret}})
					if err != nil || !res.IsError || !strings.Contains(mcptest.ResultText(res), `guardrail rule "args"`) {
						t.Errorf("%q inside: %v %+v", m, err, res)
					}
				}
			}
			if n := len(alpha.RequestsOf("tools/call")); n != 0 {
				t.Errorf("the backend got %d refused calls", n)
			}
			text := "caf\u00e9 \u200bzero-width and \U0001F469\u200d\U0001F4BB"
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": text}})
			if err != nil || res.IsError || mcptest.ResultText(res) != text {
				t.Errorf("a text with such characters and nothing hidden: %v %+v", err, res)
			}
			res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__leak", Arguments: map[string]any{}})
			if err != nil || !res.IsError || strings.Contains(mcptest.ResultText(res), railAWSKey[4:]) {
				t.Errorf("a result with a credential so hidden: %v %+v", err, res)
			}
		})
	}
}

// TestGuardrailsLoneSurrogateInside: a credential split by the \u escape of a lone surrogate is
// read by the gateway (encoding/json) with U+FFFD inside, but a backend that parses with
// JSON.parse or Python keeps the surrogate, and writes the credential whole wherever its UTF-8
// encoder drops it. Such a message is read a second time without it, as without a
// default-ignorable character: a credential found only then refuses the call, and the backend
// gets nothing.
func TestGuardrailsLoneSurrogateInside(t *testing.T) {
	alpha := mcptest.StartServer(t, "alpha")
	gw := startTestGateway(t, func(c *Config) {
		c.Guardrails = guardrails.Config{Rules: []guardrails.RuleConfig{
			{ID: "args", Tools: []string{"echo"}, Arguments: guardrails.DirectionConfig{Secrets: "redact"}},
		}}
	}, alpha)
	url := "http://" + gw.MCP + "/mcp"
	for _, mark := range []string{`\ud800`, `\udfff`, `\udbff\ud800`, `\ud83d`} {
		for _, secret := range []string{railAWSKey, railGHToken} {
			hidden := secret[:4] + mark + secret[4:]
			alpha.Reset()
			r := mcptest.Do(t, "POST", url, mcptest.RequestHeaders("tools/call", "alpha__echo"),
				mcptest.Body("tools/call", `,"name":"alpha__echo","arguments":{"text":"my key `+hidden+`"}`))
			if res := string(r.RPC.Result); r.Status != 200 || !strings.Contains(res, `guardrail rule \"args\"`) {
				t.Errorf("%s inside: %d %s", mark, r.Status, r.Body)
			}
			if n := len(alpha.RequestsOf("tools/call")); n != 0 {
				t.Errorf("%s inside: the backend got %d calls", mark, n)
			}
		}
	}
	// A lone surrogate with nothing hidden around it is forwarded as it is.
	alpha.Reset()
	r := mcptest.Do(t, "POST", url, mcptest.RequestHeaders("tools/call", "alpha__echo"),
		mcptest.Body("tools/call", `,"name":"alpha__echo","arguments":{"text":"half an emoji \ud83d"}`))
	if res := string(r.RPC.Result); r.Status != 200 || strings.Contains(res, "isError") {
		t.Errorf("a lone surrogate alone: %d %s", r.Status, r.Body)
	}
}

// TestGuardrailsControlInside: a credential split by a control character (NUL, an escape, DEL,
// a C1 control; written as a \u escape, as the short \b or \f, or raw where JSON allows it) is
// not what the detectors match, yet it is the credential to a backend that drops control
// characters from its input, as sanitisers and stores that refuse NUL do. It is read a second
// time without them, as without a default-ignorable character: found only then, it refuses
// the call and the backend gets nothing. Tabs and line breaks are white space, not hidden: a
// text with them and nothing hidden is forwarded, and so is one with a control alone.
func TestGuardrailsControlInside(t *testing.T) {
	alpha := mcptest.StartServer(t, "alpha")
	gw := startTestGateway(t, func(c *Config) {
		c.Guardrails = guardrails.Config{Rules: []guardrails.RuleConfig{
			{ID: "args", Tools: []string{"echo"}, Arguments: guardrails.DirectionConfig{Secrets: "redact"}},
		}}
	}, alpha)
	url := "http://" + gw.MCP + "/mcp"
	call := func(text string) *mcptest.Response {
		return mcptest.Do(t, "POST", url, mcptest.RequestHeaders("tools/call", "alpha__echo"),
			mcptest.Body("tools/call", `,"name":"alpha__echo","arguments":{"text":"my key `+text+`"}`))
	}
	for _, mark := range []string{`\u0000`, `\u001b`, `\u007f`, "\x7f", `\u0085`, "\u0085", `\b`, `\f`, `\u0000\u0000`} {
		for _, secret := range []string{railAWSKey, railGHToken} {
			alpha.Reset()
			r := call(secret[:4] + mark + secret[4:])
			if res := string(r.RPC.Result); r.Status != 200 || !strings.Contains(res, `guardrail rule \"args\"`) {
				t.Errorf("%q inside: %d %s", mark, r.Status, r.Body)
			}
			if n := len(alpha.RequestsOf("tools/call")); n != 0 {
				t.Errorf("%q inside: the backend got %d calls", mark, n)
			}
		}
	}
	for _, text := range []string{`a\tb\nc\r\n`, `nul \u0000 alone`, "del \x7f alone", `\b\f`} {
		alpha.Reset()
		if r := call(text); r.Status != 200 || strings.Contains(string(r.RPC.Result), "isError") || len(alpha.RequestsOf("tools/call")) != 1 {
			t.Errorf("%q with nothing hidden: %d %s", text, r.Status, r.Body)
		}
	}
}
