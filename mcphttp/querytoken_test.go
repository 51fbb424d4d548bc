package mcphttp

import "testing"

// TestQueryNamesToken: an access_token parameter is seen however a query parser may split and
// decode the query, and nothing else is taken for one; the check allocates nothing.
func TestQueryNamesToken(t *testing.T) {
	for q, want := range map[string]bool{
		"access_token=x":         true,
		"access_token":           true,
		"a=1&access_token=x":     true,
		"a=1;access_token=x":     true, // URL.Query drops the pair
		"access_token=x%zz":      true, // URL.Query drops the pair
		"access%5ftoken=x":       true,
		"access_toke%6E=x":       true,
		"a=%zz&access_token=x":   true,
		"":                       false,
		"a=access_token":         false,
		"access_tokens=x":        false,
		"xaccess_token=x":        false,
		"access+token=x":         false,
		"access_token%zz=x":      false,
		"access_token%2=x":       false,
		"Access_Token=x":         false,
		"a=1&b=2;c=access_token": false,
	} {
		if got := queryNamesToken(q); got != want {
			t.Errorf("queryNamesToken(%q) = %v, want %v", q, got, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { queryNamesToken("a=1;b=%41&access%5Ftoken=x") }); n != 0 {
		t.Errorf("queryNamesToken allocates %v times", n)
	}
}
