package era

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestSamplingWithoutContext: a sampling request's includeContext becomes "none" whatever its
// value (each of the two that include context, a case variant, null, a number, an object) and
// however its name is escaped; params without it, or with "none", are kept byte for byte; the
// other members are kept as they are.
func TestSamplingWithoutContext(t *testing.T) {
	msgs := `"messages":[{"role":"user","content":{"type":"text","text":"thisServer"}}],"maxTokens":5`
	for _, tt := range []struct{ in, want string }{
		{`{` + msgs + `,"includeContext":"thisServer"}`, `{` + msgs + `,"includeContext":"none"}`},
		{`{"includeContext":"allServers",` + msgs + `}`, `{"includeContext":"none",` + msgs + `}`},
		{`{` + msgs + `,"includeContext":"ALLSERVERS"}`, `{` + msgs + `,"includeContext":"none"}`},
		{`{` + msgs + `,"includeContext":null}`, `{` + msgs + `,"includeContext":"none"}`},
		{`{` + msgs + `,"includeContext":1}`, `{` + msgs + `,"includeContext":"none"}`},
		{`{` + msgs + `,"includeContext":{"thisServer":true}}`, `{` + msgs + `,"includeContext":"none"}`},
		{`{` + msgs + `,"include\u0043ontext":"allServers"}`, `{` + msgs + `,"includeContext":"none"}`},
		{`{` + msgs + `,"includeContext":"none"}`, `{` + msgs + `,"includeContext":"none"}`},
		{`{ ` + msgs + ` }`, `{ ` + msgs + ` }`},
	} {
		got, changed, err := SamplingWithoutContext([]byte(tt.in))
		if err != nil || string(got) != tt.want || changed != (tt.in != tt.want) {
			t.Errorf("%s: got %s (changed %v), %v; want %s", tt.in, got, changed, err, tt.want)
		}
	}
}

// TestInputRequestsWithoutContext: every sampling entry of a round asks for no context; other
// entries, and entries it cannot read, are left for InputRequests.
func TestInputRequestsWithoutContext(t *testing.T) {
	in := `{"a":{"method":"sampling/createMessage","params":{"messages":[],"maxTokens":1,"includeContext":"thisServer"}},` +
		`"b":{"method":"sampling\/createMessage","params":{"includeContext":"allServers","messages":[],"maxTokens":1}},` +
		`"c":{"method":"elicitation/create","params":{"message":"includeContext","includeContext":"thisServer"}},` +
		`"d":{"method":"roots/list"},"e":"x"}`
	got, changed, err := InputRequestsWithoutContext([]byte(in))
	if err != nil || !changed {
		t.Fatalf("got %s, %v, %v", got, changed, err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(got, &m); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{
		"a": `{"method":"sampling/createMessage","params":{"messages":[],"maxTokens":1,"includeContext":"none"}}`,
		"b": `{"method":"sampling\/createMessage","params":{"includeContext":"none","messages":[],"maxTokens":1}}`,
		"c": `{"method":"elicitation/create","params":{"message":"includeContext","includeContext":"thisServer"}}`,
		"d": `{"method":"roots/list"}`,
		"e": `"x"`,
	} {
		if string(m[key]) != want {
			t.Errorf("%s: got %s, want %s", key, m[key], want)
		}
	}
	reqs, err := InputRequests(V20251125, got)
	if err == nil {
		t.Fatalf("an entry that is not an object was read: %+v", reqs)
	}
	same := `{"d":{"method":"roots/list"}}`
	if got, changed, err := InputRequestsWithoutContext([]byte(same)); err != nil || changed || string(got) != same {
		t.Errorf("nothing to change: got %s, %v, %v", got, changed, err)
	}
	if _, _, err := InputRequestsWithoutContext([]byte(`{"a":1,"a":2}`)); err == nil || !strings.Contains(err.Error(), "duplicate") {
		t.Errorf("duplicate keys: %v, want refused", err)
	}
}
