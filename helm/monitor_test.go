package helm

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestServiceMonitorDurations: the ServiceMonitor's interval and scrapeTimeout are durations as
// the Prometheus Operator takes them (its CRD refuses Go's fractions and µs, and takes days and
// weeks), and the timeout is no longer than the interval, which Prometheus refuses (the whole
// ServiceMonitor is then dropped and the gateway not scraped). Both are refused at render time.
func TestServiceMonitorDurations(t *testing.T) {
	h := newHelm(t)
	on := "metrics.serviceMonitor.enabled=true"
	cases := []struct {
		name, interval, timeout string
		refused                 string // "" renders
	}{
		{"defaults", "", "", ""},
		{"minutes and seconds", "1m30s", "45s", ""},
		{"a day", "1d", "1m", ""},
		{"timeout as long as the interval", "15s", "15s", ""},
		{"a shorter interval than the default timeout", "5s", "", "scrapeTimeout 10s is longer than metrics.serviceMonitor.interval 5s"},
		{"timeout over the interval", "1m", "90s", "scrapeTimeout 90s is longer than metrics.serviceMonitor.interval 1m"},
		{"a fraction", "1.5m", "", "/metrics/serviceMonitor/interval"},
		{"microseconds", "30s", "500us", "/metrics/serviceMonitor/scrapeTimeout"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sets := []string{on}
			if tc.interval != "" {
				sets = append(sets, "metrics.serviceMonitor.interval="+tc.interval)
			}
			if tc.timeout != "" {
				sets = append(sets, "metrics.serviceMonitor.scrapeTimeout="+tc.timeout)
			}
			out, err := h.template(t, []string{"minimal.yaml"}, sets...)
			if tc.refused != "" {
				if err == nil || !strings.Contains(err.Error(), tc.refused) {
					t.Fatalf("rendering: %v, want a refusal containing %q", err, tc.refused)
				}
				return
			}
			if err != nil {
				t.Fatalf("helm template: %v", err)
			}
			sms := decodeAll(t, out).customByKind("ServiceMonitor")
			if len(sms) != 1 {
				t.Fatalf("%d ServiceMonitors rendered", len(sms))
			}
			eps, _, _ := unstructured.NestedSlice(sms[0].Object, "spec", "endpoints")
			ep, _ := eps[0].(map[string]any)
			if tc.interval != "" && (ep["interval"] != tc.interval || ep["scrapeTimeout"] != orDefault(tc.timeout, "10s")) {
				t.Errorf("endpoint interval %v, scrapeTimeout %v; want %s, %s", ep["interval"], ep["scrapeTimeout"], tc.interval, orDefault(tc.timeout, "10s"))
			}
		})
	}
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
