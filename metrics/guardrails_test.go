package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/mcp-gateway/gateway/internal/guardrails"
)

// The guardrail metrics land on the labels their enumerations name, the guardrail label is
// the detector's own, and nothing outside the closed sets becomes a series.
func TestGuardrailMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	r, err := NewGuardrails(reg)
	if err != nil {
		t.Fatal(err)
	}
	r.Check(guardrails.Secrets, guardrails.DirArguments, guardrails.Block, false)
	r.Check(guardrails.Schema, guardrails.DirResult, guardrails.Off, true)
	r.Check(guardrails.Injection, guardrails.DirNotification, guardrails.Off, false)
	r.Findings(guardrails.DetEmail, guardrails.DirResult, guardrails.Redact, 3)
	r.Findings(guardrails.DetEmail, guardrails.DirResult, guardrails.Off, 3) // not counted
	r.Duration(CheckContent, guardrails.DirResult, 50*time.Microsecond)
	r.Duration("made-up", guardrails.DirResult, time.Millisecond)
	want := `
# HELP mcp_gateway_guardrail_checks_total Guardrail checks by guardrail, direction (arguments, result, notification) and verdict (the strongest action taken, or error).
# TYPE mcp_gateway_guardrail_checks_total counter
mcp_gateway_guardrail_checks_total{direction="arguments",guardrail="secrets",verdict="blocked"} 1
mcp_gateway_guardrail_checks_total{direction="notification",guardrail="injection",verdict="pass"} 1
mcp_gateway_guardrail_checks_total{direction="result",guardrail="schema",verdict="error"} 1
# HELP mcp_gateway_guardrail_findings_total Guardrail findings by guardrail, detector, direction and the action the rule took.
# TYPE mcp_gateway_guardrail_findings_total counter
mcp_gateway_guardrail_findings_total{action="redact",detector="email",direction="result",guardrail="pii"} 3
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), NameGuardrailChecks, NameGuardrailFindings); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(reg, NameGuardrailDuration); n != 2 {
		t.Errorf("%d duration series, want content and _other", n)
	}
	if problems, err := testutil.GatherAndLint(reg); err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %v", err, problems)
	}
	var nilRec *GuardrailRecorder
	nilRec.Check(guardrails.PII, guardrails.DirResult, guardrails.Log, false)
	nilRec.Findings(guardrails.DetJWT, guardrails.DirResult, guardrails.Log, 1)
	nilRec.Duration(CheckSchema, guardrails.DirArguments, time.Second)
}
