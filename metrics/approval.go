package metrics

import (
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcp-gateway/gateway/internal/approval"
)

// Metric names of the approval page (docs/approval.md).
const (
	// NameApprovalPages counts approval pages shown with their Approve and Deny buttons.
	NameApprovalPages = "mcp_gateway_approval_pages_total"
	// NameApprovalSignIns counts sign-ins on the page by result (ok, failed).
	NameApprovalSignIns = "mcp_gateway_approval_sign_ins_total"
	// NameApprovalDecisions counts decisions recorded, by decision (approved, denied).
	NameApprovalDecisions = "mcp_gateway_approval_decisions_total"
	// NameApprovalRefusals counts what the page refused, by reason (approval.RefusalReasons).
	NameApprovalRefusals = "mcp_gateway_approval_refusals_total"
)

// Approval records the approval page's events. Its label values are closed sets, every series
// exists from the start, and anything outside a set is counted as Other. It implements
// approval.Observer; a nil *Approval records nothing.
type Approval struct {
	pages     prometheus.Counter
	signIns   *prometheus.CounterVec
	decisions *prometheus.CounterVec
	refusals  *prometheus.CounterVec
}

// NewApproval registers the approval page's metrics with reg.
func NewApproval(reg prometheus.Registerer) (*Approval, error) {
	a := &Approval{
		pages: prometheus.NewCounter(prometheus.CounterOpts{Name: NameApprovalPages,
			Help: "Approval pages shown to the signed-in caller with Approve and Deny."}),
		signIns: prometheus.NewCounterVec(prometheus.CounterOpts{Name: NameApprovalSignIns,
			Help: "Sign-ins on the approval page, by result."}, []string{"result"}),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: NameApprovalDecisions,
			Help: "Decisions recorded on the approval page."}, []string{"decision"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{Name: NameApprovalRefusals,
			Help: "Requests the approval page refused, by reason."}, []string{"reason"}),
	}
	for _, r := range []string{"ok", "failed"} {
		a.signIns.WithLabelValues(r)
	}
	for _, d := range []string{string(approval.Approved), string(approval.Denied), Other} {
		a.decisions.WithLabelValues(d)
	}
	for _, r := range append(approval.RefusalReasons(), Other) {
		a.refusals.WithLabelValues(r)
	}
	for _, c := range []prometheus.Collector{a.pages, a.signIns, a.decisions, a.refusals} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// PageShown counts one page shown with its buttons.
func (a *Approval) PageShown() {
	if a != nil {
		a.pages.Inc()
	}
}

// SignIn counts one sign-in by result.
func (a *Approval) SignIn(ok bool) {
	if a == nil {
		return
	}
	if ok {
		a.signIns.WithLabelValues("ok").Inc()
		return
	}
	a.signIns.WithLabelValues("failed").Inc()
}

// Decided counts one recorded decision.
func (a *Approval) Decided(v approval.Verdict) {
	if a == nil {
		return
	}
	label := string(v)
	if v != approval.Approved && v != approval.Denied {
		label = Other
	}
	a.decisions.WithLabelValues(label).Inc()
}

// Refused counts one refusal by reason.
func (a *Approval) Refused(reason string) {
	if a == nil {
		return
	}
	if !slices.Contains(approval.RefusalReasons(), reason) {
		reason = Other
	}
	a.refusals.WithLabelValues(reason).Inc()
}
