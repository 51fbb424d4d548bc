package mcphttp

import "testing"

// TestArgumentAtIgnoresWhiteSpace: white space JSON allows around a value is not part of it, so
// a bound argument reads and mirrors the same whatever spacing the caller (or a path inside the
// gateway that hands arguments on) used.
func TestArgumentAtIgnoresWhiteSpace(t *testing.T) {
	for _, tc := range []struct {
		args   string
		path   []string
		want   string
		mirror string
	}{
		{`{"region":"eu"}`, []string{"region"}, `"eu"`, "eu"},
		{" \t{\"region\" : \"eu\" \n}\r\n", []string{"region"}, `"eu"`, "eu"},
		{`{"a": { "b" : 42 } }`, []string{"a", "b"}, `42`, "42"},
		{"\n{\"a\":\n\t{\"b\":true}}", []string{"a", "b"}, `true`, "true"},
		{`{"region": null }`, []string{"region"}, ``, ``},
		{`   `, []string{"region"}, ``, ``},
	} {
		got, err := argumentAt([]byte(tc.args), tc.path)
		if err != nil || string(got) != tc.want {
			t.Errorf("argumentAt(%q, %v) = %q, %v; want %q", tc.args, tc.path, got, err, tc.want)
			continue
		}
		if got == nil {
			continue
		}
		if m, ok := mirrored(got); !ok || m != tc.mirror {
			t.Errorf("mirrored(%q) = %q, %v; want %q", got, m, ok, tc.mirror)
		}
	}
	// A value handed over with its surrounding white space mirrors as the value alone: the
	// string's quotes are its own, not the space after it.
	for _, v := range []string{`"" `, " \"\"", "\"x\"\n", "\t42 ", "true\r\n"} {
		m, ok := mirrored([]byte(v))
		if want := map[string]string{`"" `: "", " \"\"": "", "\"x\"\n": "x", "\t42 ": "42", "true\r\n": "true"}[v]; !ok || m != want {
			t.Errorf("mirrored(%q) = %q, %v; want %q", v, m, ok, want)
		}
	}
	for _, v := range []string{``, ` `, `"`, ` " `} {
		if m, ok := mirrored([]byte(v)); ok {
			t.Errorf("mirrored(%q) = %q, accepted", v, m)
		}
	}
}

// TestMirroredOnlyWhatEveryParserReads: an argument is mirrored into an Mcp-Param-* header, and
// a header accepted for it, only when every JSON parser reads the argument as that value. A
// number is an integer by its decimal value, not by what a float64 rounds it to (Python's
// Decimal, Java's BigDecimal and Go's json.Number read 42.00000000000000001 as no integer); a
// string with a lone surrogate escape is U+FFFD to encoding/json but the surrogate itself to
// JSON.parse and Python's json, so no header can say what the backend reads.
func TestMirroredOnlyWhatEveryParserReads(t *testing.T) {
	for in, want := range map[string]string{
		`42`: "42", `42.0`: "42", `4.2e1`: "42", `4.2E+1`: "42", `420e-1`: "42", `0.42e2`: "42", `-42`: "-42",
		`0`: "0", `-0`: "0", `0.0e5`: "0", `0e-99999999999999999999`: "0", `9007199254740991`: "9007199254740991",
		`-9007199254740991`: "-9007199254740991", `90071992547409.91e2`: "9007199254740991", `1e15`: "1000000000000000",
		`100000000000000000000e-5`: "1000000000000000", `0.000000000000000000001e21`: "1",
		`"a\ud83d\ude00b"`: "a\U0001F600b", `"\\ud800"`: `\ud800`, `"\u00e9"`: "é", `"\\"`: `\`,
	} {
		if got, ok := mirrored([]byte(in)); !ok || got != want {
			t.Errorf("mirrored(%s) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{
		`42.00000000000000001`, `9007199254740991.4`, `4.2`, `1e-1`, `9007199254740992`, `1e16`, `1e400`,
		`-9007199254740992`, `12345678901234567e-1`, `1e99999999999999999999`, `0.000000000000000000011e20`,
		`"\ud800"`, `"a\udc00"`, `"\ud800\u0041"`, `"\ud800x"`, `"\udc00\ud800"`, `"\ud83d"`, `"x\\\ud800"`,
	} {
		if got, ok := mirrored([]byte(in)); ok {
			t.Errorf("mirrored(%s) = %q, want it refused", in, got)
		}
	}
	for _, h := range []string{"42.00000000000000001", "41.99999999999999999", "4.2000000000000000001e1"} {
		if sameParam(h, "42", true) {
			t.Errorf("header %q accepted for argument 42", h)
		}
	}
}
