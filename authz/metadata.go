package authz

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/mcp-gateway/gateway/authz/dpop"
)

// wellKnownPRM is the RFC 9728 §3 well-known path segment.
const wellKnownPRM = "/.well-known/oauth-protected-resource"

// ProtectedResourceMetadata is the RFC 9728 §2 document the gateway serves
// as application/json at MetadataURL and RootMetadataURL.
type ProtectedResourceMetadata struct {
	// Resource is the canonical resource URI; required.
	Resource string `json:"resource"`
	// AuthorizationServers are the issuers clients may get tokens from.
	AuthorizationServers []string `json:"authorization_servers,omitempty"`
	// ScopesSupported are the scopes the resource uses.
	ScopesSupported []string `json:"scopes_supported,omitempty"`
	// BearerMethodsSupported is always ["header"]: tokens in the query or
	// body are not accepted.
	BearerMethodsSupported []string `json:"bearer_methods_supported,omitempty"`
	// ResourceName is a human-readable name.
	ResourceName string `json:"resource_name,omitempty"`
	// ResourceDocumentation is a URL of developer documentation.
	ResourceDocumentation string `json:"resource_documentation,omitempty"`
	// ResourcePolicyURI is a URL of the data-use policy.
	ResourcePolicyURI string `json:"resource_policy_uri,omitempty"`
	// ResourceTosURI is a URL of the terms of service.
	ResourceTosURI string `json:"resource_tos_uri,omitempty"`
	// DPoPSigningAlgValuesSupported are the JWS algorithms DPoP proofs may use; absent when
	// DPoP is off (RFC 9728 §2, RFC 9449).
	DPoPSigningAlgValuesSupported []string `json:"dpop_signing_alg_values_supported,omitempty"`
	// DPoPBoundAccessTokensRequired is true when an issuer or a policy rule requires DPoP-bound
	// tokens (RFC 9728 §2).
	DPoPBoundAccessTokensRequired bool `json:"dpop_bound_access_tokens_required,omitempty"`
}

// MetadataURL returns the path-specific well-known URL for resource:
// https://ex.com/public/mcp → https://ex.com/.well-known/oauth-protected-resource/public/mcp
// (RFC 9728 §3.1). A resource without a path gets the root form.
func MetadataURL(resource string) (string, error) {
	u, err := parseResource(resource)
	if err != nil {
		return "", err
	}
	path := strings.TrimSuffix(u.EscapedPath(), "/")
	return u.Scheme + "://" + u.Host + wellKnownPRM + path, nil
}

// RootMetadataURL returns https://host/.well-known/oauth-protected-resource,
// the fallback clients try after the path-specific URL.
func RootMetadataURL(resource string) (string, error) {
	u, err := parseResource(resource)
	if err != nil {
		return "", err
	}
	return u.Scheme + "://" + u.Host + wellKnownPRM, nil
}

func parseResource(resource string) (*url.URL, error) {
	u, err := url.Parse(resource)
	if err != nil || !u.IsAbs() || u.Host == "" || u.Fragment != "" {
		return nil, fmt.Errorf("authz: resource %q is not an absolute URL without fragment", resource)
	}
	return u, nil
}

// CanonicalResource is uri as a WHATWG URL parser spells it, which is how clients (the
// TypeScript SDK sends new URL(resource).href) ask their issuer for a token for the resource the
// metadata document names, and so the audience such a token carries: the scheme and host in lower
// case, the scheme's default port (or an empty one) left out, and "/" for an empty path (RFC 3986
// §6.2.2.1, §6.2.3). Anything else is kept as it is; uri itself when it is not an http(s) URL
// with a host, whose spelling such a parser keeps.
func CanonicalResource(uri string) string {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "https" && u.Scheme != "http" || u.Host == "" {
		return uri
	}
	u.Host = dpop.Authority(u.Scheme, u) // url.Parse has put the scheme in lower case
	if u.Path == "" {
		u.Path, u.RawPath = "/", ""
	}
	return u.String()
}

// resourceAudiences are the audiences of an issuer that lists none: the resource URIs but "",
// each also in its CanonicalResource spelling when that differs, since a token a client asked
// for in that spelling is for the same resource.
func resourceAudiences(uris ...string) []string {
	out := make([]string, 0, 2*len(uris))
	for _, u := range uris {
		for _, a := range []string{u, CanonicalResource(u)} {
			if a != "" && !slices.Contains(out, a) {
				out = append(out, a)
			}
		}
	}
	return out
}
