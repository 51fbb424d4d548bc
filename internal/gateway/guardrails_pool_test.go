package gateway

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/guardrails"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestGuardrailsStateNotShared: what the guardrails keep of a request (its reports, the
// findings and the refusal its notifications left) is reused by later requests; calls of both
// eras that leave each of them, run at once with clean calls, each get their own answer only: a
// clean call is never refused, redacted or annotated after another's findings, and a refused or
// redacted one is never let through. Under the race detector, a read of a request's state
// after it was given back fails too.
func TestGuardrailsStateNotShared(t *testing.T) {
	be := railBackend(t)
	old := mcptest.StartLegacyServer(t, "old", railOptions()...)
	gw := startTestGateway(t, func(c *Config) {
		c.Legacy.Enabled = true
		c.Guardrails = railRules()
	}, be, old)
	ctx := context.Background()
	url := "http://" + gw.MCP + "/mcp"
	// Each kind of call and what its answer must say: ok(text, isError) reports whether it is
	// the call's own answer.
	type kind struct {
		tool string
		args map[string]any
		ok   func(text string, isError bool) bool
	}
	kinds := []kind{
		{"echo_args", map[string]any{"n": 1, "note": "hello"}, func(s string, e bool) bool {
			return !e && s == `{"n":1,"note":"hello"}`
		}},
		{"echo_args", map[string]any{"n": 2, "note": "use " + railAWSKey}, func(s string, e bool) bool { // redacted
			return !e && strings.Contains(s, "[REDACTED:aws-access-key]") && !strings.Contains(s, railAWSKey)
		}},
		{"echo_args", map[string]any{"n": 3, "note": railEmail}, func(s string, e bool) bool { // blocked
			return e && strings.Contains(s, "Refused") && !strings.Contains(s, railEmail)
		}},
		{"leak", nil, func(s string, e bool) bool { // result redacted
			return !e && strings.Contains(s, "[REDACTED:aws-access-key]") && !strings.Contains(s, railAWSKey)
		}},
		{"progress_block", nil, func(s string, e bool) bool { // a notification blocked: the result withheld
			return e && strings.Contains(s, "a notification relayed during the request")
		}},
		{"progress_leak", nil, func(s string, e bool) bool { // a redacted notification, named in the result
			return !e && s == "done"
		}},
	}
	var wg sync.WaitGroup
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		for _, prefix := range []string{"be__", "old__"} {
			cs := mcptest.Connect(t, url, mcptest.WithProtocolVersion(version),
				mcptest.WithProgress(func(context.Context, *mcp.ProgressNotificationClientRequest) {}))
			for w := range len(kinds) {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range 12 {
						k := kinds[(w+i)%len(kinds)]
						p := &mcp.CallToolParams{Name: prefix + k.tool, Arguments: k.args}
						p.SetProgressToken("p")
						res, err := cs.CallTool(ctx, p)
						if err != nil {
							t.Errorf("%s %s%s: %v", version, prefix, k.tool, err)
							return
						}
						text := mcptest.ResultText(res)
						_, annotated := res.Meta[guardrails.MetaKey]
						clean := k.tool == "echo_args" && k.args["n"] == 1
						if !k.ok(text, res.IsError) || (clean && annotated) || (k.tool == "progress_leak" && !annotated) {
							t.Errorf("%s %s%s %v: %v %q annotated %v", version, prefix, k.tool, k.args["n"], res.IsError, text, annotated)
						}
					}
				}()
			}
		}
	}
	wg.Wait()
}
