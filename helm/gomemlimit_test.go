package helm

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
)

// TestGoMemLimit: the gateway's Go runtime gets GOMEMLIMIT at goMemLimitPercent of the
// container's memory limit, so that its garbage collector works harder before the pod would be
// OOM-killed (issue 22 §3); an explicit goMemLimit wins, "off" or no limit sets none, and a
// limit the chart cannot read fails the render instead of being guessed.
func TestGoMemLimit(t *testing.T) {
	h := newHelm(t)
	tests := []struct {
		name string
		sets []string
		want string // "" for no GOMEMLIMIT
		fail string // a substring of the render error
	}{
		{"chart default 256Mi", nil, "241591910", ""},
		{"1Gi", []string{"resources.limits.memory=1Gi"}, "966367641", ""},
		{"decimal 500M at 80%", []string{"resources.limits.memory=500M", "goMemLimitPercent=80"}, "400000000", ""},
		{"plain bytes", []string{"resources.limits.memory=1000000000"}, "900000000", ""},
		{"explicit", []string{"goMemLimit=200MiB"}, "200MiB", ""},
		{"off", []string{"goMemLimit=off"}, "", ""},
		{"no limit", []string{"resources.limits=null"}, "", ""},
		{"unreadable limit", []string{"resources.limits.memory=1.5Gi"}, "", "cannot derive GOMEMLIMIT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, err := h.template(t, []string{"minimal.yaml"}, tt.sets...)
			if tt.fail != "" {
				if err == nil || !strings.Contains(err.Error(), tt.fail) {
					t.Fatalf("render error %v, want one containing %q", err, tt.fail)
				}
				return
			}
			if err != nil {
				t.Fatalf("helm template: %v", err)
			}
			c := gatewayContainer(t, find[*appsv1.Deployment](t, decodeAll(t, out), fullname).Spec.Template.Spec)
			got, n := "", 0
			for _, e := range c.Env {
				if e.Name == "GOMEMLIMIT" {
					got, n = e.Value, n+1
				}
			}
			if n > 1 || got != tt.want {
				t.Fatalf("GOMEMLIMIT = %q (%d times), want %q", got, n, tt.want)
			}
		})
	}
}
