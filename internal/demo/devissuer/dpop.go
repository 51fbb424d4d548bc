package devissuer

import (
	"errors"
	"net/http"

	"github.com/mcp-gateway/gateway/authz/dpop"
)

// DPoP at the token endpoint (RFC 9449 §5): a token request that carries a DPoP proof for
// POST to the token endpoint gets an access token bound to the proof's key (cnf.jkt, §6.1) and
// token_type DPoP. A request with no DPoP header gets a bearer token as before. The issuer
// keeps no record of jti: replay at the token endpoint is not what it is for.

// errNoProof means a token request carries no DPoP header.
var errNoProof = errors.New("devissuer: no DPoP proof")

// dpopAlgorithms are the proof algorithms the token endpoint accepts and discovery names.
func dpopAlgorithms() []string { return dpop.DefaultAlgorithms() }

// proofKey checks a token request's DPoP proof and returns the thumbprint its token is bound
// to; errNoProof without one.
func (i *Issuer) proofKey(r *http.Request) (string, error) {
	proofs := r.Header.Values(dpop.Header)
	if len(proofs) == 0 {
		return "", errNoProof
	}
	if len(proofs) > 1 {
		return "", dpop.HeaderError(len(proofs))
	}
	v, err := dpop.NewVerifier(dpop.Config{Algorithms: dpopAlgorithms()})
	if err != nil {
		return "", err
	}
	htu, err := dpop.NormalizeURL(i.TokenURL())
	if err != nil {
		return "", err
	}
	p, err := v.Verify(proofs[0], dpop.Request{Method: http.MethodPost, URL: htu, Now: i.opts.Now()})
	if err != nil {
		return "", err
	}
	return p.JKT, nil
}

// bindToProof adds cnf.jkt to claims when r carries a valid proof and returns the token type to
// answer with. false means the proof was refused and the error answer is written.
func (i *Issuer) bindToProof(w http.ResponseWriter, r *http.Request, claims Claims) (string, bool) {
	jkt, err := i.proofKey(r)
	switch {
	case errors.Is(err, errNoProof):
		return "Bearer", true
	case err != nil:
		writeOAuthError(w, http.StatusBadRequest, dpop.CodeInvalidProof)
		return "", false
	}
	claims["cnf"] = map[string]any{"jkt": jkt}
	return dpop.Scheme, true
}
