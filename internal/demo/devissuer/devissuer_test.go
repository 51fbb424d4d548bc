package devissuer

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	jose "github.com/go-jose/go-jose/v4"
)

func startIssuer(t *testing.T, opts Options) *Issuer {
	t.Helper()
	iss, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = iss.Close() })
	return iss
}

func getJSON(t *testing.T, u string, v any) int {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			t.Fatalf("decode %s: %v", u, err)
		}
	}
	return resp.StatusCode
}

func fetchKeys(t *testing.T, iss *Issuer) jose.JSONWebKeySet {
	t.Helper()
	var set jose.JSONWebKeySet
	if code := getJSON(t, iss.JWKSURL(), &set); code != http.StatusOK {
		t.Fatalf("jwks status %d", code)
	}
	return set
}

// verify checks that token is a compact JWS signed by a key of set.
func verify(t *testing.T, set jose.JSONWebKeySet, token string) error {
	t.Helper()
	jws, err := jose.ParseSignedCompact(token, []jose.SignatureAlgorithm{jose.RS256, jose.ES256})
	if err != nil {
		return err
	}
	kid := jws.Signatures[0].Header.KeyID
	keys := set.Key(kid)
	if len(keys) == 0 {
		return errors.New("kid not published")
	}
	_, err = jws.Verify(&keys[0])
	return err
}

func TestNewRefusesNonLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:0", "[::]:0", "example.com:0"} {
		t.Run(addr, func(t *testing.T) {
			_, err := New(Options{Addr: addr})
			if !errors.Is(err, ErrNotLoopback) {
				t.Fatalf("New(%q) = %v, want ErrNotLoopback", addr, err)
			}
		})
	}
}

func TestDiscoveryAndJWKS(t *testing.T) {
	iss := startIssuer(t, Options{Clients: map[string]string{"demo": "s3cret"}})
	var doc map[string]any
	if code := getJSON(t, iss.URL()+discoveryPath, &doc); code != http.StatusOK {
		t.Fatalf("discovery status %d", code)
	}
	if doc["issuer"] != iss.URL() || doc["jwks_uri"] != iss.JWKSURL() || doc["token_endpoint"] != iss.TokenURL() {
		t.Fatalf("discovery document %v", doc)
	}
	set := fetchKeys(t, iss)
	algs := map[string]bool{}
	for _, k := range set.Keys {
		if !k.IsPublic() || k.Use != "sig" || k.KeyID == "" {
			t.Fatalf("bad published key %+v", k)
		}
		algs[k.Algorithm] = true
	}
	if !algs[RS256] || !algs[ES256] {
		t.Fatalf("published algorithms %v, want RS256 and ES256", algs)
	}
}

func TestMintVerifiesWithPublishedKeys(t *testing.T) {
	iss := startIssuer(t, Options{Audience: "https://gw.example/mcp"})
	for _, alg := range []string{RS256, ES256} {
		t.Run(alg, func(t *testing.T) {
			tok, err := iss.MintAlg(alg, Claims{"scope": "a b"})
			if err != nil {
				t.Fatal(err)
			}
			if err := verify(t, fetchKeys(t, iss), tok); err != nil {
				t.Fatalf("verify: %v", err)
			}
		})
	}
}

func TestRotation(t *testing.T) {
	iss := startIssuer(t, Options{})
	oldTok, err := iss.Mint(nil)
	if err != nil {
		t.Fatal(err)
	}
	kid, err := iss.Rotate(RotateOptions{Alg: ES256})
	if err != nil {
		t.Fatal(err)
	}
	newTok, err := iss.Mint(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, signer := iss.Kids(); signer != kid {
		t.Fatalf("signer %q, want %q", signer, kid)
	}
	set := fetchKeys(t, iss)
	for name, tok := range map[string]string{"old": oldTok, "new": newTok} {
		if err := verify(t, set, tok); err != nil {
			t.Fatalf("%s token after rotation: %v", name, err)
		}
	}
	if _, err := iss.Rotate(RotateOptions{DropOld: true}); err != nil {
		t.Fatal(err)
	}
	set = fetchKeys(t, iss)
	if len(set.Keys) != 1 {
		t.Fatalf("after DropOld %d keys published, want 1", len(set.Keys))
	}
	if err := verify(t, set, oldTok); err == nil {
		t.Fatal("token from dropped key still verifies")
	}
}

// TestWithdraw: a withdrawn key leaves the published set and its tokens stop verifying, while
// the other keys' still do and the signer keeps signing; the signer and an unknown kid cannot be
// withdrawn.
func TestWithdraw(t *testing.T) {
	iss := startIssuer(t, Options{})
	_, oldKid := iss.Kids()
	oldTok, err := iss.Mint(nil)
	if err != nil {
		t.Fatal(err)
	}
	esTok, err := iss.MintAlg(ES256, nil)
	if err != nil {
		t.Fatal(err)
	}
	newKid, err := iss.Rotate(RotateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := iss.Withdraw(newKid); err == nil {
		t.Fatal("the signing key was withdrawn")
	}
	if err := iss.Withdraw("no-such-kid"); err == nil {
		t.Fatal("an unknown kid was withdrawn")
	}
	if err := iss.Withdraw(oldKid); err != nil {
		t.Fatal(err)
	}
	published, signer := iss.Kids()
	if signer != newKid || len(published) != 2 || slices.Contains(published, oldKid) {
		t.Fatalf("published %v, signer %q after withdrawing %q", published, signer, oldKid)
	}
	newTok, err := iss.Mint(nil)
	if err != nil {
		t.Fatal(err)
	}
	set := fetchKeys(t, iss)
	if err := verify(t, set, oldTok); err == nil {
		t.Fatal("a token of the withdrawn key still verifies")
	}
	for name, tok := range map[string]string{"ES256": esTok, "new": newTok} {
		if err := verify(t, set, tok); err != nil {
			t.Fatalf("%s token after another key's withdrawal: %v", name, err)
		}
	}
}

func TestHostileTokens(t *testing.T) {
	iss := startIssuer(t, Options{})
	set := fetchKeys(t, iss)
	good, err := iss.Mint(nil)
	if err != nil {
		t.Fatal(err)
	}
	tampered, err := TamperPayload(good, Claims{"sub": "admin"})
	if err != nil {
		t.Fatal(err)
	}
	none, _ := iss.MintNone(nil)
	hs, _ := iss.MintHS256WithPublicKey(nil)
	unknown, _ := iss.MintUnknownKey(nil)
	foreign, _ := iss.MintForeignKeyKnownKID(nil)
	for name, tok := range map[string]string{
		"tampered payload": tampered, "tampered signature": TamperSignature(good),
		"none": none, "hs256": hs, "unknown kid": unknown, "foreign key": foreign,
	} {
		t.Run(name, func(t *testing.T) {
			if tok == "" {
				t.Fatal("helper returned no token")
			}
			if err := verify(t, set, tok); err == nil {
				t.Fatal("hostile token verified")
			}
		})
	}
}

func TestDown(t *testing.T) {
	iss := startIssuer(t, Options{})
	iss.SetDown(true)
	var v any
	if code := getJSON(t, iss.JWKSURL(), &v); code != http.StatusServiceUnavailable {
		t.Fatalf("status %d while down", code)
	}
	iss.SetDown(false)
	if code := getJSON(t, iss.JWKSURL(), &v); code != http.StatusOK {
		t.Fatalf("status %d after up", code)
	}
}

func TestTokenEndpoint(t *testing.T) {
	iss := startIssuer(t, Options{Clients: map[string]string{"demo": "s3cret"}})
	tests := []struct {
		name   string
		form   url.Values
		status int
	}{
		{"ok", url.Values{"grant_type": {"client_credentials"}, "client_id": {"demo"}, "client_secret": {"s3cret"}, "scope": {"x"}, "resource": {"https://gw/mcp"}}, http.StatusOK},
		{"bad secret", url.Values{"grant_type": {"client_credentials"}, "client_id": {"demo"}, "client_secret": {"nope"}}, http.StatusUnauthorized},
		{"bad grant", url.Values{"grant_type": {"password"}}, http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := http.Post(iss.TokenURL(), "application/x-www-form-urlencoded", strings.NewReader(tt.form.Encode()))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.status)
			}
			if tt.status != http.StatusOK {
				return
			}
			var body struct {
				AccessToken string `json:"access_token"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
				t.Fatal(err)
			}
			if err := verify(t, fetchKeys(t, iss), body.AccessToken); err != nil {
				t.Fatalf("issued token: %v", err)
			}
		})
	}
}
