package useroauth

import (
	"errors"
	"net/http"
	"net/netip"

	"github.com/mcp-gateway/gateway/internal/egress"
)

// Where the gateway goes for a backend's authorization server. The backend's URL and a
// configured auth.authServer are the operator's; every other address comes from documents the
// backend and its authorization server serve, and is held to these rules before the gateway
// sends anything there (codes, client secrets, refresh tokens):
//
//   - never a link-local, unspecified or multicast address (169.254.169.254, the cloud
//     metadata service, among them), whoever names it (egress.Named, on the URL);
//   - a loopback host (127.0.0.0/8, ::1, localhost) only when the document comes from a
//     loopback host itself (a development setup on one machine): a backend or authorization
//     server elsewhere cannot send the gateway's requests to services listening on its own
//     machine (its admin listener among them) (egress.Named);
//   - https, or http on a loopback host (checkEndpoint);
//   - and, whatever a name resolves to, the default client connects only where internal/egress
//     allows: no link-local, unspecified or multicast address, and loopback only under a
//     loopback name or a host the operator configured (the backend's URL, auth.authServer), so
//     a name is held to the rule of its address; the operator's userOAuth.allowAddresses are
//     reached whatever their class.
//
// Private addresses (10/8, 172.16/12, 192.168/16) are allowed: authorization servers inside an
// organisation live there, and https is required of them.

// dialPolicy is where the default client connects for backends: the egress rule, with the
// hosts of their URLs and configured authorization servers as the operator's, and the
// operator's allowed prefixes.
func dialPolicy(backends []Backend, allow []netip.Prefix) *egress.Policy {
	var urls []string
	for _, b := range backends {
		urls = append(urls, b.URL, b.AuthServer)
	}
	return &egress.Policy{Allow: allow, Hosts: egress.HostsOf(urls...)}
}

// defaultClient is the client a Service for backends uses unless its Deps give one, and the
// one ProbeAuthServer uses: cfg's allowed prefixes, and every backend's hosts as the operator's.
func defaultClient(cfg Config, backends []Backend) *http.Client {
	return defaultHTTPClient(dialPolicy(backends, cfg.allowPrefixes()))
}

// defaultHTTPClient reaches backends' metadata and authorization servers: no redirect followed
// (a redirect would take a code or token elsewhere), and a connection only where p allows.
func defaultHTTPClient(p *egress.Policy) *http.Client {
	return &http.Client{Transport: p.Transport(nil), CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// unreachable describes why a request to an authorization server or metadata got no answer:
// the egress refusal (which names the host and the address, nothing of the request), or
// "unreachable".
func unreachable(err error) string {
	if r := (*egress.RefusedError)(nil); errors.As(err, &r) {
		return "unreachable: " + r.Error()
	}
	return "unreachable"
}
