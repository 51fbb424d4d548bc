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

// TestAppendMemberRoundTrips: an object rebuilt member by member from what Members hands on is
// the same object, every key re-escaped where JSON requires it.
func TestAppendMemberRoundTrips(t *testing.T) {
	body := `{"\u0069d":1,"a\\b":"\u00e9","q\"k":{"x":[1,{}]},"ctl\u0001":null,"\u00e9":{}}`
	out := []byte{'{'}
	if err := Members([]byte(body), func(k, v []byte) error {
		out = AppendMember(out, k, v)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	out = append(out, '}')
	want := `{"id":1,"a\\b":"\u00e9","q\"k":{"x":[1,{}]},"ctl\u0001":null,"é":{}}`
	if string(out) != want {
		t.Errorf("rebuilt %s\nwant    %s", out, want)
	}
	if err := Scan(out, Limits{}); err != nil {
		t.Errorf("rebuilt object does not scan: %v", err)
	}
}
