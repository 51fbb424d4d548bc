package helm

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
)

// TestPreStopSleep: drain.preStopSleepSeconds is the preStop sleep, and 0 (the schema's
// minimum) renders no preStop hook rather than a sleep of 0 seconds, which Kubernetes before 1.33
// refuses ("must be greater than 0") on the chart's minimum version, 1.30.
func TestPreStopSleep(t *testing.T) {
	h := newHelm(t)
	for _, tc := range []struct {
		seconds string
		want    int64 // 0: no hook
	}{{"5", 5}, {"0", 0}, {"1", 1}} {
		t.Run(tc.seconds, func(t *testing.T) {
			t.Parallel()
			m := h.renderMinimal(t, "drain.preStopSleepSeconds="+tc.seconds)
			c := gatewayContainer(t, find[*appsv1.Deployment](t, m, fullname).Spec.Template.Spec)
			switch {
			case tc.want == 0 && c.Lifecycle != nil && c.Lifecycle.PreStop != nil:
				t.Errorf("preStop = %+v, want none", c.Lifecycle.PreStop)
			case tc.want > 0 && (c.Lifecycle == nil || c.Lifecycle.PreStop == nil || c.Lifecycle.PreStop.Sleep == nil || c.Lifecycle.PreStop.Sleep.Seconds != tc.want):
				t.Errorf("lifecycle = %+v, want a preStop sleep of %d s", c.Lifecycle, tc.want)
			}
		})
	}
}
