package pins

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// apart are pairs of numbers that differ in value although they round to one double: a client
// with an exact parser (Python's json for integers, Go's json.Number, big-number libraries)
// reads them apart, so their canonical forms, and the fingerprints of definitions holding them,
// must differ.
var apart = [][2]string{
	{"9007199254740993", "9007199254740992"},
	{"-9007199254740993", "-9007199254740992"},
	{"9007199254740995", "9007199254740996"},
	{"9223372036854775807", "9223372036854775808"},
	{"9223372036854775808", "9223372036854776000"},
	{"-9223372036854775809", "-9223372036854775808"},
	{"18446744073709551615", "18446744073709551616"},
	{"123456789012345678901234567890", "123456789012345680000000000000"},
	{"0.10000000000000001", "0.1"},
	{"0.1000000000000000055511151231257827", "0.1"},
	{"1.00000000000000000001", "1"},
	{"3.141592653589793238462643383279", "3.141592653589793"},
	{"33.33333333333333333", "33.333333333333336"},
	{"1e-400", "0"},
	{"1e-400", "2e-400"},
	{"-1e-400", "1e-400"},
	{"-1e-400", "0"},
	{"2.4703282292062327e-324", "0"},
	{"4.9406564584124654e-324", "5e-324"},
	{"1.7976931348623158e308", "1.7976931348623157e308"},
	{"1e23", "9.999999999999999e22"},
	{"100000000000000000000000.5", "1e23"},
}

// alike are groups of spellings of one value: they share one canonical form.
var alike = [][]string{
	{"9007199254740993", "9007199254740993.0", "9.007199254740993e15", "9007199254740993e0", "90071992547409930e-1", "0.9007199254740993E16", "9.007199254740993E+15"},
	{"-9007199254740993", "-9.007199254740993e15", "-9007199254740993.000"},
	{"1e-400", "10e-401", "0.1e-399", "1.0e-400", "0.00001e-395"},
	{"0.10000000000000001", "1.0000000000000001e-1", "10000000000000001e-17"},
	{"0", "-0", "0.0", "-0.0", "0e9", "-0e-9", "0e-99999999", "0e99999999999999999999"},
	{"1", "1.0", "1e0", "10e-1", "0.1e1", "1.00000000000000000000"},
	{"100", "1e2", "1E+2", "100.0"},
	{"9223372036854775808", "9.223372036854775808e18"},
}

// exactForms are numbers no double spells, with their canonical form: their exact digits laid
// out as RFC 8785 lays out a double's.
var exactForms = map[string]string{
	"9007199254740993":                  "9007199254740993",
	"9.007199254740993e15":              "9007199254740993",
	"1e-400":                            "1e-400",
	"-1.50e-400":                        "-1.5e-400",
	"123456789012345678901234567":       "1.23456789012345678901234567e+26",
	"0.0000001000000000000000001":       "1.000000000000000001e-7",
	"0.000001000000000000000001":        "0.000001000000000000000001",
	"0.10000000000000001":               "0.10000000000000001",
	"100000000000000000000000.5":        "1.000000000000000000000005e+23",
	"9223372036854775808":               "9223372036854775808",
	"1.7976931348623158e308":            "1.7976931348623158e+308",
	"99999999999999999999.000000000001": "99999999999999999999.000000000001",
}

func TestNumbersTellApart(t *testing.T) {
	for _, p := range apart {
		a, err1 := Canonicalize([]byte(p[0]))
		b, err2 := Canonicalize([]byte(p[1]))
		if err1 != nil || err2 != nil || bytes.Equal(a, b) {
			t.Errorf("%s and %s canonicalise to %s (%v) and %s (%v), want two forms", p[0], p[1], a, err1, b, err2)
		}
		// In every place a schema holds a number a client acts on.
		for _, at := range []string{`"maximum":%s`, `"minimum":%s`, `"const":%s`, `"enum":[1,%s]`, `"default":%s`, `"multipleOf":%s`, `"maxContains":%s`} {
			tool := func(n string) *Definition {
				return numTool(t, `{"name":"t","inputSchema":{"type":"object","properties":{"n":{`+fmt.Sprintf(at, n)+`}}}}`)
			}
			da, db := tool(p[0]), tool(p[1])
			if da.Fingerprint == db.Fingerprint {
				t.Errorf("%s with %s and with %s: one fingerprint", at, p[0], p[1])
			}
			if s := Classify(da, db); s.Empty() {
				t.Errorf("%s with %s, then %s: no class", at, p[0], p[1])
			}
		}
	}
}

func TestNumbersSpelledAlike(t *testing.T) {
	for _, g := range alike {
		first, err := Canonicalize([]byte(g[0]))
		if err != nil {
			t.Fatalf("%s: %v", g[0], err)
		}
		for _, in := range g[1:] {
			if got, err := Canonicalize([]byte(in)); err != nil || !bytes.Equal(got, first) {
				t.Errorf("%s: %s (%v), want %s as for %s", in, got, err, first, g[0])
			}
		}
	}
}

// TestNumberForms: a number is a float64 exactly when the RFC 8785 form of its double spells
// its value; otherwise a Number in canonical form, which reads back as itself, is never the
// RFC 8785 form of any double, and is what encoding/json writes.
func TestNumberForms(t *testing.T) {
	for in, want := range exactForms {
		v, err := Parse([]byte(in))
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if n, ok := v.(Number); !ok || string(n) != want {
			t.Errorf("Parse(%s) = %#v, want Number(%q)", in, v, want)
			continue
		}
		back, err := Parse([]byte(want))
		if err != nil || back != v {
			t.Errorf("Parse(%s) = %#v (%v), want the same Number", want, back, err)
		}
		f, _ := strconv.ParseFloat(want, 64)
		if s, _ := FormatNumber(f); s == want {
			t.Errorf("%s is also the RFC 8785 form of a double", want)
		}
		if j, err := json.Marshal(map[string]any{"n": v}); err != nil || string(j) != `{"n":`+want+`}` {
			t.Errorf("json.Marshal: %s (%v)", j, err)
		}
		// The value it holds is exactly the value written.
		r1, _ := new(big.Rat).SetString(in)
		r2, _ := new(big.Rat).SetString(want)
		if r1 == nil || r2 == nil || r1.Cmp(r2) != 0 {
			t.Errorf("%s: canonical form %s is another value", in, want)
		}
	}
	for _, in := range []string{"1", "0.1", "1e21", "1e-7", "9007199254740992", "5e-324", "-2.5", "1.7976931348623157e308", "1e23", "9223372036854776000"} {
		if v, err := Parse([]byte(in)); err != nil {
			t.Errorf("%s: %v", in, err)
		} else if _, ok := v.(float64); !ok {
			t.Errorf("Parse(%s) = %#v, want a float64: its RFC 8785 form spells its value", in, v)
		}
	}
	for _, n := range []Number{"1", "1.0", "9007199254740993.0", "9.007199254740993e15", "x", ""} {
		if got, err := Encode(n); err == nil {
			t.Errorf("Encode(Number(%q)) = %s, want a refusal: not the canonical form of a Number", string(n), got)
		}
	}
	for _, in := range []string{"1e400", "-1e400", "1e99999999999999999999", "1e-99999999999999999999", "1e-2000000"} {
		if got, err := Canonicalize([]byte(in)); err == nil {
			t.Errorf("%s: accepted as %s", in, got)
		}
	}
}

// TestNumberDriftClassified: the schema comparisons read numbers by exact value, as the
// fingerprint does: a bound moved within one double's rounding is looser or tighter, a
// multipleOf is a multiple in decimals.
func TestNumberDriftClassified(t *testing.T) {
	for _, c := range []struct {
		name, old, cur string
		want           Class
	}{
		{"maximum raised within a double", `{"type":"integer","maximum":9007199254740992}`, `{"type":"integer","maximum":9007199254740993}`, ClassInputSchemaWidened},
		{"maximum lowered within a double", `{"type":"integer","maximum":9007199254740993}`, `{"type":"integer","maximum":9007199254740992}`, ClassInputSchemaNarrowed},
		{"minimum lowered below zero by 1e-400", `{"type":"number","minimum":0}`, `{"type":"number","minimum":-1e-400}`, ClassInputSchemaWidened},
		{"minimum raised above zero by 1e-400", `{"type":"number","minimum":0}`, `{"type":"number","minimum":1e-400}`, ClassInputSchemaNarrowed},
		{"exclusiveMaximum raised past 0.1", `{"type":"number","exclusiveMaximum":0.1}`, `{"type":"number","exclusiveMaximum":0.10000000000000001}`, ClassInputSchemaWidened},
		{"int64 bound: 2^63 to 2^63-1", `{"type":"integer","maximum":9223372036854775808}`, `{"type":"integer","maximum":9223372036854775807}`, ClassInputSchemaNarrowed},
		{"const moved within a double", `{"const":9007199254740992}`, `{"const":9007199254740993}`, ClassInputSchemaWidened},
		{"enum value moved within a double", `{"enum":[1,9007199254740992]}`, `{"enum":[1,9007199254740993]}`, ClassInputSchemaWidened},
		{"maxContains raised within a double", `{"type":"array","contains":{"const":1},"maxContains":9007199254740992}`, `{"type":"array","contains":{"const":1},"maxContains":9007199254740993}`, ClassInputSchemaWidened},
		{"minContains raised within a double", `{"type":"array","contains":{"const":1},"minContains":9007199254740992}`, `{"type":"array","contains":{"const":1},"minContains":9007199254740993}`, ClassInputSchemaNarrowed},
		{"multipleOf 0.1 to 0.3, a multiple in decimals", `{"type":"number","multipleOf":0.1}`, `{"type":"number","multipleOf":0.3}`, ClassInputSchemaNarrowed},
		{"multipleOf 0.1 to 0.30000000000000004, not a multiple", `{"type":"number","multipleOf":0.1}`, `{"type":"number","multipleOf":0.30000000000000004}`, ClassInputSchemaWidened},
		{"multipleOf to a finer-than-double multiple", `{"type":"integer","multipleOf":3}`, `{"type":"integer","multipleOf":9007199254740993}`, ClassInputSchemaNarrowed},
		{"multipleOf to 2^53+1 from 2^53", `{"type":"integer","multipleOf":9007199254740992}`, `{"type":"integer","multipleOf":9007199254740993}`, ClassInputSchemaWidened},
		{"default moved within a double (an annotation)", `{"type":"integer","default":9007199254740992}`, `{"type":"integer","default":9007199254740993}`, ClassTextChanged},
	} {
		got := Classify(schemaTool(t, c.old), schemaTool(t, c.cur))
		if !got.Has(c.want) || (c.want == ClassInputSchemaNarrowed && got.Has(ClassInputSchemaWidened)) {
			t.Errorf("%s: %v, want %s", c.name, got, c.want)
		}
	}
}

// TestLockWrittenBeforeExactNumbers: a lock file written before numbers were told apart
// (testdata/lock/numbers.v1.yaml, from numbers.json) still loads, and every item whose numbers
// are spelled by their RFC 8785 form keeps its fingerprint, whatever spelling the backend uses
// (1.0, 1e0, 1E+300, 0.1e1, -0). The item that writes 2^63 out in full (9223372036854775808,
// which a double holds but whose RFC 8785 form, 9223372036854776000, says another value to an
// exact reader) drifts, and only it.
func TestLockWrittenBeforeExactNumbers(t *testing.T) {
	old, err := os.ReadFile(filepath.Join("testdata", "lock", "numbers.v1.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	pinned, err := ParseLock(old)
	if err != nil {
		t.Fatalf("the lock file written before the change no longer loads: %v", err)
	}
	current := lockFromLists(t, filepath.Join("testdata", "lock", "numbers.json"))
	drift := Diff(pinned, current)
	if len(drift) != 1 || drift[0].Key != "wide" || !drift[0].Classes.Has(ClassInputSchemaNarrowed) || drift[0].Classes.Has(ClassInputSchemaWidened) {
		t.Fatalf("drift %+v, want the item \"wide\" only, narrowed", drift)
	}
	// A lock written now, with a Number in its canonical text, reads back as itself.
	out := current.Marshal()
	back, err := ParseLock(out)
	if err != nil || !bytes.Equal(back.Marshal(), out) || len(Diff(current, back)) != 0 {
		t.Fatalf("a lock holding exact numbers does not round-trip (%v):\n%s", err, out)
	}
	if !bytes.Contains(out, []byte(`"maximum":9223372036854775808`)) {
		t.Errorf("the lock does not hold 2^63 as written:\n%s", out)
	}
	for _, key := range []string{"ints", "fractions"} {
		p, c := pinned.Backends["nums"].Get(KindTool, key), current.Backends["nums"].Get(KindTool, key)
		if p == nil || c == nil || p.Fingerprint != c.Fingerprint || !bytes.Equal(p.Canonical, c.Canonical) {
			t.Errorf("%s: pinned %v, now %v", key, p, c)
		}
	}
}

func numTool(t *testing.T, s string) *Definition {
	t.Helper()
	d, err := FromJSON(KindTool, json.RawMessage(s))
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return d
}
