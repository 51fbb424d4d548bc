package helm

import (
	"testing"

	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// TestDisruptionBudgetRendered: a PodDisruptionBudget that lets at least one pod go at the
// release's fewest replicas renders as given (testUnsafe has the ones that let none go).
func TestDisruptionBudgetRendered(t *testing.T) {
	h := newHelm(t)
	redis := "redis.url=redis://r:6379"
	cases := []struct {
		name string
		sets []string
		want *policyv1.PodDisruptionBudgetSpec // nil: no PodDisruptionBudget
	}{
		{"default", nil, &policyv1.PodDisruptionBudgetSpec{MaxUnavailable: new(intstr.FromInt32(1))}},
		{"one of two kept", []string{redis, "replicaCount=2", "podDisruptionBudget.minAvailable=1"},
			&policyv1.PodDisruptionBudgetSpec{MinAvailable: new(intstr.FromInt32(1))}},
		{"half of four kept", []string{redis, "replicaCount=4", "podDisruptionBudget.minAvailable=50%"},
			&policyv1.PodDisruptionBudgetSpec{MinAvailable: new(intstr.FromString("50%"))}},
		{"a share of one let go, rounded up", []string{"podDisruptionBudget.maxUnavailable=25%"},
			&policyv1.PodDisruptionBudgetSpec{MaxUnavailable: new(intstr.FromString("25%"))}},
		{"below the autoscaling floor", []string{redis, "autoscaling.enabled=true", "autoscaling.minReplicas=3", "podDisruptionBudget.minAvailable=2"},
			&policyv1.PodDisruptionBudgetSpec{MinAvailable: new(intstr.FromInt32(2))}},
		{"disabled", []string{"podDisruptionBudget.enabled=false", "podDisruptionBudget.minAvailable=1"}, nil},
		{"no replicas", []string{"replicaCount=0", "podDisruptionBudget.maxUnavailable=0"},
			&policyv1.PodDisruptionBudgetSpec{MaxUnavailable: new(intstr.FromInt32(0))}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := h.renderMinimal(t, tc.sets...)
			if tc.want == nil {
				if n := count[*policyv1.PodDisruptionBudget](m); n != 0 {
					t.Fatalf("%d PodDisruptionBudgets rendered, want none", n)
				}
				return
			}
			got := find[*policyv1.PodDisruptionBudget](t, m, fullname).Spec
			if !sameIntOrString(got.MinAvailable, tc.want.MinAvailable) || !sameIntOrString(got.MaxUnavailable, tc.want.MaxUnavailable) {
				t.Errorf("minAvailable %v, maxUnavailable %v; want %v, %v",
					got.MinAvailable, got.MaxUnavailable, tc.want.MinAvailable, tc.want.MaxUnavailable)
			}
		})
	}
}

func sameIntOrString(a, b *intstr.IntOrString) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
