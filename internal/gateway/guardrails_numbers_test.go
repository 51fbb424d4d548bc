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
