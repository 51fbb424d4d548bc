package backend

import (
	"errors"
	"testing"
)

// TestSubjectIssuerOfCallerKey: the issuer a token-exchange backend checks is that of the
// caller's key (callerkey.Split), a subject holding '#' included, and a key no verified caller
// has (no subject, no '#', another issuer's prefix) is refused before anything is sent.
func TestSubjectIssuerOfCallerKey(t *testing.T) {
	c := &credentials{name: "x", cfg: AuthConfig{Type: AuthTokenExchange, SubjectIssuers: []string{"https://idp.example"}}}
	for _, tt := range []struct {
		caller string
		ok     bool
	}{
		{"https://idp.example#alice", true},
		{"https://idp.example#a#b", true},
		{"https://idp.example##", true},
		{"https://idp.example#", false},
		{"https://idp.example", false},
		{"", false},
		{"https://other.example#alice", false},
		{"https://idp.example.evil#alice", false},
	} {
		err := c.checkSubjectIssuer(&Request{Caller: tt.caller})
		if (err == nil) != tt.ok || (err != nil && !errors.Is(err, ErrIssuerNotExchanged)) {
			t.Errorf("caller %q: %v, want ok=%v", tt.caller, err, tt.ok)
		}
	}
}
