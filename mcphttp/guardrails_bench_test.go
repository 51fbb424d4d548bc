package mcphttp

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/guardrails"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams"
)

// benchProse is the prose of the typical call (.ci/bench, scenario guardrails-c16).
const benchProse = "Build 48213 of service checkout-api finished on 2026-03-14 at 09:42 UTC with status " +
	"passed after 6m 12s. Stage compile took 71s, unit tests 3m 05s (1,284 tests, 0 failures), " +
	"and integration 1m 48s. Artifacts were published to https://artifacts.example.com/checkout-api/48213 " +
	"and the report is at /var/lib/ci/reports/48213/summary.html. Reviewers: the payments team. "

// BenchmarkForwardToolsCallGuardrails is the typical call of the guardrails' budget (1 KiB of
// prose arguments, a 4 KiB prose result, no finding) through the whole pipeline, without
// guardrails (off) and with the content detectors on both directions (on): the difference is
// what the guardrails cost a call, the glue around the scans included. Schema validation is left
// out (the canned backend lists no tools); internal/guardrails measures it.
func BenchmarkForwardToolsCallGuardrails(b *testing.B) {
	prose := func(n int) string { return strings.Repeat(benchProse, n/len(benchProse)+1)[:n] }
	text, _ := json.Marshal(prose(4096))
	result := `{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":` + string(text) + `}],"resultType":"complete"}}`
	note, _ := json.Marshal(prose(1000))
	body := `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{` + meta +
		`,"name":"be__blob","arguments":{"bytes":4096,"prose":true,"note":` + string(note) + `}}}`
	engine, err := guardrails.New(&guardrails.Config{
		AllowedHosts: []string{"*.example.com"},
		Rules: []guardrails.RuleConfig{{ID: "bench", Tools: []string{"*"},
			Arguments: guardrails.DirectionConfig{Secrets: "redact", PII: "redact"},
			Results:   guardrails.DirectionConfig{Secrets: "redact", PII: "redact", Injection: "flag"}}},
	})
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name   string
		engine *guardrails.Engine
	}{{"off", nil}, {"on", engine}} {
		b.Run(bc.name, func(b *testing.B) {
			backend := mcptest.NewCannedBackendOf([]byte(result), "application/json")
			_, e := testServer(b, Config{}, oneBackend("http://127.0.0.1:9/mcp"), upstreams.Options{Transport: backend},
				Deps{Version: "bench", Guardrails: bc.engine})
			benchPost(b, e, modern("tools/call", "be__blob"), body)
		})
	}
}
