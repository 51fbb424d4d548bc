package mcphttp

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcp-gateway/gateway/internal/guardrails"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/metrics"
	"github.com/mcp-gateway/gateway/upstreams"
)

// benchProse is the prose of the typical call (.ci/bench, scenario guardrails-c16).
const benchProse = "Build 48213 of service checkout-api finished on 2026-03-14 at 09:42 UTC with status " +
	"passed after 6m 12s. Stage compile took 71s, unit tests 3m 05s (1,284 tests, 0 failures), " +
	"and integration 1m 48s. Artifacts were published to https://artifacts.example.com/checkout-api/48213 " +
	"and the report is at /var/lib/ci/reports/48213/summary.html. Reviewers: the payments team. "

// benchBlobTool is the tool of the typical call as .ci/bench's backend lists it, schema and all.
const benchBlobTool = `{"name":"blob","description":"Returns a text of the given number of bytes: x repeated, or prose.",` +
	`"inputSchema":{"type":"object","properties":{"bytes":{"type":"integer"},"prose":{"type":"boolean"},"note":{"type":"string"}},"required":["bytes"]}}`

// typicalCall returns the typical call of the guardrails' budget: its body (1 KiB of prose
// arguments) and the backend's result (4 KiB of prose).
func typicalCall() (body, result string) {
	prose := func(n int) string { return strings.Repeat(benchProse, n/len(benchProse)+1)[:n] }
	text, _ := json.Marshal(prose(4096))
	result = `{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":` + string(text) + `}],"resultType":"complete"}}`
	note, _ := json.Marshal(prose(1000))
	body = `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{` + meta +
		`,"name":"be__blob","arguments":{"bytes":4096,"prose":true,"note":` + string(note) + `}}}`
	return body, result
}

// benchRails is the rule of .ci/bench's gw-rails gateway, with the arguments validated against
// the tool's inputSchema when validate is set.
func benchRails(b testing.TB, validate bool) *guardrails.Engine {
	rc := guardrails.RuleConfig{ID: "bench", Tools: []string{"*"},
		Arguments: guardrails.DirectionConfig{Secrets: "redact", PII: "redact"},
		Results:   guardrails.DirectionConfig{Secrets: "redact", PII: "redact", Injection: "flag"}}
	if validate {
		rc.Validate.Arguments = "block"
	}
	engine, err := guardrails.New(&guardrails.Config{AllowedHosts: []string{"*.example.com"}, Rules: []guardrails.RuleConfig{rc}})
	if err != nil {
		b.Fatal(err)
	}
	return engine
}

// BenchmarkForwardToolsCallGuardrailsValidate is the typical call as .ci/bench's gw-rails
// gateway makes it: the content detectors on both directions and the arguments validated
// against the inputSchema of the tool as its backend lists it (the list fetched once, then
// cached), beside the same gateway without guardrails (off). The difference is what the
// guardrails cost a call, the schema's lookup and validation and the glue around the scans
// included.
func BenchmarkForwardToolsCallGuardrailsValidate(b *testing.B) {
	body, result := typicalCall()
	for _, bc := range []struct {
		name string
		on   bool
	}{{"off", false}, {"on", true}} {
		b.Run(bc.name, func(b *testing.B) {
			be := &pinListBackend{canned: mcptest.NewCannedBackendOf([]byte(result), "application/json"),
				list: []byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":[` + benchBlobTool + `],"ttlMs":600000,"cacheScope":"public","resultType":"complete"}}`)}
			var engine *guardrails.Engine
			var rec *metrics.GuardrailRecorder
			if bc.on {
				engine = benchRails(b, true)
				// The gateway records every check, as serve wires it.
				var err error
				if rec, err = metrics.NewGuardrails(prometheus.NewRegistry()); err != nil {
					b.Fatal(err)
				}
			}
			// As the gateway's serve does: the listed schemas are kept when a rule validates.
			opts := upstreams.Options{Transport: be, ToolSchemas: bc.on}
			_, e := testServer(b, Config{}, oneBackend("http://127.0.0.1:9/mcp"), opts,
				Deps{Version: "bench", Guardrails: engine, GuardrailMetrics: rec})
			benchPostResult(b, e, body)
		})
	}
}

// benchPostResult is benchPost of the typical call that takes only the backend's result,
// relayed: a refusal would measure something else.
func benchPostResult(b *testing.B, e *echo.Echo, body string) {
	b.Helper()
	w := mcptest.NewBenchWriter()
	mcptest.BenchPostTo(b, e, modern("tools/call", "be__blob"), body, w, w, func() bool {
		return w.Code == 200 && bytes.Contains(w.Body.Bytes(), []byte("Build 48213")) && !bytes.Contains(w.Body.Bytes(), []byte(`"isError"`))
	})
}

// BenchmarkForwardToolsCallGuardrails is the typical call of the guardrails' budget (1 KiB of
// prose arguments, a 4 KiB prose result, no finding) through the whole pipeline, without
// guardrails (off) and with the content detectors on both directions (on): the difference is
// what the guardrails cost a call, the glue around the scans included. Schema validation is left
// out (the canned backend lists the tool with an empty schema); internal/guardrails measures it.
func BenchmarkForwardToolsCallGuardrails(b *testing.B) {
	body, result := typicalCall()
	engine := benchRails(b, false)
	for _, bc := range []struct {
		name   string
		engine *guardrails.Engine
	}{{"off", nil}, {"on", engine}} {
		b.Run(bc.name, func(b *testing.B) { benchTypicalCall(b, bc.engine, body, result) })
	}
}

// benchTypicalCall posts the typical call (typicalCall) through a gateway with engine (nil: no
// guardrails) to a canned backend answering result.
func benchTypicalCall(b *testing.B, engine *guardrails.Engine, body, result string) {
	backend := mcptest.NewCannedBackendOf([]byte(result), "application/json").List("tools/list",
		[]byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"blob","inputSchema":{"type":"object"}}],`+
			`"ttlMs":600000,"cacheScope":"public","resultType":"complete"}}`))
	_, e := testServer(b, Config{}, oneBackend("http://127.0.0.1:9/mcp"), upstreams.Options{Transport: backend},
		Deps{Version: "bench", Guardrails: engine})
	benchPost(b, e, modern("tools/call", "be__blob"), body)
}
