package helm

import (
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
)

// checkApproval: with the approval page configured, the Ingress routes its path on every host
// even where the hosts list only the MCP endpoint, and the page's settings reach config.yaml.
func checkApproval(t *testing.T, m manifests, cfg gatewayConfig) {
	ing := find[*networkingv1.Ingress](t, m, fullname)
	for _, rule := range ing.Spec.Rules {
		found := false
		for _, p := range rule.HTTP.Paths {
			if p.Path == "/approval" && p.PathType != nil && *p.PathType == networkingv1.PathTypePrefix &&
				p.Backend.Service.Name == fullname && p.Backend.Service.Port.Name == "mcp" {
				found = true
			}
		}
		if !found {
			t.Errorf("host %s: no Prefix /approval path to the mcp port in %+v", rule.Host, rule.HTTP.Paths)
		}
	}
	if cfg.Approval.ClientID != "mcp-gateway-approval" || cfg.Approval.ClientSecret == nil ||
		cfg.Approval.ClientSecret.File != secretsDir+"/approval-client-secret" {
		t.Errorf("approval = %+v", cfg.Approval)
	}
	if len(cfg.Auth.Policy.Rules) == 0 || cfg.Auth.Policy.Rules[0].Confirm != "url" {
		t.Errorf("policy rules = %+v", cfg.Auth.Policy.Rules)
	}
}
