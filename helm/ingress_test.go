package helm

import (
	"strings"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
)

// TestIngressRoutesTheGatewaysPaths: whatever paths a host lists for the gateway, the Ingress
// routes there the OAuth protected resource metadata (path and root forms), which a client reads
// after its first 401 to learn where to sign in: a host listing only "/mcp" left it to the
// Ingress's default backend, and no client could connect. The endpoints are the host's own
// choice: one listing a tool set alone does not get the default endpoint added. With
// authentication off nothing is added.
func TestIngressRoutesTheGatewaysPaths(t *testing.T) {
	h := newHelm(t)
	host := func(path, pathType string) []string {
		return []string{"ingress.enabled=true", "ingress.hosts[0].host=mcp.example.com",
			"ingress.hosts[0].paths[0].path=" + path, "ingress.hosts[0].paths[0].pathType=" + pathType}
	}
	prm := []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"}
	toolset := []string{"config.toolsets[0].name=ro", "config.toolsets[0].include[0].upstream=github"}
	noAuth := []string{"config.auth.disabled=true", "extraArgs={--force}"}
	cases := []struct {
		name        string
		sets        []string
		routed      []string
		notRouted   []string
		wantOnlyOne bool // the host's own path alone
	}{
		{"root", host("/", "Prefix"), append([]string{"/mcp"}, prm...), nil, true},
		{"the endpoint alone", host("/mcp", "Prefix"), append([]string{"/mcp", "/mcp/ro"}, prm...), []string{"/other"}, false},
		{"the endpoint, exactly", host("/mcp", "Exact"), append([]string{"/mcp"}, prm...), []string{"/mcp/x"}, false},
		{"a tool set alone", append(host("/mcp/ro", "Prefix"), toolset...),
			append([]string{"/mcp/ro", "/.well-known/oauth-protected-resource/mcp/ro"}, prm...), []string{"/mcp"}, false},
		{"a longer name is no prefix", host("/.well", "Prefix"), prm, nil, false},
		{"without authentication", append(host("/mcp", "Prefix"), noAuth...), []string{"/mcp"}, prm, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ing := find[*networkingv1.Ingress](t, h.renderMinimal(t, tc.sets...), fullname)
			if len(ing.Spec.Rules) != 1 {
				t.Fatalf("%d rules, want 1", len(ing.Spec.Rules))
			}
			paths := ing.Spec.Rules[0].HTTP.Paths
			for _, p := range tc.routed {
				if !ingressRoutes(paths, p) {
					t.Errorf("%s is not routed to the gateway by %s", p, describePaths(paths))
				}
			}
			for _, p := range tc.notRouted {
				if ingressRoutes(paths, p) {
					t.Errorf("%s is routed to the gateway by %s, which the host did not ask for", p, describePaths(paths))
				}
			}
			if tc.wantOnlyOne && len(paths) != 1 {
				t.Errorf("paths %s, want the host's own alone", describePaths(paths))
			}
		})
	}
}

// ingressRoutes reports whether one of paths sends a request for p to the gateway's mcp port,
// matching as Kubernetes defines Exact and Prefix (a prefix of whole path elements).
func ingressRoutes(paths []networkingv1.HTTPIngressPath, p string) bool {
	for _, ip := range paths {
		if ip.Backend.Service == nil || ip.Backend.Service.Name != fullname || ip.Backend.Service.Port.Name != "mcp" || ip.PathType == nil {
			continue
		}
		switch *ip.PathType {
		case networkingv1.PathTypeExact:
			if ip.Path == p {
				return true
			}
		case networkingv1.PathTypePrefix:
			prefix := strings.TrimSuffix(ip.Path, "/")
			if prefix == "" || p == prefix || strings.HasPrefix(p, prefix+"/") {
				return true
			}
		}
	}
	return false
}

func describePaths(paths []networkingv1.HTTPIngressPath) string {
	var b strings.Builder
	for _, ip := range paths {
		b.WriteString(" " + ip.Path)
		if ip.PathType != nil {
			b.WriteString("(" + string(*ip.PathType) + ")")
		}
	}
	return "[" + strings.TrimSpace(b.String()) + "]"
}
