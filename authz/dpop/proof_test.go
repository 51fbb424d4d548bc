package dpop

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

const (
	testURL   = "https://mcp.example.com/mcp"
	testToken = "eyJ.test.token"
)

var testNow = time.Unix(1_800_000_000, 0)

// signer makes proofs with one key, header and claims changed at will: the hostile proofs the
// verifier must refuse, built by hand so each carries exactly one defect.
type signer struct {
	alg  string
	priv crypto.Signer
}

func newSigner(t *testing.T, alg string) signer {
	t.Helper()
	var priv crypto.Signer
	var err error
	switch alg {
	case "ES256":
		priv, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case "PS256", "RS256":
		priv, err = rsa.GenerateKey(rand.Reader, 2048)
	case "EdDSA", "Ed25519":
		_, priv, err = ed25519.GenerateKey(rand.Reader)
	}
	if err != nil {
		t.Fatal(err)
	}
	return signer{alg: alg, priv: priv}
}

func (s signer) publicJWK(t *testing.T) map[string]any {
	t.Helper()
	b, err := json.Marshal(jose.JSONWebKey{Key: s.priv.Public()})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return m
}

func (s signer) jkt(t *testing.T) string {
	t.Helper()
	j, err := Thumbprint(&jose.JSONWebKey{Key: s.priv.Public()})
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// defaults are the header and claims of a valid proof for testURL and testToken at testNow.
func (s signer) defaults(t *testing.T) (map[string]any, map[string]any) {
	h := map[string]any{"typ": ProofType, "alg": s.alg, "jwk": s.publicJWK(t)}
	c := map[string]any{"jti": rand.Text(), "htm": "POST", "htu": testURL, "iat": testNow.Unix(), "ath": TokenHash(testToken)}
	return h, c
}

// sign signs header and claims as they are (a nil value deletes the member).
func (s signer) sign(t *testing.T, h, c map[string]any) string {
	t.Helper()
	hb, _ := json.Marshal(dropNil(h))
	cb, _ := json.Marshal(dropNil(c))
	input := b64(hb) + "." + b64(cb)
	return input + "." + b64(s.signature(t, input))
}

func (s signer) signature(t *testing.T, input string) []byte {
	t.Helper()
	sum := sha256.Sum256([]byte(input))
	switch k := s.priv.(type) {
	case *ecdsa.PrivateKey:
		r, sv, err := ecdsa.Sign(rand.Reader, k, sum[:])
		if err != nil {
			t.Fatal(err)
		}
		out := make([]byte, 64)
		r.FillBytes(out[:32])
		sv.FillBytes(out[32:])
		return out
	case *rsa.PrivateKey:
		var sig []byte
		var err error
		if s.alg == "PS256" {
			sig, err = rsa.SignPSS(rand.Reader, k, crypto.SHA256, sum[:], nil)
		} else {
			sig, err = rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, sum[:])
		}
		if err != nil {
			t.Fatal(err)
		}
		return sig
	case ed25519.PrivateKey:
		return ed25519.Sign(k, []byte(input))
	}
	t.Fatalf("no signer for %T", s.priv)
	return nil
}

func (s signer) proof(t *testing.T, change func(h, c map[string]any)) string {
	t.Helper()
	h, c := s.defaults(t)
	if change != nil {
		change(h, c)
	}
	return s.sign(t, h, c)
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func dropNil(m map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		if v != nil {
			out[k] = v
		}
	}
	return out
}

func newTestVerifier(t *testing.T, cfg Config) *Verifier {
	t.Helper()
	v, err := NewVerifier(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func request() Request {
	return Request{Method: "POST", URL: testURL, AccessToken: testToken, Now: testNow}
}

// TestVerifyAccepts: a valid proof of every algorithm family verifies, and its thumbprint is the
// RFC 7638 thumbprint of its key.
func TestVerifyAccepts(t *testing.T) {
	v := newTestVerifier(t, Config{})
	for _, alg := range []string{"ES256", "PS256", "RS256", "EdDSA", "Ed25519"} {
		t.Run(alg, func(t *testing.T) {
			s := newSigner(t, alg)
			p, err := v.Verify(s.proof(t, nil), request())
			if err != nil {
				t.Fatal(err)
			}
			if p.JKT != s.jkt(t) || p.JTI == "" || !p.IssuedAt.Equal(testNow) {
				t.Errorf("proof %+v, want jkt %s", p, s.jkt(t))
			}
		})
	}
	t.Run("RS256 at MaxRSABits", func(t *testing.T) {
		k, err := rsa.GenerateKey(rand.Reader, MaxRSABits)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := v.Verify(signer{alg: "RS256", priv: k}.proof(t, nil), request()); err != nil {
			t.Fatal(err)
		}
	})
}

// TestVerifyRefuses: each defect of RFC 9449 §4.3 is refused with invalid_dpop_proof and its own
// reason, whatever else the proof gets right.
func TestVerifyRefuses(t *testing.T) {
	v := newTestVerifier(t, Config{Algorithms: []string{"ES256", "RS256", "Ed25519"}})
	s := newSigner(t, "ES256")
	other := newSigner(t, "ES256")
	rsaKey := newSigner(t, "RS256")
	ed := newSigner(t, "Ed25519")
	small, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	rsa1024 := signer{alg: "RS256", priv: small}
	large, err := rsa.GenerateKey(rand.Reader, MaxRSABits+64)
	if err != nil {
		t.Fatal(err)
	}
	rsaLarge := signer{alg: "RS256", priv: large}
	privJWK := func(h, _ map[string]any) {
		b, _ := json.Marshal(jose.JSONWebKey{Key: s.priv})
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		h["jwk"] = m
	}
	cases := []struct {
		name, reason string
		proof        string
		req          func(*Request)
	}{
		{"empty", ReasonHeader, "", nil},
		{"not a JWS", ReasonMalformed, "this-is-not-a-jwt", nil},
		{"four parts", ReasonMalformed, s.proof(t, nil) + ".x", nil},
		{"oversized", ReasonMalformed, strings.Repeat("a", MaxProofBytes+1), nil},
		{"typ jwt", ReasonType, s.proof(t, func(h, _ map[string]any) { h["typ"] = "jwt" }), nil},
		{"typ missing", ReasonType, s.proof(t, func(h, _ map[string]any) { h["typ"] = nil }), nil},
		{"alg none", ReasonAlgorithm, noneProof(t, s), nil},
		{"alg HS256", ReasonAlgorithm, hmacProof(t, s), nil},
		{"alg not configured", ReasonAlgorithm, s.proof(t, func(h, _ map[string]any) { h["alg"] = "ES512" }), nil},
		{"jwk missing", ReasonKey, s.proof(t, func(h, _ map[string]any) { h["jwk"] = nil }), nil},
		{"jwk private", ReasonKey, s.proof(t, privJWK), nil},
		{"jwk symmetric", ReasonKey, s.proof(t, func(h, _ map[string]any) { h["jwk"] = map[string]any{"kty": "oct", "k": "c2VjcmV0"} }), nil},
		{"RSA under 2048 bits", ReasonKey, rsa1024.proof(t, nil), nil},
		{"RSA over 4096 bits", ReasonKey, rsaLarge.proof(t, nil), nil},
		{"jwk of another alg", ReasonKey, s.proof(t, func(h, _ map[string]any) { h["jwk"] = rsaKey.publicJWK(t) }), nil},
		{"signature tampered", ReasonSignature, tamper(s.proof(t, nil)), nil},
		{"signed by another key", ReasonSignature, s.proof(t, func(h, _ map[string]any) { h["jwk"] = other.publicJWK(t) }), nil},
		{"jti missing", ReasonClaims, s.proof(t, func(_, c map[string]any) { c["jti"] = nil }), nil},
		{"jti empty", ReasonClaims, s.proof(t, func(_, c map[string]any) { c["jti"] = "" }), nil},
		{"htm missing", ReasonClaims, s.proof(t, func(_, c map[string]any) { c["htm"] = nil }), nil},
		{"htu missing", ReasonClaims, s.proof(t, func(_, c map[string]any) { c["htu"] = nil }), nil},
		{"iat missing", ReasonClaims, s.proof(t, func(_, c map[string]any) { c["iat"] = nil }), nil},
		{"iat a string", ReasonClaims, s.proof(t, func(_, c map[string]any) { c["iat"] = "1800000000" }), nil},
		{"htm GET", ReasonMethod, s.proof(t, func(_, c map[string]any) { c["htm"] = "GET" }), nil},
		{"htm lower case", ReasonMethod, s.proof(t, func(_, c map[string]any) { c["htm"] = "post" }), nil},
		{"htu other host", ReasonURL, s.proof(t, func(_, c map[string]any) { c["htu"] = "https://wrong.example.com/mcp" }), nil},
		{"htu other path", ReasonURL, s.proof(t, func(_, c map[string]any) { c["htu"] = "https://mcp.example.com/mcp/set" }), nil},
		{"htu other path with query", ReasonURL, s.proof(t, func(_, c map[string]any) { c["htu"] = "https://mcp.example.com/mcp/set?a=1" }), nil},
		{"htu http", ReasonURL, s.proof(t, func(_, c map[string]any) { c["htu"] = "http://mcp.example.com/mcp" }), nil},
		{"iat stale", ReasonTime, s.proof(t, func(_, c map[string]any) { c["iat"] = testNow.Unix() - 303 }), nil},
		{"iat future", ReasonTime, s.proof(t, func(_, c map[string]any) { c["iat"] = testNow.Unix() + 303 }), nil},
		{"ath missing", ReasonTokenHash, s.proof(t, func(_, c map[string]any) { c["ath"] = nil }), nil},
		{"ath wrong", ReasonTokenHash, s.proof(t, func(_, c map[string]any) { c["ath"] = "not-the-right-hash" }), nil},
		{"ath of another token", ReasonTokenHash, s.proof(t, nil), func(r *Request) { r.AccessToken = "other" }},
		{"duplicate header member", ReasonMalformed, duplicateAlg(t, s), nil},
		{"crit", ReasonMalformed, s.proof(t, func(h, _ map[string]any) { h["crit"] = []string{"x"}; h["x"] = 1 }), nil},
		{"Ed25519 with an EC key", ReasonKey, s.proof(t, func(h, _ map[string]any) { h["alg"] = "Ed25519" }), nil},
		{"Ed25519 tampered", ReasonSignature, tamper(ed.proof(t, nil)), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := request()
			if tc.req != nil {
				tc.req(&req)
			}
			_, err := v.Verify(tc.proof, req)
			var e *Error
			if !errors.As(err, &e) || !errors.Is(err, ErrInvalidProof) || e.Reason != tc.reason {
				t.Fatalf("err %v, want invalid_dpop_proof for %s", err, tc.reason)
			}
			if strings.Contains(e.Description, testToken) || strings.Contains(e.Description, "eyJ") {
				t.Errorf("description %q carries request content", e.Description)
			}
		})
	}
}

// TestVerifyHTUIgnoresQueryAndFragment: htu is compared with the request's URL "ignoring any
// query and fragment parts" (RFC 9449 §4.3 step 9), on both sides, so a proof whose htu names
// this endpoint with a query or fragment is accepted; whatever comes before them is held to
// every other check (scheme, host and default port in normal form, path exact but for
// percent-encoding and dot segments, no user information), so nothing else is let through.
func TestVerifyHTUIgnoresQueryAndFragment(t *testing.T) {
	v := newTestVerifier(t, Config{})
	s := newSigner(t, "ES256")
	check := func(t *testing.T, htu, url string, want bool) {
		t.Helper()
		req := request()
		req.URL = url
		_, err := v.Verify(s.proof(t, func(_, c map[string]any) { c["htu"] = htu }), req)
		var e *Error
		switch {
		case want && err != nil:
			t.Errorf("htu %q against %q: %v, want accepted", htu, url, err)
		case !want && (!errors.As(err, &e) || e.Reason != ReasonURL):
			t.Errorf("htu %q against %q: %v, want refused for %s", htu, url, err, ReasonURL)
		}
	}
	for _, htu := range []string{
		testURL + "?a=1", testURL + "?", testURL + "#x", testURL + "#", testURL + "?a=1#x", testURL + "?#",
		testURL + "#frag?not-a-query", testURL + "?a=1&b=%zz", "HTTPS://MCP.Example.COM:443/mcp?x=1",
		"https://mcp.example.com/a/../mcp?x", "https://mcp.example.com/%6Dcp#x",
	} {
		check(t, htu, testURL, true)
	}
	for _, htu := range []string{
		"https://mcp.example.com/mcp/set?a=1", "https://mcp.example.com/mc?p", "https://mcp.example.com/MCP?a",
		"https://mcp.example.com/mcp%3Fa=1", "https://mcp.example.com/mcp%23x", "https://mcp.example.com#/mcp",
		"https://mcp.example.com?/mcp", "https://wrong.example.com/mcp?mcp.example.com",
		"https://user@mcp.example.com/mcp?x", "http://mcp.example.com/mcp?x", "https://mcp.example.com:8443/mcp?x",
		"ftp://mcp.example.com/mcp?x", "/mcp?x", "?" + testURL, "#" + testURL,
	} {
		check(t, htu, testURL, false)
	}
	// The request's side is compared without its query and fragment too.
	check(t, testURL, testURL+"?a=1", true)
	check(t, testURL+"?b=2", testURL+"?a=1#x", true)
	check(t, "https://mcp.example.com/mcp/set", testURL+"?/set", false)
}

// TestVerifyTokenSum: the token's hash a caller passes (TokenSum) stands for hashing the token:
// the proof's ath is compared with it, so the proof of this token passes with this token's sum
// and is refused with another's, as without one.
func TestVerifyTokenSum(t *testing.T) {
	s := newSigner(t, "ES256")
	v := newTestVerifier(t, Config{})
	own, other := sha256.Sum256([]byte(testToken)), sha256.Sum256([]byte(testToken+"x"))
	req := request()
	req.TokenSum = &own
	if _, err := v.Verify(s.proof(t, nil), req); err != nil {
		t.Fatalf("with the token's own sum: %v", err)
	}
	req.TokenSum = &other
	var e *Error
	if _, err := v.Verify(s.proof(t, nil), req); !errors.As(err, &e) || e.Reason != ReasonTokenHash {
		t.Fatalf("with another token's sum: %v, want %s", err, ReasonTokenHash)
	}
}

// TestVerifyWindow: a stricter window refuses what the default accepts, and the edges of the
// default window are inside it.
func TestVerifyWindow(t *testing.T) {
	s := newSigner(t, "ES256")
	def := newTestVerifier(t, Config{})
	strict := newTestVerifier(t, Config{Window: 30 * time.Second})
	for _, d := range []int64{-300, 300, -60, 60} {
		p := s.proof(t, func(_, c map[string]any) { c["iat"] = testNow.Unix() + d })
		if _, err := def.Verify(p, request()); err != nil {
			t.Errorf("iat %+ds refused by the default window: %v", d, err)
		}
		if _, err := strict.Verify(p, request()); !errors.Is(err, ErrInvalidProof) {
			t.Errorf("iat %+ds accepted by a 30s window", d)
		}
	}
	if _, err := NewVerifier(Config{Window: 6 * time.Minute}); err == nil {
		t.Error("a window wider than 5 minutes was accepted")
	}
	if _, err := NewVerifier(Config{Algorithms: []string{"HS256"}}); err == nil {
		t.Error("HS256 was accepted as a proof algorithm")
	}
}

// TestVerifyTokenEndpoint: without an access token no ath is asked for (a token request).
func TestVerifyTokenEndpoint(t *testing.T) {
	v := newTestVerifier(t, Config{})
	s := newSigner(t, "ES256")
	p := s.proof(t, func(_, c map[string]any) { c["ath"] = nil })
	req := request()
	req.AccessToken = ""
	if _, err := v.Verify(p, req); err != nil {
		t.Fatal(err)
	}
}

func noneProof(t *testing.T, s signer) string {
	t.Helper()
	h, c := s.defaults(t)
	h["alg"] = "none"
	hb, _ := json.Marshal(h)
	cb, _ := json.Marshal(c)
	return b64(hb) + "." + b64(cb) + "."
}

// hmacProof is an HS256 proof keyed with the public key's JSON: the algorithm-confusion attack.
func hmacProof(t *testing.T, s signer) string {
	t.Helper()
	h, c := s.defaults(t)
	h["alg"] = "HS256"
	hb, _ := json.Marshal(h)
	cb, _ := json.Marshal(c)
	input := b64(hb) + "." + b64(cb)
	key, _ := json.Marshal(s.publicJWK(t))
	m := hmac.New(sha256.New, key)
	m.Write([]byte(input))
	return input + "." + b64(m.Sum(nil))
}

// duplicateAlg is a proof whose header names alg twice: "none" first, the real one last.
func duplicateAlg(t *testing.T, s signer) string {
	t.Helper()
	_, c := s.defaults(t)
	jwk, _ := json.Marshal(s.publicJWK(t))
	hb := []byte(`{"typ":"dpop+jwt","alg":"none","jwk":` + string(jwk) + `,"alg":"` + s.alg + `"}`)
	cb, _ := json.Marshal(c)
	input := b64(hb) + "." + b64(cb)
	return input + "." + b64(s.signature(t, input))
}

func tamper(proof string) string {
	parts := strings.Split(proof, ".")
	sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	sig[len(sig)/2] ^= 1
	parts[2] = b64(sig)
	return strings.Join(parts, ".")
}

// TestVerifyNamesExactly: a proof's header parameters and claims are read by their exact,
// case-sensitive names (RFC 7515 §4, RFC 7519 §4), as go-jose reads the header it verifies: a
// member whose name differs from a checked one only in case ("TYP", "Htu", "JTI") is not that
// member. A proof that has the member only under such a name lacks it; one that has both is
// refused, since readers disagree on which one counts.
func TestVerifyNamesExactly(t *testing.T) {
	v := newTestVerifier(t, Config{})
	s := newSigner(t, "ES256")
	rename := func(m map[string]any, from, to string) { m[to], m[from] = m[from], nil }
	for name, change := range map[string]func(h, c map[string]any){
		"TYP only":      func(h, _ map[string]any) { rename(h, "typ", "TYP") },
		"Alg only":      func(h, _ map[string]any) { rename(h, "alg", "Alg") },
		"JWK only":      func(h, _ map[string]any) { rename(h, "jwk", "JWK") },
		"Htu only":      func(_, c map[string]any) { rename(c, "htu", "Htu") },
		"HTM only":      func(_, c map[string]any) { rename(c, "htm", "HTM") },
		"JTI only":      func(_, c map[string]any) { rename(c, "jti", "JTI") },
		"IAT only":      func(_, c map[string]any) { rename(c, "iat", "IAT") },
		"ATH only":      func(_, c map[string]any) { rename(c, "ath", "ATH") },
		"htu and HTU":   func(_, c map[string]any) { c["HTU"] = "https://elsewhere.example/mcp" },
		"typ and Typ":   func(h, _ map[string]any) { h["Typ"] = "jwt" },
		"crit as CRIT":  func(h, _ map[string]any) { h["CRIT"] = []string{"b64"} },
		"nonce and Non": func(_, c map[string]any) { c["NONCE"] = "x" },
	} {
		t.Run(name, func(t *testing.T) {
			p, err := v.Verify(s.proof(t, change), request())
			var pe *Error
			if !errors.As(err, &pe) || pe.Code != CodeInvalidProof {
				t.Errorf("%+v %v, want invalid_dpop_proof", p, err)
			}
		})
	}
	if _, err := v.Verify(s.proof(t, func(h, c map[string]any) { h["kid"], c["extra"] = "k", "x" }), request()); err != nil {
		t.Errorf("a proof with other members: %v", err)
	}
}

// TestVerifyAgain: a proof judged again after its request came passes every check but its
// freshness (iat long past, a nonce expired or absent) and fails every other as Verify does:
// an algorithm no longer accepted, another htu or htm, another token's ath.
func TestVerifyAgain(t *testing.T) {
	s := newSigner(t, "ES256")
	nonces, err := NewNonces(testRing(t, "a"), MinNonceLifetime)
	if err != nil {
		t.Fatal(err)
	}
	v := newTestVerifier(t, Config{Nonces: nonces})
	nonce, err := nonces.Issue(testNow)
	if err != nil {
		t.Fatal(err)
	}
	later := request()
	later.Now = testNow.Add(time.Hour)
	for name, p := range map[string]string{
		"iat an hour ago, nonce expired": s.proof(t, func(_, c map[string]any) { c["nonce"] = nonce }),
		"no nonce":                       s.proof(t, nil),
	} {
		if _, err := v.Verify(p, later); !errors.Is(err, ErrInvalidProof) && !errors.Is(err, ErrUseNonce) {
			t.Errorf("%s: Verify accepted a proof an hour old: %v", name, err)
		}
		if got, err := v.VerifyAgain(p, later); err != nil || got.JKT != s.jkt(t) {
			t.Errorf("%s: VerifyAgain: %v, %+v", name, err, got)
		}
	}
	edOnly := newTestVerifier(t, Config{Algorithms: []string{"EdDSA"}})
	for name, tc := range map[string]struct {
		v      *Verifier
		change func(h, c map[string]any)
		req    func(*Request)
	}{
		"an algorithm no longer accepted": {edOnly, nil, nil},
		"another htu":                     {v, nil, func(r *Request) { r.URL = "https://mcp.example.com/other" }},
		"another htm":                     {v, nil, func(r *Request) { r.Method = "GET" }},
		"another token":                   {v, nil, func(r *Request) { r.AccessToken = "another" }},
		"tampered":                        {v, func(_, c map[string]any) { c["htm"] = nil }, nil},
	} {
		req := later
		if tc.req != nil {
			tc.req(&req)
		}
		if _, err := tc.v.VerifyAgain(s.proof(t, tc.change), req); !errors.Is(err, ErrInvalidProof) {
			t.Errorf("%s: VerifyAgain: %v, want %v", name, err, ErrInvalidProof)
		}
	}
}
