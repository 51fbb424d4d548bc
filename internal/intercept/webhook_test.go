package intercept

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestWebhookStatuses: a webhook's 502, 503 and 504 are the interceptor being unavailable, any
// other status but 200 a bad answer; both are failures (fail-closed here), never a decision, and
// counted and logged under their reason (docs/interceptors.md).
func TestWebhookStatuses(t *testing.T) {
	for status, reason := range map[int]string{
		http.StatusBadGateway: ReasonUnavailable, http.StatusServiceUnavailable: ReasonUnavailable,
		http.StatusGatewayTimeout: ReasonUnavailable, http.StatusInternalServerError: ReasonBadResponse,
		http.StatusNotFound: ReasonBadResponse, http.StatusAccepted: ReasonBadResponse,
	} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(status)
				// A body that would read as an allow: the status alone must decide.
				_, _ = w.Write([]byte(`{"interceptor":"guard","type":"validation","phase":"request","valid":true}`))
			}))
			t.Cleanup(hook.Close)
			cfg := validator("guard", hook.URL)
			cfg.Webhook = true
			f := newFixture(t, nil, cfg)
			v := f.run(t, PhaseRequest, toolCall(t, `{}`))
			if !v.Blocked || !v.Failed {
				t.Fatalf("verdict %+v, want a fail-closed failure", v)
			}
			if r := f.metrics.last(); r.result != ResultError || r.reason != reason {
				t.Fatalf("metrics %+v, want reason %s", r, reason)
			}
		})
	}
}
