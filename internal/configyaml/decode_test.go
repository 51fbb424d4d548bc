package configyaml

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/configerr"
)

type secret struct {
	Value string `yaml:"value"`
	File  string `yaml:"file"`
}

type base struct {
	Timeout time.Duration `yaml:"timeout"`
}

type entry struct {
	base    `yaml:",inline"`
	Name    string            `yaml:"name"`
	URL     string            `yaml:"url"`
	Headers map[string]secret `yaml:"headers"`
	Hidden  string            `yaml:"-"`
}

type doc struct {
	Server struct {
		Listen string `yaml:"listen"`
		Port   int    `yaml:"port"`
		Bind   string `yaml:"bind" was:"address"`
	} `yaml:"server"`
	Entries []entry  `yaml:"entries"`
	Ratio   float64  `yaml:"ratio"`
	On      bool     `yaml:"on"`
	Ptr     *base    `yaml:"ptr"`
	Tags    []string `yaml:"tags"`
}

var opts = Options{Expect: map[reflect.Type]string{reflect.TypeFor[secret](): "a secret {value|file}"}}

// problems decodes src into a doc and returns each problem as "line:path: message", the line
// in two digits.
func problems(t *testing.T, src string) []string {
	t.Helper()
	var d doc
	_, err := Decode([]byte(src), &d, opts)
	var out []string
	for _, e := range configerr.List(err) {
		var ce *configerr.Error
		if !errors.As(e, &ce) {
			t.Fatalf("%v is not a *configerr.Error", e)
		}
		out = append(out, fmt.Sprintf("%02d:%s", ce.Line, ce.Error()))
	}
	return out
}

// TestDecode: every problem of a file is reported at once, with its key path, line and what was
// expected, suggesting the nearest key; no message quotes a value.
func TestDecode(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string
	}{
		{"valid", "server: {listen: ':1', port: 2}\nentries:\n  - {name: a, url: u, timeout: 5s, headers: {X: {file: /f}}}\nratio: 0.5\non: yes\nptr: {timeout: 1m}\n", nil},
		{"empty", "", nil},
		{"null block", "server:\nentries:\n", nil},
		{"typo in a list entry", "entries:\n  - name: a\n  - name: b\n    ulr: x\n",
			[]string{`04:entries[1].ulr: unknown key (did you mean "url"?)`}},
		{"typo of an inlined key", "entries: [{timeot: 1s}]\n", []string{`01:entries[0].timeot: unknown key (did you mean "timeout"?)`}},
		{"case", "Server: {}\n", []string{`01:Server: unknown key (did you mean "server"?)`}},
		{"renamed", "server: {address: x}\n", []string{`01:server.address: unknown key (renamed: write "bind")`}},
		{"wrong level", "listen: x\n", []string{`01:listen: unknown key here (did you mean server.listen?)`}},
		{"no suggestion", "zzzzzz: 1\n", []string{`01:zzzzzz: unknown key; expected one of: server, entries, ratio, on, ptr, tags`}},
		{"hidden field is unknown", "entries: [{hidden: x}]\n", []string{`01:entries[0].hidden: unknown key; expected one of: timeout, name, url, headers`}},
		{"map for a list", "entries: {name: a}\n", []string{`01:entries: expected a list (one "- " entry per line, or [a, b]), got a mapping`}},
		{"list for a mapping", "server: [a]\n", []string{`01:server: expected a mapping (key: value), got a list`}},
		{"scalar for a list", "tags: a\n", []string{`01:tags: expected a list (one "- " entry per line, or [a, b]), got a string`}},
		{"duration", "ptr: {timeout: 30}\n", []string{`01:ptr.timeout: expected a duration such as 250ms, 30s, 5m or 1h30m, got a whole number`}},
		{"int", "server: {port: eighty}\n", []string{`01:server.port: expected a whole number, got a string`}},
		{"duration out of range", "ptr: {timeout: 9999999999h}\n",
			[]string{`01:ptr.timeout: expected a duration such as 250ms, 30s, 5m or 1h30m, got one longer than 2562047h47m16.854775807s`}},
		{"duration in days", "ptr: {timeout: 1d}\n", []string{`01:ptr.timeout: expected a duration such as 250ms, 30s, 5m or 1h30m, got a string`}},
		{"bool", "on: maybe\n", []string{`01:on: expected true or false, got a string`}},
		{"float", "ratio: [1]\n", []string{`01:ratio: expected a number, got a list`}},
		{"secret as a string", "entries: [{headers: {X: hunter2-s3cr3t}}]\n",
			[]string{`01:entries[0].headers.X: expected a secret {value|file}, got a string`}},
		{"odd map key", "entries: [{headers: {\"a.b\": 1}}]\n", []string{`01:entries[0].headers["a.b"]: expected a secret {value|file}, got a whole number`}},
		{"twice", "ratio: 1\nratio: 2\n", []string{`02:ratio: set twice (first on line 1)`}},
		{"twice in a map", "entries: [{headers: {X: {file: a}, X: {file: b}}}]\n", []string{`01:entries[0].headers.X: set twice (first on line 1)`}},
		{"every problem", "sever: 1\nratio: x\nentries: [{ulr: 1}]\n", []string{
			`01:sever: unknown key (did you mean "server"?)`, `02:ratio: expected a number, got a string`,
			`03:entries[0].ulr: unknown key (did you mean "url"?)`}},
		// A key that does not look like one (a token or password pasted where a key goes) is
		// named by its position and length, never shown, and nothing is suggested from it.
		{"token as a key", "entries:\n  - name: a\n    eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJzM2NyM3QifQ.s3cr3tXk: 1\n", []string{
			`03:entries[0]: an unknown key of 52 characters, not shown (it does not look like a key, and may be a secret); ` +
				`it is this mapping's key number 2; expected one of: timeout, name, url, headers`}},
		{"long key", "ratio: 1\nghp_s3cr3tAbcdefghijklmnopqrstuvwxyzabcd: 1\n", []string{
			`02:an unknown key of 40 characters, not shown (it does not look like a key, and may be a secret); ` +
				`it is this mapping's key number 2; expected one of: server, entries, ratio, on, ptr, tags`}},
		{"digits", "server: {s3cr3t12: 1}\n", []string{`01:server: an unknown key of 8 characters, not shown (it does not look like a key, ` +
			`and may be a secret); it is this mapping's key number 1; expected one of: listen, port, bind`}},
		{"capitals", "server: {AKIAS3CR3TQ: 1}\n", []string{`01:server: an unknown key of 11 characters, not shown (it does not look like a key, ` +
			`and may be a secret); it is this mapping's key number 1; expected one of: listen, port, bind`}},
		{"twice, not a key", "ratio: 1\nhunter2-s3cr3t.x: 1\nhunter2-s3cr3t.x: 2\n", []string{
			`02:an unknown key of 16 characters, not shown (it does not look like a key, and may be a secret); ` +
				`it is this mapping's key number 2; expected one of: server, entries, ratio, on, ptr, tags`,
			`03:an unknown key of 16 characters, not shown (it does not look like a key, and may be a secret); ` +
				`it is this mapping's key number 3; expected one of: server, entries, ratio, on, ptr, tags`}},
		{"alias and merge", "x: &d {timeout: 1s}\n", []string{`01:x: unknown key; expected one of: server, entries, ratio, on, ptr, tags`}},
		{"two documents", "ratio: 1\n---\nratio: 2\n", []string{`02:a second YAML document (after ---): the configuration is one document`}},
		{"a document after an empty one", "ratio: 1\n---\n# nothing\n---\nratio: 2\n", []string{`04:a second YAML document (after ---): the configuration is one document`}},
		{"a null document", "ratio: 1\n---\n~\n", []string{`02:a second YAML document (after ---): the configuration is one document`}},
		{"syntax", "server:\n  listen: a\n bad\n", []string{`02:not valid YAML: did not find expected key`}},
	}
	for _, tt := range tests {
		got := problems(t, tt.src)
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
		for _, g := range got {
			if strings.Contains(g, "s3cr3t") || strings.Contains(g, "S3CR3T") || strings.Contains(g, "eyJ") {
				t.Errorf("%s: a value is quoted: %s", tt.name, g)
			}
		}
	}
}

// TestDecodeTrailingSeparator: a "---" at the end (and "..."), with nothing but comments after
// it, as tools that join manifests write, is not a second document: the file decodes.
func TestDecodeTrailingSeparator(t *testing.T) {
	for _, src := range []string{"ratio: 1\n---\n", "ratio: 1\n---\n# end\n", "---\nratio: 1\n---\n---\n", "ratio: 1\n...\n---\n"} {
		var d doc
		if _, err := Decode([]byte(src), &d, opts); err != nil || d.Ratio != 1 {
			t.Errorf("%q: %v, ratio %v", src, err, d.Ratio)
		}
	}
}

// TestDecodeMergeAndLines: aliases and merge keys are read as yaml reads them, and Lines gives
// each key path's line.
func TestDecodeMergeAndLines(t *testing.T) {
	src := "ptr: &p {timeout: 2s}\nentries:\n  - <<: *p\n    name: a\n"
	var d doc
	decoded, err := Decode([]byte(src), &d, opts)
	if err != nil {
		t.Fatal(err)
	}
	lines := decoded.Lines
	if len(d.Entries) != 1 || d.Entries[0].Timeout != 2*time.Second || d.Entries[0].Name != "a" {
		t.Errorf("decoded %+v", d.Entries)
	}
	for path, line := range map[string]int{"ptr": 1, "ptr.timeout": 1, "entries": 2, "entries[0]": 3, "entries[0].name": 4} {
		if lines[path] != line {
			t.Errorf("line of %s = %d, want %d", path, lines[path], line)
		}
	}
	if _, err := Decode([]byte("entries:\n  - <<: *p\n"), &d, opts); err == nil {
		t.Error("an unknown alias decoded")
	}
}

// TestDecodeEveryMergeForm: every form of YAML's merge key yaml reads is read alike by the check:
// a list of mappings to merge, and a merge into a setting that is a map (headers), each merged
// value still checked, so a file yaml decodes is not refused, nor one it refuses passed.
func TestDecodeEveryMergeForm(t *testing.T) {
	src := "ptr: &p {timeout: 2s}\nx: &h {A: {value: a}}\nentries:\n" +
		"  - <<: [*p, {name: n, url: u}]\n    headers:\n      <<: [*h, {B: {file: b}}]\n      C: {value: c}\n"
	type withX struct {
		doc `yaml:",inline"`
		X   map[string]secret `yaml:"x"`
	}
	var dx withX
	if _, err := Decode([]byte(src), &dx, opts); err != nil {
		t.Fatalf("every merge form: %v", err)
	}
	e := dx.Entries
	if len(e) != 1 || e[0].Timeout != 2*time.Second || e[0].Name != "n" || e[0].URL != "u" ||
		!reflect.DeepEqual(e[0].Headers, map[string]secret{"A": {Value: "a"}, "B": {File: "b"}, "C": {Value: "c"}}) {
		t.Errorf("decoded %+v", e)
	}
	for name, tt := range map[string]struct{ src, want string }{
		"a merged header's typo": {"entries:\n  - headers:\n      <<: {A: {vlaue: a}}\n",
			`03:entries[0].headers.A.vlaue: unknown key (did you mean "value"?)`},
		"a merged list's typo": {"entries:\n  - <<: [{name: n}, {nmae: m}]\n",
			`02:entries[0].nmae: unknown key (did you mean "name"?)`},
		"a merge of a word": {"entries:\n  - <<: [{name: n}, word]\n",
			`02:entries[0]: expected a mapping (key: value), got a string`},
	} {
		if got := problems(t, tt.src); len(got) != 1 || got[0] != tt.want {
			t.Errorf("%s: got %q, want %q", name, got, tt.want)
		}
	}
}

// TestDecodeKeyThatIsNotAName: a list or mapping written where a key goes (YAML's "? [a, b]"
// or "{a: 1}: x") is named for what it is, not as a key of no characters.
func TestDecodeKeyThatIsNotAName(t *testing.T) {
	for name, tt := range map[string]struct{ src, want string }{
		"list key of a block": {"? [a, b]\n: 1\n",
			`01:a key that is a list, not a name: this mapping's key number 1`},
		"mapping key of a block": {"server: {listen: a, {port: 1}: 2}\n",
			`01:server: a key that is a mapping, not a name: this mapping's key number 2`},
		"list key of a map": {"entries:\n  - headers: {[A, B]: {value: a}}\n",
			`02:entries[0].headers: a key that is a list, not a name: this mapping's key number 1`},
	} {
		got := problems(t, tt.src)
		if len(got) != 1 || !strings.HasPrefix(got[0], tt.want) {
			t.Errorf("%s: got %q, want it to start %q", name, got, tt.want)
		}
	}
}

// TestNearest: typos are matched to the key they miss, case and transpositions included; words
// that are not near any key are not.
func TestNearest(t *testing.T) {
	known := []string{"url", "name", "timeout", "connectTimeout", "publicURL"}
	for in, want := range map[string]string{
		"ulr": "url", "nmae": "name", "timout": "timeout", "publicUrl": "publicURL", "connecttimeout": "connectTimeout",
		"x": "", "zzzzzzz": "", "headers": "",
	} {
		if got := Nearest(in, known); got != want {
			t.Errorf("Nearest(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestDecodeReadsWhatItCan: with problems, every value that can be read is still read, and
// Unread names the blocks a later check should not judge: the entry with a misspelt key, a
// value of the wrong shape; the whole file for a misspelt top-level key.
func TestDecodeReadsWhatItCan(t *testing.T) {
	var d doc
	decoded, err := Decode([]byte("ratio: 0.5\nentries:\n  - {name: a, url: u}\n  - {name: b, ulr: u}\nserver: {port: x}\n"), &d, opts)
	if err == nil || decoded == nil {
		t.Fatalf("Decode = %v, %v", decoded, err)
	}
	if d.Ratio != 0.5 || len(d.Entries) != 2 || d.Entries[0].URL != "u" || d.Entries[1].Name != "b" {
		t.Errorf("read %+v", d)
	}
	for path, want := range map[string]bool{"entries[1].url": true, "entries[1]": true, "entries[0].url": false,
		"server.port": true, "server.listen": false, "ratio": false} {
		if decoded.Covers(path) != want {
			t.Errorf("Covers(%s) = %v, want %v", path, !want, want)
		}
	}
	decoded, _ = Decode([]byte("sever: {}\n"), &d, opts)
	if !decoded.Covers("ratio") {
		t.Error("a misspelt top-level key leaves the rest judged")
	}
	if decoded, err := Decode([]byte("a: [\n"), &d, opts); err == nil || decoded != nil {
		t.Errorf("not YAML: %v, %v", decoded, err)
	}
}

// level decodes itself, as a configuration's enumerations do, and refuses what it does not know.
type level string

func (l *level) UnmarshalText(b []byte) error {
	if s := string(b); s != "lo" && s != "hi" {
		return fmt.Errorf("level %q", s)
	}
	*l = level(b)
	return nil
}

// TestDecodeGoesOnAfterSelfDecodingValue: a value that refuses to decode itself is reported
// with what was expected, and the settings after it are still read: yaml alone stops the whole
// file there, and every later setting would be judged missing (a refused confirm: made the
// gateway say there were no upstreams).
func TestDecodeGoesOnAfterSelfDecodingValue(t *testing.T) {
	type cfg struct {
		Rules []struct {
			Level level  `yaml:"level"`
			Name  string `yaml:"name"`
		} `yaml:"rules"`
		Tags []string `yaml:"tags"`
	}
	o := Options{Expect: map[reflect.Type]string{reflect.TypeFor[level](): "lo or hi"}}
	src := "rules:\n  - {level: s3cr3t, name: a}\n  - {level: hi, name: b}\n  - {level: [x], name: c}\ntags: [x]\n"
	var c cfg
	decoded, err := Decode([]byte(src), &c, o)
	var got []string
	for _, e := range configerr.List(err) {
		got = append(got, e.Error())
	}
	want := []string{"rules[0].level: expected lo or hi, got a string", "rules[2].level: expected lo or hi, got a list"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("problems %q, want %q", got, want)
	}
	if len(c.Rules) != 3 || c.Rules[0].Name != "a" || c.Rules[1].Level != "hi" || c.Rules[2].Name != "c" || len(c.Tags) != 1 {
		t.Errorf("read %+v", c)
	}
	if decoded == nil || decoded.Covers("tags") || decoded.Covers("rules[1].name") {
		t.Errorf("the settings after the refused values are left unjudged: %+v", decoded)
	}
}

// TestDecodeEmpty: a file with nothing written in it (no document, or documents of comments
// alone) is told apart from one that sets nothing by writing so ("~", "{}"): the gateway
// reports the first as an empty file rather than as every setting missing.
func TestDecodeEmpty(t *testing.T) {
	for src, empty := range map[string]bool{"": true, "\n\n": true, "# all commented out\n": true, "---\n": true,
		"---\n# c\n---\n": true, "~\n": false, "null\n": false, "{}\n": false, "ratio: 1\n": false, "server:\n": false} {
		var d doc
		decoded, err := Decode([]byte(src), &d, opts)
		if err != nil || decoded.Empty != empty {
			t.Errorf("%q: %+v, %v; want empty %v", src, decoded, err, empty)
		}
	}
}

// TestDecodeMapKeyNotShown: a key of a mapping read into a map, refused for its type, is named
// by its place and length when it does not look like a key, and by its path when it does.
func TestDecodeMapKeyNotShown(t *testing.T) {
	var d struct {
		Ports map[int]string `yaml:"ports"`
	}
	_, err := Decode([]byte("ports: {80: a, eyJhbGciOiJSUzI1NiJ9.s3cr3t: b, http: c}\n"), &d, Options{})
	got := configerr.List(err)
	if len(got) != 2 || got[0].Error() != "ports: expected keys that are a whole number; this mapping's key number 2 is not one "+
		"(27 characters, not shown: it does not look like a key, and may be a secret)" ||
		got[1].Error() != "ports.http: expected a key that is a whole number" {
		t.Errorf("got %q", got)
	}
}
