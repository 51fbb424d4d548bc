package metrics

import (
	"maps"
	"testing"

	"github.com/mcp-gateway/gateway/internal/outcome"
)

// TestLegacyEdgeSeries: the legacy series move by their closed label sets, anything else folds
// into _other, and the existing request series keep their labels.
func TestLegacyEdgeSeries(t *testing.T) {
	r, reg := newTestRecorder(t, Options{Version: "v1"})
	r.LegacySession(LegacySessionInitialized)
	r.LegacySession(LegacySessionOpened)
	r.LegacySession(LegacySessionOpened)
	r.LegacySession(LegacySessionExpired)
	r.LegacySession(LegacySessionRejected)
	r.LegacySession("forged-by-a-client")
	r.LegacyRequest("initialize", outcome.OK)
	r.LegacyRequest("tools/call", outcome.OK)
	r.LegacyRequest("no/such", "weird")
	if got, want := series(t, reg, NameLegacySessions), map[string]float64{
		`{event="initialized"}`: 1, `{event="opened"}`: 2, `{event="expired"}`: 1, `{event="rejected"}`: 1, `{event="_other"}`: 1,
	}; !maps.Equal(got, want) {
		t.Errorf("%s = %v, want %v", NameLegacySessions, got, want)
	}
	if got, want := series(t, reg, NameLegacyRequests), map[string]float64{
		`{method="initialize",outcome="ok"}`: 1, `{method="tools/call",outcome="ok"}`: 1, `{method="_other",outcome="_other"}`: 1,
	}; !maps.Equal(got, want) {
		t.Errorf("%s = %v, want %v", NameLegacyRequests, got, want)
	}
	var nilRecorder *Recorder
	nilRecorder.LegacySession(LegacySessionOpened)
	nilRecorder.LegacyRequest("ping", outcome.OK)
}
