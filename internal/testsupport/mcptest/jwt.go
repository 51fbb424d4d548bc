package mcptest

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
)

// JWTClaims decodes the payload of a compact JWT without verifying its signature, for a test
// that asserts what a token says (its subject, audience, scopes). It fails tb if token is not a
// three-part JWT with a JSON object as payload.
func JWTClaims(tb testing.TB, token string) map[string]any {
	tb.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		tb.Fatalf("not a compact JWT: %d parts", len(parts))
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		tb.Fatal(err)
	}
	var c map[string]any
	if err := json.Unmarshal(raw, &c); err != nil {
		tb.Fatal(err)
	}
	return c
}
