package authz

import (
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

// A token's header and claims are read by more than one decoder: this package reads the claims
// into a map, by exact name, while peek and go-oidc read iss, sub, aud, exp, nbf and iat into Go
// structs, whose decoder matches member names under case folding and lets the last match win
// ("ISS", or "iſs" with a long s, fills iss). A token naming one claim twice, or twice under
// folding, was verified with one issuer's keys and audiences while the Principal read another's
// issuer: a token signed by issuer B that also claimed "iss": A became A's caller, with A's
// rules, A's users' per-caller state and A's audience. Such a token is refused before its
// signature is checked, whichever member the issuer meant.

// structNames are the members some decoder reads into a struct, which must be spelt exactly:
// the registered claims go-oidc and peek read, and the header parameters peek reads.
var structNames = foldedNames("iss", "sub", "aud", "exp", "nbf", "iat", "nonce", "at_hash",
	"_claim_names", "_claim_sources", "alg", "kid")

func foldedNames(names ...string) map[string]string {
	m := make(map[string]string, len(names))
	for _, n := range names {
		m[foldName(n)] = n
	}
	return m
}

// maxTokenDepth bounds the nesting of a token's JSON: far above any issuer's claims.
const maxTokenDepth = 16

var errNameClash = errors.New("authz: a token names a member twice")

// ClaimNamesExact is checkNames for the gateway's other readers of tokens: the sign-in pages
// hold an ID token's claims to the rule Authenticate holds an access token's to.
func ClaimNamesExact(obj []byte) bool { return checkNames(obj) }

// checkNames refuses a decoded header or claims object with a member named twice (at any
// depth), two top-level members equal under foldName, or a top-level member that folds to one
// of structNames without being it.
func checkNames(obj []byte) bool {
	if jsonrpc.Scan(obj, jsonrpc.Limits{MaxDepth: maxTokenDepth}) != nil {
		return false
	}
	seen := make(map[string]bool, 16)
	err := jsonrpc.Members(obj, func(k, _ []byte) error {
		f := foldName(string(k))
		if exact, ok := structNames[f]; seen[f] || (ok && exact != string(k)) {
			return errNameClash
		}
		seen[f] = true
		return nil
	})
	return err == nil
}

// foldName is the equivalence encoding/json matches member names to struct fields by (its own
// foldName; bytes.EqualFold): ASCII letters in one case, any other rune as the smallest of its
// simple case folding orbit, so "ſ" (long s) is "S" and "K" (Kelvin sign) is "K". Exactly that,
// and no wider: two claims that decoder keeps apart, such as "clientId" and "client_id" in a
// Keycloak token, must both stay allowed.
func foldName(name string) string {
	var b strings.Builder
	b.Grow(len(name))
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z':
			r -= 'a' - 'A'
		case r >= utf8.RuneSelf:
			r = jsonrpc.FoldRune(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}
