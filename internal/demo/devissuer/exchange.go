package devissuer

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	jose "github.com/go-jose/go-jose/v4"
)

// RFC 8693 identifiers.
const (
	// GrantTokenExchange is the token exchange grant type (RFC 8693 §2.1).
	GrantTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
	// TokenTypeAccessToken is the token type URI of an OAuth access token (RFC 8693 §3).
	TokenTypeAccessToken = "urn:ietf:params:oauth:token-type:access_token"
	// TokenTypeJWT is the token type URI of a JWT (RFC 8693 §3).
	TokenTypeJWT = "urn:ietf:params:oauth:token-type:jwt"
)

// errSubject marks a subject token the issuer does not accept.
var errSubject = errors.New("devissuer: subject token not accepted")

// serveExchange implements the token exchange grant (RFC 8693 §2) for an already
// authenticated client: it verifies the subject token against this issuer's own
// published keys, and mints an access token for the requested audience (the
// "resource" parameter, RFC 8707, or else "audience") with the subject's "sub"
// and the client recorded as the actor (RFC 8693 §4.1). Its scope is the one requested or,
// when none is, the subject token's own, as authorization servers commonly narrow an exchange
// to what the subject token held: so two tokens of one user get different backend tokens.
func (i *Issuer) serveExchange(w http.ResponseWriter, form url.Values, clientID string) {
	st := form.Get("subject_token_type")
	if form.Get("subject_token") == "" || (st != TokenTypeAccessToken && st != TokenTypeJWT) {
		writeOAuthError(w, http.StatusBadRequest, "invalid_request")
		return
	}
	if rt := form.Get("requested_token_type"); rt != "" && rt != TokenTypeAccessToken {
		writeOAuthError(w, http.StatusBadRequest, "invalid_request")
		return
	}
	aud, ok := exchangeAudience(form)
	if !ok {
		writeOAuthError(w, http.StatusBadRequest, "invalid_target")
		return
	}
	subject, scope, err := i.verifySubject(form.Get("subject_token"))
	if err != nil {
		writeOAuthError(w, http.StatusBadRequest, "invalid_grant")
		return
	}
	claims := Claims{"sub": subject, "aud": aud, "client_id": clientID, "act": map[string]any{"sub": clientID}}
	if s := form.Get("scope"); s != "" {
		scope = s
	}
	if scope != "" {
		claims["scope"] = scope
	}
	tok, err := i.Mint(claims)
	if err != nil {
		writeOAuthError(w, http.StatusInternalServerError, "server_error")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"access_token": tok, "issued_token_type": TokenTypeAccessToken, "token_type": "Bearer",
		"expires_in": int(i.opts.TTL.Seconds()),
	})
}

// exchangeAudience returns the single target of the exchange: resource wins over
// audience; more than one value of either, or none, is refused.
func exchangeAudience(form url.Values) (string, bool) {
	for _, name := range []string{"resource", "audience"} {
		switch vs := form[name]; len(vs) {
		case 0:
		case 1:
			return vs[0], vs[0] != ""
		default:
			return "", false
		}
	}
	return "", false
}

// verifySubject checks a subject token's signature with the issuer's published
// keys, its issuer and its expiry, and returns its "sub" and "scope". The token
// must be a JWT, a JWS in the Compact Serialization (RFC 7519 §7.2).
func (i *Issuer) verifySubject(token string) (sub, scope string, err error) {
	jws, err := jose.ParseSignedCompact(token, []jose.SignatureAlgorithm{jose.RS256, jose.ES256})
	if err != nil || len(jws.Signatures) != 1 {
		return "", "", fmt.Errorf("%w: not a signed JWT", errSubject)
	}
	key, err := i.publicKey(jws.Signatures[0].Header.KeyID)
	if err != nil {
		return "", "", err
	}
	if jws.Signatures[0].Header.Algorithm != key.Algorithm {
		return "", "", fmt.Errorf("%w: algorithm does not match the key", errSubject)
	}
	payload, err := jws.Verify(key)
	if err != nil {
		return "", "", fmt.Errorf("%w: signature", errSubject)
	}
	var c struct {
		Iss   string `json:"iss"`
		Sub   string `json:"sub"`
		Scope string `json:"scope"`
		Exp   *int64 `json:"exp"`
	}
	if err := json.Unmarshal(payload, &c); err != nil {
		return "", "", fmt.Errorf("%w: claims", errSubject)
	}
	if c.Iss != i.url || c.Sub == "" || c.Exp == nil || i.opts.Now().Unix() >= *c.Exp {
		return "", "", fmt.Errorf("%w: issuer, subject or expiry", errSubject)
	}
	return c.Sub, c.Scope, nil
}

// publicKey returns the published key with the given kid.
func (i *Issuer) publicKey(kid string) (*jose.JSONWebKey, error) {
	i.mu.RLock()
	defer i.mu.RUnlock()
	for _, k := range i.keys {
		if k.kid == kid {
			return &jose.JSONWebKey{Key: k.priv.Public(), KeyID: k.kid, Algorithm: k.alg}, nil
		}
	}
	return nil, fmt.Errorf("%w: unknown kid", errSubject)
}

func writeOAuthError(w http.ResponseWriter, status int, code string) {
	writeJSON(w, status, map[string]string{"error": code})
}
