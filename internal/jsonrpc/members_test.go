package jsonrpc

import (
	"strings"
	"testing"
)

// TestMembersEscapedKeys: Members hands on keys with their escapes decoded, short or long, with
// the escape early or late, and values as they are.
func TestMembersEscapedKeys(t *testing.T) {
	long := strings.Repeat("k", 30)
	body := `{"\u0069d":1,"a\\b":"\u00e9",` + `"` + long + `\"` + long + `":"` + long + `\\",` + `"plain":"\"` + long + `"}`
	if err := Scan([]byte(body), Limits{}); err != nil {
		t.Fatal(err)
	}
	var keys, vals []string
	if err := Members([]byte(body), func(k, v []byte) error {
		keys, vals = append(keys, string(k)), append(vals, string(v))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	wantKeys := []string{"id", `a\b`, long + `"` + long, "plain"}
	wantVals := []string{"1", `"\u00e9"`, `"` + long + `\\"`, `"\"` + long + `"`}
	if strings.Join(keys, "|") != strings.Join(wantKeys, "|") || strings.Join(vals, "|") != strings.Join(wantVals, "|") {
		t.Errorf("keys %q values %q\nwant %q and %q", keys, vals, wantKeys, wantVals)
	}
}
