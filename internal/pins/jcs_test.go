package pins

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"
)

// TestRFC8785Examples canonicalises the RFC's worked examples (§3.2.2 values, §3.2.3 sorting)
// and compares byte for byte with the output the RFC prints.
//
// One departure (see Canonicalize): the values example writes 333333333.33333329, a value no
// double's RFC 8785 form spells; the RFC prints its nearest double, 333333333.3333333, a
// different value to a client that reads decimals, and the canonical form here keeps the value
// written. With that number written as its double, the example gives the RFC's bytes.
func TestRFC8785Examples(t *testing.T) {
	departures := map[string][2]string{"values": {"333333333.33333329", "333333333.3333333"}}
	for _, name := range []string{"values", "sorting"} {
		in, err := os.ReadFile(filepath.Join("testdata", "rfc8785", name+".input.json"))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join("testdata", "rfc8785", name+".output.json"))
		if err != nil {
			t.Fatal(err)
		}
		if d, ok := departures[name]; ok {
			exact := bytes.Replace(want, []byte(d[1]), []byte(d[0]), 1)
			if got, err := Canonicalize(in); err != nil || !bytes.Equal(got, exact) {
				t.Errorf("%s as written:\n got %s (%v)\nwant %s", name, got, err, exact)
			}
			in = bytes.Replace(in, []byte(d[0]), []byte(d[1]), 1)
		}
		got, err := Canonicalize(in)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
	}
}

// TestRFC8785Numbers checks every entry of the RFC's Appendix B number table, both through
// FormatNumber and through a parse of the number's own output (which must round-trip).
func TestRFC8785Numbers(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "rfc8785", "numbers.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		bitsHex, want, ok := strings.Cut(line, " ")
		if !ok {
			t.Fatalf("bad line %q", line)
		}
		raw, err := hex.DecodeString(bitsHex)
		if err != nil {
			t.Fatal(err)
		}
		v := math.Float64frombits(binary.BigEndian.Uint64(raw))
		got, err := FormatNumber(v)
		n++
		if want == "invalid" {
			if err == nil {
				t.Errorf("%s: got %q, want refusal", bitsHex, got)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("%s: got %q (%v), want %q", bitsHex, got, err, want)
			continue
		}
		back, err := Canonicalize([]byte(got))
		if err != nil || string(back) != want {
			t.Errorf("%s: re-canonicalised to %q (%v)", bitsHex, back, err)
		}
	}
	if n < 25 {
		t.Fatalf("only %d vectors read", n)
	}
}

// TestOneFormManyInputs: member order, whitespace, number spellings and escape spellings of the
// same value all canonicalise to one byte string, hence one fingerprint.
func TestOneFormManyInputs(t *testing.T) {
	groups := [][]string{
		{`{"a":1,"b":[true,null]}`, ` { "b" : [ true , null ] , "a" : 1.0 } `, `{"b":[true,null],"a":1E0}`, `{"a":10e-1,"b":[true,null]}`, `{"a":0.1e1,"b":[true,null]}`},
		{`"é\n/"`, `"\u00e9\u000a\/"`, `"\u00E9\n/"`, "\"\xc3\xa9\\n\\u002f\""},
		{`1e21`, `1000000000000000000000`, `1E+21`, `10e20`},
		{`0`, `-0`, `0.0`, `-0e5`, `0e-7`},
		{`0.000001`, `1e-6`, `1E-6`, `0.0000010`},
		{`1e-7`, `0.0000001`, `1.0E-7`},
		{`"😀"`, `"\ud83d\ude00"`, `"\uD83D\uDE00"`},
		{`{"\ud83d\ude00":1,"\ufb33":2}`, "{\"\uFB33\":2,\"\U0001F600\":1}"},
		{`[{"z":{"y":1,"x":2}}]`, `[{"z":{"x":2,"y":1}}]`},
	}
	for _, g := range groups {
		first, err := Canonicalize([]byte(g[0]))
		if err != nil {
			t.Fatalf("%s: %v", g[0], err)
		}
		for _, in := range g[1:] {
			got, err := Canonicalize([]byte(in))
			if err != nil || !bytes.Equal(got, first) {
				t.Errorf("%s: got %s (%v), want %s", in, got, err, first)
			}
		}
	}
}

func TestCanonicalizeRefuses(t *testing.T) {
	cases := map[string]string{
		"duplicate key":           `{"a":1,"a":1}`,
		"duplicate by escape":     `{"a":1,"\u0061":2}`,
		"nested duplicate":        `[{"x":{"k":1,"k":2}}]`,
		"invalid UTF-8":           "\"\xff\"",
		"truncated UTF-8":         "\"\xe2\x82\"",
		"overlong UTF-8":          "\"\xc0\xaf\"",
		"encoded surrogate UTF-8": "\"\xed\xa0\x80\"",
		"lone high surrogate":     `"\ud800"`,
		"high then text":          `"\ud800x"`,
		"high then high":          `"\ud800\ud800"`,
		"lone low surrogate":      `"\udc00"`,
		"overflow":                `1e309`,
		"negative overflow":       `-1.8e308`,
		"NaN literal":             `NaN`,
		"Infinity literal":        `Infinity`,
		"leading zero":            `01`,
		"plus sign":               `+1`,
		"bare dot":                `1.`,
		"control char":            "\"a\x01\"",
		"bad escape":              `"\x"`,
		"trailing":                `{} {}`,
		"trailing comma":          `[1,]`,
		"empty":                   ``,
		"unterminated":            `{"a":`,
		"deep":                    strings.Repeat("[", maxDepth+2) + strings.Repeat("]", maxDepth+2),
	}
	for name, in := range cases {
		if got, err := Canonicalize([]byte(in)); err == nil {
			t.Errorf("%s: accepted as %s", name, got)
		} else if !errors.Is(err, ErrNotCanonicalizable) {
			t.Errorf("%s: error %v does not wrap ErrNotCanonicalizable", name, err)
		}
	}
}

func TestEncodeEscapes(t *testing.T) {
	got, err := Encode("\x00\x1f\x7f\b\t\n\f\r\"\\/\u2028")
	if err != nil {
		t.Fatal(err)
	}
	want := `"\u0000\u001f` + "\x7f" + `\b\t\n\f\r\"\\/` + "\u2028" + `"`
	if string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if _, err := Encode(map[string]any{"a": math.NaN()}); err == nil {
		t.Error("NaN encoded")
	}
	if _, err := Encode("\xff"); err == nil {
		t.Error("invalid UTF-8 encoded")
	}
	if _, err := Encode(int(1)); err == nil {
		t.Error("non-model type encoded")
	}
}

// FuzzCanonicalize: never panics; whatever is accepted canonicalises to a fixed point, and the
// canonical form is itself valid input.
func FuzzCanonicalize(f *testing.F) {
	for _, s := range []string{`{"a":1,"b":[true,null,"x"]}`, `[1e21,1e-7,0.1,-0]`, `"\ud83d\ude00\u0000"`, `{"\ufb33":1,"😀":2}`, `{"a":{"a":{"a":[]}}}`, `123456789012345678901234567890`,
		`[9007199254740993,-1e-400,0.10000000000000001,9223372036854775808,1.7976931348623158e308]`} {
		f.Add([]byte(s))
	}
	for _, name := range []string{"values", "sorting"} {
		if b, err := os.ReadFile(filepath.Join("testdata", "rfc8785", name+".input.json")); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		c1, err := Canonicalize(in)
		if err != nil {
			return
		}
		c2, err := Canonicalize(c1)
		if err != nil {
			t.Fatalf("canonical form %q refused: %v", c1, err)
		}
		if !bytes.Equal(c1, c2) {
			t.Fatalf("not idempotent:\n%q\n%q", c1, c2)
		}
	})
}

// TestLessUTF16 checks the allocation-free comparison against the definition: comparing the
// UTF-16 encodings.
func TestLessUTF16(t *testing.T) {
	ref := func(a, b string) bool {
		ua, ub := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
		for i := 0; i < len(ua) && i < len(ub); i++ {
			if ua[i] != ub[i] {
				return ua[i] < ub[i]
			}
		}
		return len(ua) < len(ub)
	}
	words := []string{"", "a", "ab", "b", "\u0080", "\u00f6", "\u20ac", "\ufb33", "\uffff", "\U0001F600", "\U0001F601", "\U00010000",
		"a\U0001F600", "a\ufb33", "\ue000", "\U0010FFFF", "\r", "1", "a\x00"}
	for _, a := range words {
		for _, b := range words {
			if got, want := lessUTF16(a, b), ref(a, b); got != want {
				t.Errorf("lessUTF16(%q, %q) = %v, want %v", a, b, got, want)
			}
		}
	}
}
