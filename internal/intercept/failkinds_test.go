package intercept

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// TestFailureKindsOverTheWire: every way an interceptor's answer can fail on the wire (the
// connection reset before an answer, a 500 or a 503, a redirect to another host, an answer
// whose body drips in past the timeout) is a failure, never a decision, for an Interceptor
// Server and a webhook alike: the call is refused fail-closed and let through fail-open. A
// redirect is never followed: the host it names, which would allow, is not asked.
func TestFailureKindsOverTheWire(t *testing.T) {
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		elsewhere.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"interceptor":"guard","type":"validation","phase":"request","valid":true}`))
	}))
	t.Cleanup(other.Close)
	allow := `{"interceptor":"guard","type":"validation","phase":"request","valid":true}`
	for name, h := range map[string]http.HandlerFunc{
		"reset": func(w http.ResponseWriter, _ *http.Request) {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				_ = conn.Close()
			}
		},
		"500": func(w http.ResponseWriter, _ *http.Request) { http.Error(w, allow, http.StatusInternalServerError) },
		"503": func(w http.ResponseWriter, _ *http.Request) { http.Error(w, allow, http.StatusServiceUnavailable) },
		"redirect": func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
		},
		"drip": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write([]byte(allow[:20]))
			_ = http.NewResponseController(w).Flush()
			<-r.Context().Done()
		},
	} {
		hook := httptest.NewServer(h)
		t.Cleanup(hook.Close)
		for _, webhook := range []bool{false, true} {
			for _, open := range []bool{false, true} {
				cfg := validator("guard", hook.URL)
				cfg.Webhook, cfg.FailOpen, cfg.Timeout = webhook, open, 100*time.Millisecond
				f := newFixture(t, nil, cfg)
				v := f.run(t, PhaseRequest, toolCall(t, `{}`))
				if v.Blocked == open || v.Blocked && !v.Failed {
					t.Errorf("%s (webhook %v, failOpen %v): verdict %+v", name, webhook, open, v)
				}
				if r := f.metrics.last(); r.result != ResultError {
					t.Errorf("%s (webhook %v, failOpen %v): metrics %+v", name, webhook, open, r)
				}
			}
		}
	}
	if n := elsewhere.Load(); n != 0 {
		t.Errorf("a redirect was followed %d times", n)
	}
}
