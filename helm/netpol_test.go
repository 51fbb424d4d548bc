package helm

import (
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	networkingv1 "k8s.io/api/networking/v1"
)

// TestEgressReachesTheInChartRedis: when networkPolicy.egress restricts the gateway's
// connections, the in-chart Redis the chart itself deploys stays reachable (its own policy admits
// the gateway, so the gateway's must let it out), whatever rules the operator listed; with egress
// left open (null) the policy restricts nothing.
func TestEgressReachesTheInChartRedis(t *testing.T) {
	h := newHelm(t)
	dns := []string{"networkPolicy.egress[0].ports[0].port=53", "networkPolicy.egress[0].ports[0].protocol=UDP"}
	cases := []struct {
		name       string
		sets       []string
		wantEgress bool
	}{
		{"rules listed", dns, true},
		{"egress open", nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sets := append([]string{"redis.internal.enabled=true", "networkPolicy.enabled=true"}, tc.sets...)
			m := h.renderMinimal(t, sets...)
			np := find[*networkingv1.NetworkPolicy](t, m, fullname)
			restricted := false
			for _, pt := range np.Spec.PolicyTypes {
				restricted = restricted || pt == networkingv1.PolicyTypeEgress
			}
			if restricted != tc.wantEgress {
				t.Fatalf("policy types %v, want egress restricted: %v", np.Spec.PolicyTypes, tc.wantEgress)
			}
			if !tc.wantEgress {
				return
			}
			redis := find[*appsv1.Deployment](t, m, fullname+"-redis").Spec.Template.Labels
			reaches := false
			for _, rule := range np.Spec.Egress {
				for _, peer := range rule.To {
					if peer.PodSelector == nil || peer.NamespaceSelector != nil || peer.IPBlock != nil || !selectorMatches(t, peer.PodSelector, redis) {
						continue
					}
					for _, p := range rule.Ports {
						reaches = reaches || (p.Port != nil && p.Port.IntValue() == 6379)
					}
				}
			}
			if !reaches {
				t.Errorf("egress %+v lets the gateway reach no in-chart Redis pod on 6379", np.Spec.Egress)
			}
			if len(np.Spec.Egress) < 2 {
				t.Errorf("egress %+v, want the rules listed kept", np.Spec.Egress)
			}
		})
	}
}

// TestEgressDeniedWholeRefused: networkPolicy.egress as an empty list (not null) is a policy
// with no egress rule, which denies every connection the gateway makes (DNS, the issuers, the
// backends, Redis): the pods would be ready and fail every request. Rendering refuses it.
func TestEgressDeniedWholeRefused(t *testing.T) {
	h := newHelm(t)
	_, err := h.run(t, "template", releaseName, chartDir, "--namespace", namespace,
		"--values", filepath.Join("helm", "testdata", "minimal.yaml"),
		"--set", "networkPolicy.enabled=true", "--set-json", "networkPolicy.egress=[]")
	if err == nil || !strings.Contains(err.Error(), "networkPolicy.egress is an empty list") {
		t.Fatalf("rendering: %v, want a refusal of the empty egress list", err)
	}
}
