package dpopclient

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// Forge makes a proof the library would not: the header and claims of a valid ES256 proof of k
// for p at now, changed by change (a nil value deletes a member), then signed with k. With
// change nil it is a valid proof.
func Forge(t testing.TB, k Key, p Proof, now time.Time, change func(header, claims map[string]any)) string {
	t.Helper()
	priv := privateKey(t, k)
	h := map[string]any{"typ": "dpop+jwt", "alg": "ES256", "jwk": publicJWK(t, priv)}
	c := map[string]any{"jti": rand.Text(), "htm": p.Method, "htu": p.URL, "iat": now.Add(p.Skew).Unix()}
	if p.AccessToken != "" {
		sum := sha256.Sum256([]byte(p.AccessToken))
		c["ath"] = base64.RawURLEncoding.EncodeToString(sum[:])
	}
	if p.Nonce != "" {
		c["nonce"] = p.Nonce
	}
	if change != nil {
		change(h, c)
	}
	input := segment(t, h) + "." + segment(t, c)
	switch h["alg"] {
	case "none":
		return input + "."
	case "HS256":
		// The algorithm-confusion attack: the public key's JSON as the HMAC secret.
		m := hmac.New(sha256.New, []byte(mustJSON(t, publicJWK(t, priv))))
		m.Write([]byte(input))
		return input + "." + b64(m.Sum(nil))
	}
	sum := sha256.Sum256([]byte(input))
	r, s, err := ecdsa.Sign(rand.Reader, priv, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return input + "." + b64(sig)
}

// PrivateJWKMember is k's private key as a jwk header value: what a client must never send.
func PrivateJWKMember(t testing.TB, k Key) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(k.PrivateJWK, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "key_ops")
	delete(m, "ext")
	return m
}

// TamperSignature flips one bit of a compact JWS's signature.
func TamperSignature(proof string) string {
	i := strings.LastIndexByte(proof, '.')
	sig, err := base64.RawURLEncoding.DecodeString(proof[i+1:])
	if err != nil || len(sig) == 0 {
		return proof + "x"
	}
	sig[len(sig)/2] ^= 1
	return proof[:i+1] + b64(sig)
}

func privateKey(t testing.TB, k Key) *ecdsa.PrivateKey {
	t.Helper()
	var jwk jose.JSONWebKey
	if err := jwk.UnmarshalJSON(k.PrivateJWK); err != nil {
		t.Fatalf("dpopclient: the library's private key: %v", err)
	}
	priv, ok := jwk.Key.(*ecdsa.PrivateKey)
	if !ok {
		t.Fatalf("dpopclient: Forge signs with ES256 keys only, not %T", jwk.Key)
	}
	return priv
}

func publicJWK(t testing.TB, priv crypto.Signer) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(mustJSON(t, jose.JSONWebKey{Key: priv.Public()})), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func segment(t testing.TB, m map[string]any) string {
	t.Helper()
	out := map[string]any{}
	for k, v := range m {
		if v != nil {
			out[k] = v
		}
	}
	return b64([]byte(mustJSON(t, out)))
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }
