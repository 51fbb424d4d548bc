package authz

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-gateway/gateway/internal/callerkey"
)

// Principal is the verified caller. Values returned by Authenticate are
// shared with the token cache: treat every field as read-only.
type Principal struct {
	// Issuer is the token's "iss".
	Issuer string `json:"issuer"`
	// Subject is the token's "sub".
	Subject string `json:"subject"`
	// Scopes are the granted scopes after ScopeHierarchy expansion.
	Scopes ScopeSet `json:"scopes"`
	// Groups are the values of the configured groups claim.
	Groups []string `json:"groups,omitempty"`
	// Claims are all claims of the token as decoded JSON.
	Claims map[string]any `json:"claims"`
	// ExpiresAt is the token's "exp".
	ExpiresAt time.Time `json:"expiresAt"`
	// JKT is the token's cnf.jkt: the thumbprint of the key it is bound to (RFC 9449 §6.1);
	// "" for a bearer token.
	JKT string `json:"jkt,omitempty"`
	// dpop is the DPoP mode of the token's issuer (DPoPOff, DPoPAllowed, DPoPRequired), set when
	// the token is verified.
	dpop string
	// keys is the key set that verified the token, for the token cache (keyStamp).
	keys keyStamp
}

// CallerKey is the caller's identity as every per-caller bound and breaker keys it (the
// upstreams' breakers, the interceptors' slots and breakers, legacy sessions, the token vault):
// issuer-qualified, since subjects are unique per issuer only, and never a token, so that a
// caller has one key however many tokens it gets (callerkey.Of, which spells it). "" for no
// principal: without authentication every caller is the same anonymous one.
func (p *Principal) CallerKey() string {
	if p == nil {
		return ""
	}
	return callerkey.Of(p.Issuer, p.Subject)
}

// ScopeSet is a set of scope names.
type ScopeSet map[string]struct{}

// Has reports whether scope is in the set.
func (s ScopeSet) Has(scope string) bool {
	_, ok := s[scope]
	return ok
}

// Sorted returns the scopes in lexical order.
func (s ScopeSet) Sorted() []string {
	out := make([]string, 0, len(s))
	for k := range s {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// MarshalJSON encodes the set as a sorted array.
func (s ScopeSet) MarshalJSON() ([]byte, error) { return json.Marshal(s.Sorted()) }

// hierarchy maps a scope to every scope it implies, transitively, itself
// excluded. It is computed once in New.
type hierarchy map[string][]string

func compileHierarchy(h map[string][]string) hierarchy {
	out := make(hierarchy, len(h))
	for broad := range h {
		seen := map[string]bool{broad: true}
		queue := []string{broad}
		// Bounded: each scope enters the queue at most once.
		for len(queue) > 0 {
			cur := queue[0]
			queue = queue[1:]
			for _, n := range h[cur] {
				if !seen[n] {
					seen[n] = true
					out[broad] = append(out[broad], n)
					queue = append(queue, n)
				}
			}
		}
	}
	return out
}

func (h hierarchy) expand(granted []string) ScopeSet {
	set := make(ScopeSet, len(granted))
	for _, s := range granted {
		set[s] = struct{}{}
		for _, n := range h[s] {
			set[n] = struct{}{}
		}
	}
	return set
}

// claimReader turns verified claims into a Principal.
type claimReader struct {
	scopeClaims []string
	groupsClaim string
	hierarchy   hierarchy
}

func (r claimReader) principal(claims map[string]any) *Principal {
	p := &Principal{Claims: claims}
	p.Issuer, _ = claims["iss"].(string)
	p.Subject, _ = claims["sub"].(string)
	p.ExpiresAt, _ = numericDate(claims["exp"])
	for _, name := range r.scopeClaims {
		if v, ok := claims[name]; ok {
			p.Scopes = r.hierarchy.expand(stringsOf(v, true))
			break
		}
	}
	if p.Scopes == nil {
		p.Scopes = ScopeSet{}
	}
	p.Groups = stringsOf(claims[r.groupsClaim], false)
	if cnf, ok := claims["cnf"].(map[string]any); ok {
		p.JKT, _ = cnf["jkt"].(string)
	}
	return p
}

// checkConfirmation refuses a cnf claim that is not an object, or that binds the token by
// anything but one non-empty string jkt (RFC 9449 §6.1). Every member of cnf is a confirmation
// method (RFC 7800 §3.1): x5t#S256 (RFC 8705), jwk, jwe, jku, kid, and any later one bind the
// token to a certificate or key this gateway never checks, so such a token, taken for a bearer
// token, would serve whoever holds a copy. An empty cnf says the token is bound without saying
// to what. Neither is taken for a bearer token nor matched against a proof.
func checkConfirmation(claims map[string]any) error {
	v, present := claims["cnf"]
	if !present {
		return nil
	}
	cnf, ok := v.(map[string]any)
	if !ok {
		return invalid(ReasonClaims, "cnf")
	}
	if s, ok := cnf["jkt"].(string); !ok || s == "" || len(cnf) != 1 {
		return invalid(ReasonClaims, "cnf: a confirmation method other than jkt")
	}
	return nil
}

// stringsOf reads a claim that is an array of strings or one string; with
// split, a string is a space-separated list (the OAuth "scope" format).
// Only U+0020 separates (RFC 6749 §3.3): other white space is part of the
// token the authorization server granted, not a second grant.
func stringsOf(v any, split bool) []string {
	switch t := v.(type) {
	case string:
		if split {
			return strings.FieldsFunc(t, func(r rune) bool { return r == ' ' })
		}
		return []string{t}
	case []any:
		out := make([]string, 0, len(t))
		for _, e := range t {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	default:
		return nil
	}
}

// claimPath is a claim name compiled for lookup: by exact name first, then,
// for names with dots, as a path into nested objects (e.g.
// "realm_access.roles"). Exact names win because URL-shaped claim names
// contain dots.
type claimPath struct {
	name  string
	parts []string // name split at its dots; nil when it has none
}

func compileClaimPath(name string) claimPath {
	c := claimPath{name: name}
	if strings.Contains(name, ".") {
		c.parts = strings.Split(name, ".")
	}
	return c
}

func (c claimPath) lookup(claims map[string]any) (any, bool) {
	if v, ok := claims[c.name]; ok {
		return v, true
	}
	if c.parts == nil {
		return nil, false
	}
	var cur any = claims
	for _, part := range c.parts {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[part]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// claimMatches reports whether a claim value, or any element of an array
// value, equals one of the accepted strings. Numbers and booleans compare by
// their JSON text; an integer beyond ±2^53, which no float64 reads exactly,
// equals none.
func claimMatches(v any, accepted []string) bool {
	switch t := v.(type) {
	case []any:
		for _, e := range t {
			if scalarMatches(e, accepted) {
				return true
			}
		}
		return false
	default:
		return scalarMatches(v, accepted)
	}
}

func scalarMatches(v any, accepted []string) bool {
	var buf [32]byte
	var s string
	switch t := v.(type) {
	case string:
		s = t
	case bool:
		s = strconv.FormatBool(t)
	case float64:
		if math.Abs(t) >= 1<<53 {
			// Beyond 2^53 a float64 holds only some integers: the claim was read as a
			// neighbour of what the issuer wrote (9007199254740993 as ...992), whose text
			// would satisfy a condition written for the neighbour.
			return false
		}
		s = string(strconv.AppendFloat(buf[:0], t, 'f', -1, 64))
	default:
		return false
	}
	return slices.Contains(accepted, s)
}
