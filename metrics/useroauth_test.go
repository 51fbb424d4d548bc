package metrics

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcp-gateway/gateway/internal/useroauth"
)

// TestUserOAuthMetrics: the names and labels docs/user-oauth.md lists. The upstream label takes
// the per-user backends the process started with, any other name (one added by a reload) is
// _other; event, reason, result and by stay within their closed sets, whatever a caller passes;
// a consent that did not fail has no reason; every backend's series exist before its first
// event.
func TestUserOAuthMetrics(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	u, err := NewUserOAuth(reg, []string{"tracker"})
	if err != nil {
		t.Fatal(err)
	}
	var _ useroauth.Observer = u
	if got := series(t, reg, NameUserOAuthRefreshes)[`{result="invalid_grant",upstream="tracker"}`]; got != 0 {
		t.Fatalf("a refresh series before any refresh: %v", got)
	}
	if _, ok := series(t, reg, NameUserOAuthConsents)[`{event="failed",reason="wrong_user",upstream="tracker"}`]; !ok {
		t.Fatal("the consent failure series are not registered before the first failure")
	}
	u.Consent("tracker", useroauth.ConsentFailed, useroauth.FailWrongUser)
	u.Consent("tracker", useroauth.ConsentCompleted, "ignored")
	u.Consent("added-by-reload", useroauth.ConsentFailed, "not-a-reason")
	u.Refresh("tracker", useroauth.RefreshUnavailable)
	u.Refresh("added-by-reload", "not-a-result")
	u.Revoked("tracker", "admin", 2)
	u.Revoked("tracker", "user", 0)
	u.Revoked("tracker", "not-a-who", 1)
	for _, tc := range []struct {
		name string
		want map[string]float64
	}{
		{NameUserOAuthConsents, map[string]float64{
			`{event="failed",reason="wrong_user",upstream="tracker"}`: 1,
			`{event="completed",reason="none",upstream="tracker"}`:    1,
			`{event="failed",reason="_other",upstream="_other"}`:      1,
		}},
		{NameUserOAuthRefreshes, map[string]float64{
			`{result="unavailable",upstream="tracker"}`: 1,
			`{result="_other",upstream="_other"}`:       1,
		}},
		{NameUserOAuthRevocations, map[string]float64{
			`{by="admin",upstream="tracker"}`:  2,
			`{by="user",upstream="tracker"}`:   0,
			`{by="_other",upstream="tracker"}`: 1,
		}},
	} {
		got := series(t, reg, tc.name)
		for k, v := range tc.want {
			if got[k] != v {
				t.Errorf("%s%s = %v, want %v (all: %v)", tc.name, k, got[k], v, got)
			}
		}
		for k, v := range got {
			if _, ok := tc.want[k]; !ok && v != 0 {
				t.Errorf("%s%s = %v, want no other series moved", tc.name, k, v)
			}
		}
	}
}
