package helm

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestAdminServiceNeverPublished: whatever service.type publishes the MCP port (a LoadBalancer,
// a NodePort), the admin port (probes, readiness, metrics, plain HTTP) is on a Service of its
// own that is ClusterIP, so it is never published with it. Before, it was a second port of the
// MCP Service, and a LoadBalancer put it on the load balancer too.
func TestAdminServiceNeverPublished(t *testing.T) {
	t.Parallel()
	h := newHelm(t)
	for _, typ := range []string{"ClusterIP", "LoadBalancer", "NodePort"} {
		m := h.renderMinimal(t, "service.type="+typ)
		mcp := find[*corev1.Service](t, m, fullname)
		if string(mcp.Spec.Type) != typ {
			t.Errorf("%s: MCP Service type %q", typ, mcp.Spec.Type)
		}
		for _, p := range mcp.Spec.Ports {
			if p.Name != "mcp" {
				t.Errorf("%s: MCP Service publishes port %q (%d)", typ, p.Name, p.Port)
			}
		}
		admin := find[*corev1.Service](t, m, fullname+"-admin")
		if admin.Spec.Type != corev1.ServiceTypeClusterIP {
			t.Errorf("%s: admin Service type %q, want ClusterIP", typ, admin.Spec.Type)
		}
		if len(admin.Spec.Ports) != 1 || admin.Spec.Ports[0].Name != "admin" || admin.Spec.Ports[0].Port != 9090 {
			t.Errorf("%s: admin Service ports %+v, want admin on 9090", typ, admin.Spec.Ports)
		}
	}
}
