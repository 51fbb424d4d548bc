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
