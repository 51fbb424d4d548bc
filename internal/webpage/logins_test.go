package webpage

import (
	"encoding/json"
	"testing"
	"time"
)

// TestLoginCookieHoldsOnlyItsSignIns: the login cookie's value holds the sign-ins in progress
// and nothing else: the single login a previous release sealed, which it embeds to read such a
// value, is empty in every value sealed now and takes no room the cookie's sign-ins could use;
// a value sealed as one login still reads as that one.
func TestLoginCookieHoldsOnlyItsSignIns(t *testing.T) {
	t.Parallel()
	l := login{State: "s", Nonce: "n", Verifier: "v", Return: "/r", Expiry: time.Unix(1e9, 0).UTC()}
	b, err := json.Marshal(logins{Pending: []login{l}})
	if err != nil {
		t.Fatal(err)
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 || keys["pending"] == nil {
		t.Fatalf("the login cookie's value is %s, want only its pending sign-ins", b)
	}
	old, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	var v logins
	if err := json.Unmarshal(old, &v); err != nil || v.login != l || v.Pending != nil {
		t.Fatalf("a value sealed as one login reads as %+v (%v), want that login", v, err)
	}
}
