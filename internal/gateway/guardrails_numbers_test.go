package gateway

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/guardrails"
)

// TestGuardrailsSchemaNumbersReadAlike: the schema guardrail judges a number as every parser
// reads it, or refuses it. Behind it here is a backend that reads numbers as their literal, as
// decimal-exact decoders do (Python's int and Decimal, Java's BigDecimal, Go's integer fields
// and json.Number); the validator reads doubles. An integer beyond 2^53 and a decimal finer
// than a double, each a double at the schema's maximum but above it as written, are refused and
// reach no backend; the maximum itself, and a number every parser reads alike, are forwarded.
func TestGuardrailsSchemaNumbersReadAlike(t *testing.T) {
	modern, legacy := startStructBackend(t, "m", false), startStructBackend(t, "l", true)
	for _, sb := range []*structBackend{modern, legacy} {
		sb.tools = `[{"name":"set_region","inputSchema":{"type":"object","properties":{"region":{"type":"string"},` +
			`"quota":{"type":"number","maximum":9007199254740992}}}}]`
	}
	gw := startTestGateway(t, func(c *Config) {
		c.Upstreams = []UpstreamConfig{modern.upstream(), legacy.upstream()}
		c.Guardrails = guardrails.Config{Rules: []guardrails.RuleConfig{{ID: "n", Tools: []string{"*"},
			Validate: guardrails.ValidateConfig{Arguments: "block"}}}}
	})
	url := "http://" + gw.MCP + "/mcp"
	for _, sb := range []*structBackend{modern, legacy} {
		call := setRegionCaller(url, sb)
		for _, tt := range []struct {
			quota   string
			refused bool
		}{
			{"9007199254740993", true},
			{"9007199254740992.5", true},
			{"9.0071992547409925e15", true},
			{"9007199254740992", false},
			{"9.007199254740992e15", false},
			{"0.1", false},
		} {
			sb.reset()
			status, body := call(t, `"quota":`+tt.quota)
			got := sb.received()
			if tt.refused {
				if status != http.StatusOK || !strings.Contains(body, `"isError":true`) || !strings.Contains(body, "/quota") || len(got) != 0 {
					t.Errorf("%s: quota %s: %d %s; the backend acted on %+v", sb.name, tt.quota, status, body, got)
				}
				continue
			}
			if status != http.StatusOK || strings.Contains(body, `"isError":true`) || len(got) != 1 || got[0].Repo != tt.quota {
				t.Errorf("%s: quota %s: %d %s; the backend acted on %+v", sb.name, tt.quota, status, body, got)
			}
		}
	}
}

// TestGuardrailsSchemaMultipleOfExact: multipleOf is judged on the numbers as written, not on
// the division of two doubles, which rounds 1e20 / 3 to an integer; and a schema whose own bound
// a double rounds (9007199254740991.5, read as 9007199254740992) fails every check rather than
// let through an argument above the bound as written. The backend reads the literal.
func TestGuardrailsSchemaMultipleOfExact(t *testing.T) {
	thirds, rounded := startStructBackend(t, "m", false), startStructBackend(t, "r", false)
	thirds.tools = `[{"name":"set_region","inputSchema":{"type":"object","properties":{"quota":{"type":"integer","multipleOf":3}}}}]`
	rounded.tools = `[{"name":"set_region","inputSchema":{"type":"object","properties":{"quota":{"type":"integer","maximum":9007199254740991.5}}}}]`
	gw := startTestGateway(t, func(c *Config) {
		c.Upstreams = []UpstreamConfig{thirds.upstream(), rounded.upstream()}
		c.Guardrails = guardrails.Config{Rules: []guardrails.RuleConfig{{ID: "n", Tools: []string{"*"},
			Validate: guardrails.ValidateConfig{Arguments: "block"}}}}
	})
	url := "http://" + gw.MCP + "/mcp"
	for _, tt := range []struct {
		sb      *structBackend
		quota   string
		refused bool
	}{
		{thirds, "1e20", true},
		{thirds, "100000000000000000000", true},
		{thirds, "6e20", false},
		{thirds, "9", false},
		{rounded, "9007199254740992", true},
		{rounded, "1", true},
	} {
		tt.sb.reset()
		status, body := setRegionCaller(url, tt.sb)(t, `"quota":`+tt.quota)
		got := tt.sb.received()
		if tt.refused {
			if status != http.StatusOK || !strings.Contains(body, `"isError":true`) || len(got) != 0 {
				t.Errorf("%s: quota %s: %d %s; the backend acted on %+v", tt.sb.name, tt.quota, status, body, got)
			}
			continue
		}
		if status != http.StatusOK || strings.Contains(body, `"isError":true`) || len(got) != 1 || got[0].Repo != tt.quota {
			t.Errorf("%s: quota %s: %d %s; the backend acted on %+v", tt.sb.name, tt.quota, status, body, got)
		}
	}
}
