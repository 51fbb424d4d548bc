package helm

import (
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
)

// checkUserOAuth: with a per-user OAuth backend, the Ingress routes the connect pages' path
// (userOAuth.path, where users consent, the authorization servers redirect back and client
// metadata documents are fetched) and the approval page's on every host, even where the hosts
// list only the MCP endpoint.
func checkUserOAuth(t *testing.T, m manifests, _ gatewayConfig) {
	ing := find[*networkingv1.Ingress](t, m, fullname)
	for _, rule := range ing.Spec.Rules {
		for _, want := range []string{"/link", "/approval"} {
			found := 0
			for _, p := range rule.HTTP.Paths {
				if p.Path == want && p.PathType != nil && *p.PathType == networkingv1.PathTypePrefix &&
					p.Backend.Service.Name == fullname && p.Backend.Service.Port.Name == "mcp" {
					found++
				}
			}
			if found != 1 {
				t.Errorf("host %s: %d Prefix %s paths to the mcp port, want 1, in %+v", rule.Host, found, want, rule.HTTP.Paths)
			}
		}
	}
}
