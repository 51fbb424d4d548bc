package authz

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
)

func TestAuthenticateAttacks(t *testing.T) {
	clk := newClock()
	iss := startIssuer(t, clk)
	a := newAuth(t, Config{Issuers: []IssuerConfig{{Issuer: iss.URL()}}}, clk)
	now := clk.Now()
	good := mint(t, iss, devissuer.Claims{"scope": "a b"})
	hostile := func(f func(devissuer.Claims) (string, error)) string {
		tok, err := f(nil)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	tamperedPayload, err := devissuer.TamperPayload(good, devissuer.Claims{"sub": "admin"})
	if err != nil {
		t.Fatal(err)
	}
	esTok, err := iss.MintAlg(devissuer.ES256, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		token   string
		wantErr error
		reason  string
	}{
		{"valid RS256", good, nil, ReasonNone},
		{"valid ES256", esTok, nil, ReasonNone},
		{"no token", "", ErrNoToken, ReasonNoToken},
		{"not a JWT", "abc.def", ErrInvalidToken, ReasonMalformed},
		{"garbage segments", "!!.??.**", ErrInvalidToken, ReasonMalformed},
		{"alg none", hostile(iss.MintNone), ErrInvalidToken, ReasonAlgorithm},
		{"HS256 keyed with public key", hostile(iss.MintHS256WithPublicKey), ErrInvalidToken, ReasonAlgorithm},
		{"wrong issuer", mint(t, iss, devissuer.Claims{"iss": "https://evil.example"}), ErrInvalidToken, ReasonIssuer},
		{"no issuer", mint(t, iss, devissuer.Claims{"iss": nil}), ErrInvalidToken, ReasonIssuer},
		// The issuer is compared exactly (OIDC Discovery §4.3): no other spelling of it is it.
		{"issuer with a trailing slash", mint(t, iss, devissuer.Claims{"iss": iss.URL() + "/"}), ErrInvalidToken, ReasonIssuer},
		{"issuer in another case", mint(t, iss, devissuer.Claims{"iss": strings.ToUpper(iss.URL())}), ErrInvalidToken, ReasonIssuer},
		{"audience with a trailing slash", mint(t, iss, devissuer.Claims{"aud": testResource + "/"}), ErrInvalidToken, ReasonAudience},
		{"audience of another path", mint(t, iss, devissuer.Claims{"aud": testResource + "-admin"}), ErrInvalidToken, ReasonAudience},
		{"wrong audience", mint(t, iss, devissuer.Claims{"aud": "https://other.example/mcp"}), ErrInvalidToken, ReasonAudience},
		{"no audience", mint(t, iss, devissuer.Claims{"aud": nil}), ErrInvalidToken, ReasonAudience},
		{"audience in list", mint(t, iss, devissuer.Claims{"aud": []string{"x", testResource}}), nil, ReasonNone},
		{"audience listed twice", mint(t, iss, devissuer.Claims{"aud": []string{testResource, testResource}}), nil, ReasonNone},
		// aud values are compared as exact strings (RFC 7519 §2 StringOrURI, §4.1.3), never as URLs
		// in normal form: another spelling of the resource is another audience.
		{"audience with the host in another case", mint(t, iss, devissuer.Claims{"aud": "https://MCP.example.test/mcp"}), ErrInvalidToken, ReasonAudience},
		{"audience with the default port", mint(t, iss, devissuer.Claims{"aud": "https://mcp.example.test:443/mcp"}), ErrInvalidToken, ReasonAudience},
		{"audience with a dot segment", mint(t, iss, devissuer.Claims{"aud": []string{"https://mcp.example.test/./mcp"}}), ErrInvalidToken, ReasonAudience},
		{"audience not a string", mint(t, iss, devissuer.Claims{"aud": []any{1, testResource}}), ErrInvalidToken, ReasonMalformed},
		{"expired", mint(t, iss, devissuer.Claims{"exp": now.Add(-time.Hour).Unix()}), ErrInvalidToken, ReasonExpired},
		{"expired within skew", mint(t, iss, devissuer.Claims{"exp": now.Add(-10 * time.Second).Unix()}), nil, ReasonNone},
		{"no exp", mint(t, iss, devissuer.Claims{"exp": nil}), ErrInvalidToken, ReasonClaims},
		{"not yet valid", mint(t, iss, devissuer.Claims{"nbf": now.Add(time.Hour).Unix()}), ErrInvalidToken, ReasonNotYetValid},
		{"nbf within skew", mint(t, iss, devissuer.Claims{"nbf": now.Add(10 * time.Second).Unix()}), nil, ReasonNone},
		{"no sub", mint(t, iss, devissuer.Claims{"sub": nil}), ErrInvalidToken, ReasonClaims},
		{"empty sub", mint(t, iss, devissuer.Claims{"sub": ""}), ErrInvalidToken, ReasonClaims}, // "iss#" would be everyone's key
		// Issued before the key set the gateway holds was fetched, so that set already
		// answers for it (a kid newer than the set is TestUnknownKidNewerThanKeySet's).
		{"unknown key id", mintUnknownKey(t, iss, devissuer.Claims{"iat": now.Add(-time.Hour).Unix()}), ErrInvalidToken, ReasonUnknownKey},
		{"foreign key under known kid", hostile(iss.MintForeignKeyKnownKID), ErrInvalidToken, ReasonSignature},
		{"tampered signature", devissuer.TamperSignature(good), ErrInvalidToken, ReasonSignature},
		{"tampered payload", tamperedPayload, ErrInvalidToken, ReasonSignature},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantAuth(t, a, tt.token, tt.wantErr, tt.reason)
		})
	}
}

func TestBearerToken(t *testing.T) {
	tests := []struct {
		header  string
		want    string
		wantErr error
	}{
		{"", "", ErrNoToken},
		{"Bearer abc.def-_~+/=", "abc.def-_~+/=", nil},
		{"bearer abc", "abc", nil},
		{"BEARER  abc", "abc", nil},
		// Another scheme carries no bearer token: the challenge names no error (RFC 6750 §3.1).
		{"Basic dXNlcjpwYXNz", "", ErrNoToken},
		{"Digest username=\"a\", realm=\"b\"", "", ErrNoToken},
		{"Negotiate YIIBhgYGKwYBBQUCoII=", "", ErrNoToken},
		{"DPoP abc.def.ghi", "", ErrNoToken},
		{"Bearerabc", "", ErrNoToken},
		{"Bear abc", "", ErrNoToken},
		// The Bearer scheme with malformed credentials: an invalid token.
		{"Bearer", "", ErrInvalidToken},
		{"Bearer ", "", ErrInvalidToken},
		{"Bearer\tabc", "", ErrInvalidToken},
		{"bearer\t abc", "", ErrInvalidToken},
		{"Bearer a b", "", ErrInvalidToken},
		{"Bearer a\"b", "", ErrInvalidToken},
		{"Bearer ===", "", ErrInvalidToken},
	}
	for _, tt := range tests {
		t.Run(tt.header, func(t *testing.T) {
			got, err := BearerToken(tt.header)
			if got != tt.want || !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Fatalf("BearerToken(%q) = %q, %v; want %q, %v", tt.header, got, err, tt.want, tt.wantErr)
			}
			if tt.wantErr == ErrInvalidToken && Reason(err) != ReasonMalformed {
				t.Fatalf("Reason = %q, want malformed", Reason(err))
			}
			if tt.wantErr == ErrNoToken && (Reason(err) != ReasonNoToken || errors.Is(err, ErrInvalidToken)) {
				t.Fatalf("Reason = %q (%v), want no_token alone", Reason(err), err)
			}
		})
	}
}

func TestIssuerAlgorithmAllowlist(t *testing.T) {
	clk := newClock()
	iss := startIssuer(t, clk)
	a := newAuth(t, Config{Issuers: []IssuerConfig{{Issuer: iss.URL(), Algorithms: []string{"RS256"}}}}, clk)
	es, err := iss.MintAlg(devissuer.ES256, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantAuth(t, a, es, ErrInvalidToken, ReasonAlgorithm)
	wantAuth(t, a, mint(t, iss, nil), nil, ReasonNone)
}

func TestExplicitJWKSURL(t *testing.T) {
	clk := newClock()
	iss := startIssuer(t, clk)
	a := newAuth(t, Config{Issuers: []IssuerConfig{{
		Issuer: iss.URL(), JWKSURL: iss.JWKSURL(), Audiences: []string{"https://other.example/mcp"},
	}}}, clk)
	wantAuth(t, a, mint(t, iss, devissuer.Claims{"aud": "https://other.example/mcp"}), nil, ReasonNone)
	wantAuth(t, a, mint(t, iss, nil), ErrInvalidToken, ReasonAudience)
}

func TestIssuerUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadURL := "http://" + ln.Addr().String()
	ln.Close()
	clk := newClock()
	iss := startIssuer(t, clk)
	tests := []struct {
		name string
		cfg  IssuerConfig
		iss  string
	}{
		{"discovery", IssuerConfig{Issuer: deadURL}, deadURL},
		{"jwks", IssuerConfig{Issuer: iss.URL(), JWKSURL: deadURL + "/jwks"}, iss.URL()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newAuth(t, Config{Issuers: []IssuerConfig{tt.cfg}}, clk)
			tok := mint(t, iss, devissuer.Claims{"iss": tt.iss})
			for range 2 { // the second attempt hits the retry back-off
				_, err := a.Authenticate(context.Background(), tok)
				if !errors.Is(err, ErrIssuerUnavailable) || errors.Is(err, ErrInvalidToken) {
					t.Fatalf("err = %v, want ErrIssuerUnavailable only", err)
				}
				if Reason(err) != ReasonIssuerUnavailable {
					t.Fatalf("Reason = %q", Reason(err))
				}
			}
		})
	}
}

func TestDiscoveryRetriedAfterOutage(t *testing.T) {
	clk := newClock()
	iss := startIssuer(t, clk)
	a := newAuth(t, Config{Issuers: []IssuerConfig{{Issuer: iss.URL()}}}, clk)
	tok := mint(t, iss, nil)
	iss.SetDown(true)
	wantAuth(t, a, tok, ErrIssuerUnavailable, ReasonIssuerUnavailable)
	iss.SetDown(false)
	// Within the back-off the failure is remembered, not re-fetched.
	wantAuth(t, a, tok, ErrIssuerUnavailable, ReasonIssuerUnavailable)
	clk.Advance(DefaultDiscoveryRetryInterval)
	wantAuth(t, a, tok, nil, ReasonNone)
}

func TestJWKSOutageAfterDiscovery(t *testing.T) {
	clk := newClock()
	iss := startIssuer(t, clk)
	a := newAuth(t, Config{Issuers: []IssuerConfig{{Issuer: iss.URL()}}, TokenCacheSize: -1}, clk)
	tok := mint(t, iss, nil)
	wantAuth(t, a, tok, nil, ReasonNone)
	iss.SetDown(true)
	// Known keys keep working while the IdP is down, even past max age.
	clk.Advance(DefaultJWKSMaxAge + time.Second)
	tok = mint(t, iss, nil)
	wantAuth(t, a, tok, nil, ReasonNone)
	// A new kid cannot be judged while the key set is unreachable.
	if _, err := iss.Rotate(devissuer.RotateOptions{}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(DefaultJWKSMinRefreshInterval)
	wantAuth(t, a, mint(t, iss, nil), ErrIssuerUnavailable, ReasonIssuerUnavailable)
}

func TestRotation(t *testing.T) {
	clk := newClock()
	iss := startIssuer(t, clk)
	a := newAuth(t, Config{Issuers: []IssuerConfig{{Issuer: iss.URL()}}, TokenCacheSize: -1}, clk)
	oldTok := mint(t, iss, nil)
	wantAuth(t, a, oldTok, nil, ReasonNone)
	for _, alg := range []string{devissuer.ES256, devissuer.RS256} {
		if _, err := iss.Rotate(devissuer.RotateOptions{Alg: alg}); err != nil {
			t.Fatal(err)
		}
		newTok := mint(t, iss, nil)
		// An unknown kid refetches the key set at most once per interval; until the next
		// refetch the new kid may well be the issuer's new key: retry later, not a 401.
		wantAuth(t, a, newTok, ErrIssuerUnavailable, ReasonIssuerUnavailable)
		clk.Advance(DefaultJWKSMinRefreshInterval)
		wantAuth(t, a, newTok, nil, ReasonNone)
		wantAuth(t, a, oldTok, nil, ReasonNone)
	}
	if _, err := iss.Rotate(devissuer.RotateOptions{DropOld: true}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(DefaultJWKSMaxAge + time.Second)
	wantAuth(t, a, mint(t, iss, nil), nil, ReasonNone)
	wantAuth(t, a, oldTok, ErrInvalidToken, ReasonUnknownKey)
}

func TestTokenCache(t *testing.T) {
	clk := newClock()
	iss := startIssuer(t, clk)
	a := newAuth(t, Config{Issuers: []IssuerConfig{{Issuer: iss.URL()}}}, clk)
	tok := mint(t, iss, devissuer.Claims{"exp": clk.Now().Add(time.Minute).Unix()})
	p1 := wantAuth(t, a, tok, nil, ReasonNone)
	iss.SetDown(true) // a hit must not need the issuer
	p2 := wantAuth(t, a, tok, nil, ReasonNone)
	if p1 != p2 {
		t.Fatal("second call did not come from the cache")
	}
	// Past exp but within the skew: still served from the cache.
	clk.Advance(time.Minute + DefaultClockSkew)
	if p3 := wantAuth(t, a, tok, nil, ReasonNone); p3 != p1 {
		t.Fatal("token within the skew did not come from the cache")
	}
	clk.Advance(time.Second)
	wantAuth(t, a, tok, ErrInvalidToken, ReasonExpired)
	if a.cache.len() != 0 {
		t.Fatalf("expired entry still cached")
	}
}

func TestAuthenticateConcurrent(t *testing.T) {
	clk := newClock()
	iss := startIssuer(t, clk)
	a := newAuth(t, Config{Issuers: []IssuerConfig{{Issuer: iss.URL()}}, TokenCacheSize: 4}, clk)
	toks := make([]string, 8)
	for i := range toks {
		toks[i] = mint(t, iss, devissuer.Claims{"sub": string(rune('a' + i))})
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 16 {
		wg.Go(func() {
			for i := range 20 {
				tok := toks[(g+i)%len(toks)]
				if _, err := a.Authenticate(context.Background(), tok); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// TestScopeClaimSplitsAtSpacesOnly: a scope claim is a list of scope tokens separated by single
// spaces (RFC 6749 §3.3: scope-token *( SP scope-token ), and a scope-token holds no white
// space). Any other white space (a tab, a line break, a no-break or ideographic space) is part
// of one token as the authorization server granted it, which an authorization server with
// parameterised scopes may let a client choose: read as a separator, "notes:read<U+00A0>admin"
// would grant "admin", which nobody granted.
func TestScopeClaimSplitsAtSpacesOnly(t *testing.T) {
	clk := newClock()
	iss := startIssuer(t, clk)
	a := newAuth(t, Config{Issuers: []IssuerConfig{{Issuer: iss.URL()}}}, clk)
	for _, sep := range []string{"\t", "\n", "\r", "\v", "\f", "\u0085", "\u00a0", "\u1680", "\u2000", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000"} {
		p := wantAuth(t, a, mint(t, iss, devissuer.Claims{"scope": "notes:read" + sep + "admin"}), nil, ReasonNone)
		if p.Scopes.Has("admin") || p.Scopes.Has("notes:read") || len(p.Scopes) != 1 {
			t.Errorf("scope %q read as %v, want the one token it is", "notes:read"+sep+"admin", p.Scopes.Sorted())
		}
	}
	p := wantAuth(t, a, mint(t, iss, devissuer.Claims{"scope": " notes:read  admin "}), nil, ReasonNone)
	if got := p.Scopes.Sorted(); len(got) != 2 || got[0] != "admin" || got[1] != "notes:read" {
		t.Errorf("scope \" notes:read  admin \" read as %v, want [admin notes:read]", got)
	}
}
