package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcp-gateway/gateway/internal/guardrails"
)

// Metric names of the built-in guardrails (docs/guardrails.md).
const (
	// NameGuardrailChecks counts the checks of each guardrail, by direction and verdict.
	NameGuardrailChecks = "mcp_gateway_guardrail_checks_total"
	// NameGuardrailFindings counts findings, by guardrail, detector, direction and action.
	NameGuardrailFindings = "mcp_gateway_guardrail_findings_total"
	// NameGuardrailDuration is the time a check took, by check (schema, or content: the one
	// pass of the secrets, pii and injection detectors) and direction.
	NameGuardrailDuration = "mcp_gateway_guardrail_duration_seconds"
)

// Verdicts of a guardrail's check (label verdict): the strongest action among its findings.
const (
	VerdictPass     = "pass"
	VerdictLogged   = "logged"
	VerdictFlagged  = "flagged"
	VerdictRedacted = "redacted"
	VerdictBlocked  = "blocked"
	// VerdictError is a check that could not be completed (a schema that does not compile, JSON
	// too deep, too many matches to redact): the message was refused.
	VerdictError = "error"
)

// Checks of the duration histogram (label check).
const (
	CheckSchema  = "schema"
	CheckContent = "content"
)

// GuardrailVerdicts returns the closed set of the verdict label, indexed by guardrails.Action
// (pass for Off) and then error.
func GuardrailVerdicts() []string {
	return []string{VerdictPass, VerdictLogged, VerdictFlagged, VerdictRedacted, VerdictBlocked, VerdictError}
}

// GuardrailRecorder records the guardrails' checks. Every label is a closed set indexed by the
// guardrails package's own enumerations, so recording costs an index computation and one
// atomic load. Methods are safe on a nil recorder, where they do nothing.
type GuardrailRecorder struct {
	guardrails, detectors, directions, verdicts, actions, checks closedSet
	checked                                                      *table[prometheus.Counter]  // guardrail × direction × verdict
	found                                                        *table[prometheus.Counter]  // detector × direction × action
	seconds                                                      *table[prometheus.Observer] // check × direction
}

// NewGuardrails registers the guardrail metrics on reg.
func NewGuardrails(reg prometheus.Registerer) (*GuardrailRecorder, error) {
	r := &GuardrailRecorder{
		guardrails: newClosedSet(guardrails.Guardrails()),
		detectors:  newClosedSet(guardrails.Detectors()),
		directions: newClosedSet(guardrails.Directions()),
		verdicts:   newClosedSet(GuardrailVerdicts()),
		actions:    newClosedSet(guardrails.Actions()),
		checks:     newClosedSet([]string{CheckSchema, CheckContent}),
	}
	checked := prometheus.NewCounterVec(prometheus.CounterOpts{Name: NameGuardrailChecks,
		Help: "Guardrail checks by guardrail, direction (arguments, result, notification) and verdict (the strongest action taken, or error)."},
		[]string{"guardrail", "direction", "verdict"})
	found := prometheus.NewCounterVec(prometheus.CounterOpts{Name: NameGuardrailFindings,
		Help: "Guardrail findings by guardrail, detector, direction and the action the rule took."},
		[]string{"guardrail", "detector", "direction", "action"})
	seconds := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: NameGuardrailDuration,
		Help:    "Time a guardrail check took, by check (schema, or content: one pass of every content detector) and direction.",
		Buckets: []float64{.00001, .00002, .00005, .0001, .0002, .0005, .001, .002, .005, .01, .05, .25, 1}},
		[]string{"check", "direction"})
	r.checked = newTable(checked.WithLabelValues, r.guardrails, r.directions, r.verdicts)
	r.found = newTable(func(lvs ...string) prometheus.Counter {
		det, _ := r.detectors.lookup(lvs[0])
		g := Other
		if det < len(guardrails.Detectors()) {
			g = guardrails.Detector(det).Guardrail().String()
		}
		return found.WithLabelValues(g, lvs[0], lvs[1], lvs[2])
	}, r.detectors, r.directions, r.actions)
	r.seconds = newTable(func(lvs ...string) prometheus.Observer { return seconds.WithLabelValues(lvs...) }, r.checks, r.directions)
	if err := registerAll(reg, []prometheus.Collector{checked, found, seconds}); err != nil {
		return nil, err
	}
	return r, nil
}

// Check counts one check of guardrail g in direction d that ended with action a (Off: nothing
// found), or failed.
func (r *GuardrailRecorder) Check(g guardrails.Guardrail, d guardrails.Direction, a guardrails.Action, failed bool) {
	if r == nil {
		return
	}
	v := int(a)
	if failed {
		v = len(GuardrailVerdicts()) - 1
	}
	r.checked.at3(int(g), int(d), v).Inc()
}

// Findings counts n findings of det in direction d, on which the rule took action a (not Off).
func (r *GuardrailRecorder) Findings(det guardrails.Detector, d guardrails.Direction, a guardrails.Action, n int) {
	if r == nil || n == 0 || a == guardrails.Off {
		return
	}
	r.found.at3(int(det), int(d), int(a)-1).Add(float64(n))
}

// Duration observes the time a check took: check is CheckSchema or CheckContent.
func (r *GuardrailRecorder) Duration(check string, d guardrails.Direction, took time.Duration) {
	if r == nil {
		return
	}
	r.seconds.at2(r.checkIndex(check), int(d)).Observe(took.Seconds())
}

// checkIndex is r.checks.of(check) without hashing for the two checks the gateway records on
// every call.
func (r *GuardrailRecorder) checkIndex(check string) int {
	switch check {
	case CheckSchema:
		return 0
	case CheckContent:
		return 1
	}
	return r.checks.of(check)
}
