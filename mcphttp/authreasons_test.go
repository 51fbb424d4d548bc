package mcphttp

import (
	"slices"
	"testing"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/metrics"
)

// TestEveryAuthReasonHasAMetricLabel: each reason authz reports for a refused credential is
// counted under a label of the metrics package's closed set, so a reason added in authz is not
// folded into _other unseen. ReasonOther, an error authz cannot classify, is the one that is.
func TestEveryAuthReasonHasAMetricLabel(t *testing.T) {
	labels := metrics.AuthReasons()
	for _, r := range authz.Reasons() {
		if r == authz.ReasonOther {
			continue
		}
		if l, ok := authReasons[r]; !ok || !slices.Contains(labels, l) {
			t.Errorf("authz reason %q is counted as %q, not one of %v", r, l, labels)
		}
	}
}
