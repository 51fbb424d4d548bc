package authz

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
)

// TestIssuerWithOAuthMetadataOnly: an authorization server may publish RFC 8414 metadata and no
// OpenID Connect discovery document (MCP requires one of the two of it). Where the discovery
// document is not found, the key set is found through the RFC 8414 document at
// /.well-known/oauth-authorization-server, with the issuer's path after it (RFC 8414 §3.1),
// held to the same rules: its "issuer" is the configured one exactly, or the issuer stays
// unavailable. Any other failure of the discovery document is not taken for its absence.
func TestIssuerWithOAuthMetadataOnly(t *testing.T) {
	clk := newClock()
	iss := startIssuer(t, clk)
	for _, tt := range []struct {
		name, path, names string // names: the issuer the RFC 8414 document names; "" for itself
		oidc              int    // the status of the discovery document
		want              error
	}{
		{"issuer without a path", "", "", http.StatusNotFound, nil},
		{"issuer with a path", "/tenant-a", "", http.StatusNotFound, nil},
		{"document for another issuer", "", "https://other.example", http.StatusNotFound, ErrIssuerUnavailable},
		{"discovery failing otherwise", "", "", http.StatusServiceUnavailable, ErrIssuerUnavailable},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var front *httptest.Server
			var oauthFetches atomic.Int64
			front = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				issuer := front.URL + tt.path
				switch r.URL.Path {
				case "/.well-known/oauth-authorization-server" + tt.path:
					oauthFetches.Add(1)
					named := tt.names
					if named == "" {
						named = issuer
					}
					_ = json.NewEncoder(w).Encode(map[string]string{"issuer": named, "jwks_uri": front.URL + "/keys",
						"token_endpoint": issuer + "/token"})
				case "/keys":
					res, err := http.Get(iss.JWKSURL())
					if err != nil {
						http.Error(w, err.Error(), http.StatusBadGateway)
						return
					}
					defer res.Body.Close()
					_, _ = io.Copy(w, res.Body)
				case tt.path + discoveryPath:
					http.Error(w, "no discovery here", tt.oidc)
				default:
					http.NotFound(w, r)
				}
			}))
			t.Cleanup(front.Close)
			issuer := front.URL + tt.path
			a := newAuth(t, Config{Issuers: []IssuerConfig{{Issuer: issuer}}}, clk)
			_, err := a.Authenticate(t.Context(), mint(t, iss, devissuer.Claims{"iss": issuer}))
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("Authenticate = %v, want %v", err, tt.want)
			}
			if n := oauthFetches.Load(); (tt.oidc == http.StatusNotFound) != (n == 1) {
				t.Errorf("the RFC 8414 document was fetched %d times with the discovery document answering %d", n, tt.oidc)
			}
		})
	}
}
