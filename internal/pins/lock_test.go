package pins

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/lock from the current output")

// lockFromLists builds a Lock from a JSON file shaped {backend: {instructions, tools, prompts,
// resourceTemplates}}, the lists a backend returns.
func lockFromLists(t *testing.T, path string) *Lock {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var in map[string]struct {
		Instructions      *string           `json:"instructions"`
		Tools             []json.RawMessage `json:"tools"`
		Prompts           []json.RawMessage `json:"prompts"`
		ResourceTemplates []json.RawMessage `json:"resourceTemplates"`
	}
	if err := json.Unmarshal(data, &in); err != nil {
		t.Fatal(err)
	}
	l := NewLock()
	for name, b := range in {
		l.Backend(name)
		if b.Instructions != nil {
			d, err := FromInstructions(*b.Instructions)
			if err != nil {
				t.Fatal(err)
			}
			if err := l.Add(name, d); err != nil {
				t.Fatal(err)
			}
		}
		for kind, items := range map[Kind][]json.RawMessage{KindTool: b.Tools, KindPrompt: b.Prompts, KindResourceTemplate: b.ResourceTemplates} {
			if err := l.AddItems(name, kind, items); err != nil {
				t.Fatal(err)
			}
		}
	}
	return l
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	mcptest.Golden(t, filepath.Join("testdata", "lock", name), got, *update, "-update")
}

func TestLockGolden(t *testing.T) {
	l := lockFromLists(t, filepath.Join("testdata", "lock", "pinned.json"))
	out := l.Marshal()
	golden(t, "pins.golden.yaml", out)

	// The loader accepts what the writer wrote, and writing it again gives the same bytes.
	back, err := ParseLock(out)
	if err != nil {
		t.Fatal(err)
	}
	if again := back.Marshal(); !bytes.Equal(again, out) {
		t.Errorf("not deterministic across a round trip:\n%s\n%s", out, again)
	}
	if d := Diff(l, back); len(d) != 0 {
		t.Errorf("round trip drifted: %+v", d)
	}
	// Building the lock again (map iteration in a different order) gives the same bytes.
	for range 5 {
		if again := lockFromLists(t, filepath.Join("testdata", "lock", "pinned.json")).Marshal(); !bytes.Equal(again, out) {
			t.Fatal("Marshal is not deterministic")
		}
	}
}

func TestDiffGolden(t *testing.T) {
	pinned := lockFromLists(t, filepath.Join("testdata", "lock", "pinned.json"))
	current := lockFromLists(t, filepath.Join("testdata", "lock", "current.json"))
	drift := Diff(pinned, current)
	var buf bytes.Buffer
	if err := WriteDiff(&buf, drift); err != nil {
		t.Fatal(err)
	}
	golden(t, "diff.golden.txt", buf.Bytes())

	want := map[string]Set{
		"files/instructions/":    classes(ClassTextChanged),
		"files/tool/read":        classes(ClassInputSchemaWidened, ClassTextChanged),
		"files/tool/delete":      classes(ClassAnnotationsChanged, ClassDestructiveHintCleared),
		"files/tool/stat":        classes(ClassInvisible, ClassTextChanged),
		"files/tool/exec":        classes(ClassNew),
		"files/tool/gone":        classes(ClassRemoved),
		"files/prompt/summarise": classes(ClassInputSchemaWidened, ClassInputSchemaNarrowed),
		"web/tool/searchv2":      classes(ClassInputSchemaNarrowed),
	}
	got := map[string]Set{}
	for _, d := range drift {
		got[d.Backend+"/"+string(d.Kind)+"/"+d.Key] = d.Classes
	}
	if len(got) != len(want) {
		t.Errorf("drift %v, want %v", got, want)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %v, want %v", k, got[k], w)
		}
	}
	var empty bytes.Buffer
	if err := WriteDiff(&empty, Diff(pinned, pinned)); err != nil || !strings.HasPrefix(empty.String(), "no drift") {
		t.Errorf("self diff: %q %v", empty.String(), err)
	}
}

func TestParseLockRefuses(t *testing.T) {
	good := lockFromLists(t, filepath.Join("testdata", "lock", "pinned.json")).Marshal()
	if _, err := ParseLock(good); err != nil {
		t.Fatal(err)
	}
	tool := `{"description":"Search","inputSchema":{"properties":{"q":{"enum":["a","b"],"type":"string"}},"type":"object"},"name":"searchv2"}`
	fp := Fingerprint([]byte(tool))
	entry := func(key, fp, canonical string) string {
		return "version: 1\nbackends:\n  web:\n    tools:\n      " + key + ":\n        fingerprint: " + fp + "\n        canonical: " + yamlQuote(canonical) + "\n"
	}
	if _, err := ParseLock([]byte(entry("searchv2", fp, tool))); err != nil {
		t.Fatalf("hand-written entry refused: %v", err)
	}
	cases := map[string]string{
		"unknown top-level key":   "version: 1\nbackends: {}\nextra: 1\n",
		"unknown backend key":     "version: 1\nbackends:\n  web:\n    tool: {}\n",
		"unknown entry key":       "version: 1\nbackends:\n  web:\n    tools:\n      a:\n        fingerprint: x\n        canonical: y\n        note: z\n",
		"wrong version":           "version: 2\nbackends: {}\n",
		"missing version":         "backends: {}\n",
		"fingerprint mismatch":    entry("searchv2", strings.Repeat("0", 64), tool),
		"fingerprint uppercase":   entry("searchv2", strings.ToUpper(fp), tool),
		"not canonical":           entry("searchv2", Fingerprint([]byte(strings.Replace(tool, ",", ", ", 1))), strings.Replace(tool, ",", ", ", 1)),
		"key differs from name":   entry("search", fp, tool),
		"uncovered member":        entry("searchv2", Fingerprint([]byte(`{"_meta":{},"name":"searchv2"}`)), `{"_meta":{},"name":"searchv2"}`),
		"empty canonical":         entry("searchv2", fp, ""),
		"duplicate backend":       "version: 1\nbackends:\n  web: {}\n  web: {}\n",
		"duplicate item":          "version: 1\nbackends:\n  web:\n    tools:\n      a: {}\n      a: {}\n",
		"two documents":           "version: 1\nbackends: {}\n---\nversion: 1\n",
		"empty":                   "",
		"instructions not string": "version: 1\nbackends:\n  web:\n    instructions:\n      fingerprint: " + Fingerprint([]byte(`{}`)) + "\n      canonical: \"{}\"\n",
	}
	for name, in := range cases {
		if _, err := ParseLock([]byte(in)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// Every problem is reported, not only the first.
	two := "version: 2\nbackends:\n  web:\n    tools:\n      a:\n        fingerprint: " + strings.Repeat("0", 64) + "\n        canonical: '{\"name\":\"a\"}'\n"
	_, err := ParseLock([]byte(two))
	if err == nil || !strings.Contains(err.Error(), "version 2") || !strings.Contains(err.Error(), "does not match") {
		t.Errorf("want both problems, got %v", err)
	}
}

func TestLockAddRefusesDuplicates(t *testing.T) {
	l := NewLock()
	err := l.AddItems("b", KindTool, []json.RawMessage{json.RawMessage(`{"name":"a"}`), json.RawMessage(`{"name":"a","description":"other"}`)})
	if err == nil {
		t.Error("a tool listed twice was pinned")
	}
	in, _ := FromInstructions("x")
	if err := l.Add("b", in); err != nil {
		t.Fatal(err)
	}
	if err := l.Add("b", in); err == nil {
		t.Error("instructions pinned twice")
	}
}

func TestYAMLQuoteRoundTrip(t *testing.T) {
	for _, s := range []string{"plain", `"quoted" \ back`, "tab\there", "zero\u200bwidth", "tag\U000E0041", "nbsp\u00a0", "emoji 😀 ❤️", "ctl\x01\x7f\u0085", "line\u2028sep", "\ufeffbom", "non\uffff\U0010FFFF\ufdd0"} {
		l := NewLock()
		d, err := FromInstructions(s)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Add("b\u200b"+s, d); err != nil {
			t.Fatal(err)
		}
		out := l.Marshal()
		for _, r := range string(out) {
			if _, bad := classifyRune(r, -1, -1); bad && r != 0xFE0F {
				t.Errorf("%q: invisible U+%04X written raw", s, r)
			}
		}
		back, err := ParseLock(out)
		if err != nil {
			t.Fatalf("%q: %v\n%s", s, err, out)
		}
		if got := back.Backends["b\u200b"+s].Instructions; got == nil || got.Value != s {
			t.Errorf("%q: read back %+v", s, got)
		}
	}
}

// FuzzParseLock: the loader never panics on any input, and whatever it accepts is written back
// in a form it accepts again, byte-for-byte stable.
func FuzzParseLock(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join("testdata", "lock", "pins.golden.yaml")); err == nil {
		f.Add(b)
	}
	f.Add([]byte("version: 1\nbackends: {}\n"))
	f.Add([]byte("version: 1\nbackends:\n  'a':\n    instructions:\n      fingerprint: " + Fingerprint([]byte(`"x"`)) + "\n      canonical: '\"x\"'\n    tools: {}\n"))
	f.Add([]byte("version: 1\nbackends: &a\n  b: *a\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		l, err := ParseLock(in)
		if err != nil {
			return
		}
		out := l.Marshal()
		back, err := ParseLock(out)
		if err != nil {
			t.Fatalf("written lock refused: %v\n%s", err, out)
		}
		if again := back.Marshal(); !bytes.Equal(again, out) {
			t.Fatalf("not a fixed point:\n%s\n%s", out, again)
		}
	})
}

// TestParseLockSaysWhere: a lock file that is not what pins write writes is refused with each
// problem's line, key path and what was expected, in the terms of the file, not Go's.
func TestParseLockSaysWhere(t *testing.T) {
	for in, want := range map[string]string{
		"this is not a lock file\n":                       "line 1: expected a mapping (key: value), got a string",
		"version: 1\nbackends:\n  web:\n    tool: {}\n":   `line 4: backends.web.tool: unknown key (did you mean "tools"?)`,
		"version: one\nbackends: {}\n":                    "line 1: version: expected a whole number, got a string",
		"version: 1\nbackends:\n  web: {tools: [a, b]}\n": "line 3: backends.web.tools: expected a mapping of keys to values, got a list",
	} {
		_, err := ParseLock([]byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
			continue
		}
		if strings.Contains(err.Error(), "unmarshal") || strings.Contains(err.Error(), "!!") {
			t.Errorf("%q: Go's words in %v", in, err)
		}
	}
}
