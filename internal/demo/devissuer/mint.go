package devissuer

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/subtle"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"strings"

	jose "github.com/go-jose/go-jose/v4"
)

// ErrNoKey is returned when no published key has the requested algorithm.
var ErrNoKey = errors.New("devissuer: no key for algorithm")

// Mint signs claims with the current signing key and returns a compact JWT.
// Missing iss, sub, iat and exp (and aud, when Options.Audience is set) are
// filled in; a claim set to nil is left out.
func (i *Issuer) Mint(claims Claims) (string, error) {
	i.mu.RLock()
	k := i.keys[i.signer]
	i.mu.RUnlock()
	return i.sign(k, i.complete(claims))
}

// MintAlg is Mint with the newest published key of algorithm alg.
func (i *Issuer) MintAlg(alg string, claims Claims) (string, error) {
	k, err := i.newest(alg)
	if err != nil {
		return "", err
	}
	return i.sign(k, i.complete(claims))
}

func (i *Issuer) newest(alg string) (signingKey, error) {
	i.mu.RLock()
	defer i.mu.RUnlock()
	for j := len(i.keys) - 1; j >= 0; j-- {
		if i.keys[j].alg == alg {
			return i.keys[j], nil
		}
	}
	return signingKey{}, fmt.Errorf("%w %q", ErrNoKey, alg)
}

func (i *Issuer) complete(in Claims) map[string]any {
	now := i.opts.Now()
	out := map[string]any{
		"iss": i.url,
		"sub": DefaultSubject,
		"iat": now.Unix(),
		"exp": now.Add(i.opts.TTL).Unix(),
	}
	if i.opts.Audience != "" {
		out["aud"] = i.opts.Audience
	}
	for k, v := range in {
		if v == nil {
			delete(out, k)
			continue
		}
		out[k] = v
	}
	return out
}

func (i *Issuer) sign(k signingKey, claims map[string]any) (string, error) {
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", fmt.Errorf("devissuer: claims: %w", err)
	}
	return signCompact(jose.SignatureAlgorithm(k.alg), k.priv, k.kid, payload)
}

func signCompact(alg jose.SignatureAlgorithm, key any, kid string, payload []byte) (string, error) {
	return signCompactWith(alg, key, kid, payload, (&jose.SignerOptions{}).WithType("JWT"))
}

// signCompactWith is signCompact with the header's other members as opts sets them.
func signCompactWith(alg jose.SignatureAlgorithm, key any, kid string, payload []byte, opts *jose.SignerOptions) (string, error) {
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: jose.JSONWebKey{Key: key, KeyID: kid}}, opts)
	if err != nil {
		return "", fmt.Errorf("devissuer: signer: %w", err)
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		return "", fmt.Errorf("devissuer: sign: %w", err)
	}
	return jws.CompactSerialize()
}

// MintNone returns an unsigned token with "alg":"none" and the signer's kid.
// Hostile token for tests.
func (i *Issuer) MintNone(claims Claims) (string, error) {
	i.mu.RLock()
	kid := i.keys[i.signer].kid
	i.mu.RUnlock()
	return rawToken(map[string]any{"alg": "none", "typ": "JWT", "kid": kid}, i.complete(claims), "")
}

// MintHS256WithPublicKey returns a token signed with HS256 whose HMAC secret
// is the PEM encoding of the newest RSA public key, with that key's kid: the
// classic algorithm-confusion attack. Hostile token for tests.
func (i *Issuer) MintHS256WithPublicKey(claims Claims) (string, error) {
	k, err := i.newest(RS256)
	if err != nil {
		return "", err
	}
	der, err := x509.MarshalPKIXPublicKey(k.priv.Public())
	if err != nil {
		return "", fmt.Errorf("devissuer: public key: %w", err)
	}
	secret := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	payload, err := json.Marshal(i.complete(claims))
	if err != nil {
		return "", fmt.Errorf("devissuer: claims: %w", err)
	}
	return signCompact(jose.HS256, secret, k.kid, payload)
}

// MintUnknownKey returns a token signed by a fresh ES256 key that is never
// published, under a kid the issuer does not know. Hostile token for tests.
func (i *Issuer) MintUnknownKey(claims Claims) (string, error) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", fmt.Errorf("devissuer: key: %w", err)
	}
	payload, err := json.Marshal(i.complete(claims))
	if err != nil {
		return "", fmt.Errorf("devissuer: claims: %w", err)
	}
	return signCompact(jose.ES256, priv, "dev-unpublished", payload)
}

// MintForeignKeyKnownKID returns a token signed by a fresh, unpublished key of
// the signer's algorithm but carrying the signer's kid, so only the signature
// check can reject it. Hostile token for tests.
func (i *Issuer) MintForeignKeyKnownKID(claims Claims) (string, error) {
	i.mu.RLock()
	k := i.keys[i.signer]
	i.mu.RUnlock()
	priv, err := generate(k.alg, i.opts.RSABits)
	if err != nil {
		return "", err
	}
	return i.sign(signingKey{kid: k.kid, alg: k.alg, priv: priv}, i.complete(claims))
}

// MintHeader is Mint with the protected header's members changed: each member of header is set
// in it, "typ" included, and a nil value leaves the member out ({"typ": nil} mints a token
// without typ). "alg" and "kid" are the signing key's and cannot be changed. For tests of what
// a header may say.
func (i *Issuer) MintHeader(header Claims, claims Claims) (string, error) {
	i.mu.RLock()
	k := i.keys[i.signer]
	i.mu.RUnlock()
	payload, err := json.Marshal(i.complete(claims))
	if err != nil {
		return "", fmt.Errorf("devissuer: claims: %w", err)
	}
	opts := &jose.SignerOptions{}
	if _, set := header["typ"]; !set {
		opts = opts.WithType("JWT")
	}
	for name, v := range header {
		if v != nil && name != "alg" && name != "kid" {
			opts = opts.WithHeader(jose.HeaderKey(name), v)
		}
	}
	return signCompactWith(jose.SignatureAlgorithm(k.alg), k.priv, k.kid, payload, opts)
}

// MintPayload signs payload, taken as it is, with the current signing key: a payload no map
// can produce, such as one naming a claim twice. Hostile token for tests.
func (i *Issuer) MintPayload(payload []byte) (string, error) {
	i.mu.RLock()
	k := i.keys[i.signer]
	i.mu.RUnlock()
	return signCompact(jose.SignatureAlgorithm(k.alg), k.priv, k.kid, payload)
}

// TamperSignature flips one bit of the decoded signature of a compact JWT.
func TamperSignature(token string) string {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return token
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || len(sig) == 0 {
		return token
	}
	sig[len(sig)/2] ^= 0x01
	parts[2] = base64.RawURLEncoding.EncodeToString(sig)
	return strings.Join(parts, ".")
}

// TamperPayload replaces or adds claims in a signed JWT's payload while
// keeping the original header and signature.
func TamperPayload(token string, changes Claims) (string, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return "", errors.New("devissuer: not a compact JWT")
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return "", fmt.Errorf("devissuer: payload: %w", err)
	}
	var claims map[string]any
	if err := json.Unmarshal(raw, &claims); err != nil {
		return "", fmt.Errorf("devissuer: payload: %w", err)
	}
	for k, v := range changes {
		claims[k] = v
	}
	out, err := json.Marshal(claims)
	if err != nil {
		return "", fmt.Errorf("devissuer: payload: %w", err)
	}
	parts[1] = base64.RawURLEncoding.EncodeToString(out)
	return strings.Join(parts, "."), nil
}

func rawToken(header, claims map[string]any, sig string) (string, error) {
	h, err := json.Marshal(header)
	if err != nil {
		return "", fmt.Errorf("devissuer: header: %w", err)
	}
	p, err := json.Marshal(claims)
	if err != nil {
		return "", fmt.Errorf("devissuer: claims: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(p) + "." + sig, nil
}

// serveToken implements the client-credentials grant (RFC 6749 §4.4), the
// token exchange grant (RFC 8693, exchange.go) and the authorization code grant
// (authcode.go) with client_secret_basic or
// client_secret_post, honouring the RFC 8707 "resource" parameter as the
// audience. With a DPoP proof, client-credentials and authorization code
// tokens are bound to its key (dpop.go).
func (i *Issuer) serveToken(w http.ResponseWriter, r *http.Request) {
	if i.TokenURL() == "" {
		http.NotFound(w, r)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	err := r.ParseForm()
	grant := r.PostForm.Get("grant_type")
	if err == nil && grant == "authorization_code" && len(i.opts.WebClients) > 0 {
		i.serveCodeGrant(w, r) // authcode.go
		return
	}
	if err != nil || len(i.opts.Clients) == 0 || (grant != "client_credentials" && grant != GrantTokenExchange) {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type"})
		return
	}
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	want, known := i.opts.Clients[id]
	if !known || id == "" || subtle.ConstantTimeCompare([]byte(secret), []byte(want)) != 1 {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
		return
	}
	if grant == GrantTokenExchange {
		i.serveExchange(w, r.PostForm, id)
		return
	}
	claims := Claims{"sub": id, "client_id": id}
	if s := r.PostForm.Get("scope"); s != "" {
		claims["scope"] = s
	}
	if res := r.PostForm.Get("resource"); res != "" {
		claims["aud"] = res
	}
	tokenType, ok := i.bindToProof(w, r, claims)
	if !ok {
		return
	}
	tok, err := i.Mint(claims)
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "server_error"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"access_token": tok, "token_type": tokenType, "expires_in": int(i.opts.TTL.Seconds()),
	})
}
