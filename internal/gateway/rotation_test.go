package gateway

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
)

// TestKeyRotationWhileIssuerDown: the issuer rotates its signing key and then cannot be reached.
// Until the gateway can fetch the new key set, a token signed with the new key is 503 with
// Retry-After, never a 401 (which would make the client discard a good token), however often it
// is sent; the same holds right after a successful fetch, before the next refetch is allowed.
// The refetch interval is set far beyond the test, so the window holds without timing.
func TestKeyRotationWhileIssuerDown(t *testing.T) {
	f := startAuthGatewayWith(t, func(c *Config) { c.Auth.JWKSMinRefreshInterval = time.Hour })
	call := func(tok string) (int, http.Header, string) {
		h := modernHeaders("tools/list", "")
		h.Set("Authorization", "Bearer "+tok)
		return post(t, f.url(), h, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+testMeta+`}}`)
	}
	if status, _, body := call(f.token(t, devissuer.Claims{"scope": "tools:read"})); status != http.StatusOK {
		t.Fatalf("first token: %d %s", status, body)
	}
	if _, err := f.iss.Rotate(devissuer.RotateOptions{}); err != nil {
		t.Fatal(err)
	}
	rotated := f.token(t, devissuer.Claims{"scope": "tools:read"})
	for _, down := range []bool{false, true} {
		f.iss.SetDown(down)
		for range 5 {
			status, hdr, body := call(rotated)
			if status != http.StatusServiceUnavailable || !strings.Contains(body, "-32014") {
				t.Fatalf("issuer down=%v, new key: %d %s, want 503", down, status, body)
			}
			if hdr.Get("Www-Authenticate") != "" {
				t.Fatalf("issuer down=%v: a challenge on a 503 tells the client its token is bad: %v", down, hdr)
			}
			if s, err := strconv.Atoi(hdr.Get("Retry-After")); err != nil || s < 1 || s > 60 {
				t.Fatalf("issuer down=%v: Retry-After %q, want 1..60 seconds", down, hdr.Get("Retry-After"))
			}
		}
	}
	// A token that is really bad is still a 401 with a challenge.
	status, hdr, _ := call("eyJhbGciOiJSUzI1NiJ9.e30.c2ln")
	if status != http.StatusUnauthorized || !strings.Contains(hdr.Get("Www-Authenticate"), "invalid_token") {
		t.Fatalf("garbage token: %d %v", status, hdr)
	}
}
