package mrtr

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestDigestCanonical(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		same bool
	}{
		{"key order", `{"a":1,"b":2}`, `{"b":2,"a":1}`, true},
		{"whitespace", `{"a":[1,2]}`, " {\n\t\"a\" : [ 1 , 2 ] } ", true},
		{"nested key order", `{"x":{"a":true,"b":null}}`, `{"x":{"b":null,"a":true}}`, true},
		{"string escapes", `{"s":"A\/é"}`, `{"s":"\u0041/\u00e9"}`, true},
		{"absent is null", ``, `null`, true},
		{"blank is null", `  `, `null`, true},
		{"value change", `{"a":1}`, `{"a":2}`, false},
		{"string change", `{"a":"x"}`, `{"a":"y"}`, false},
		{"type change", `{"a":1}`, `{"a":"1"}`, false},
		{"number spelling", `{"a":1}`, `{"a":1.0}`, false},
		{"array order", `[1,2]`, `[2,1]`, false},
		{"extra key", `{"a":1}`, `{"a":1,"b":null}`, false},
		{"empty object vs absent", `{}`, ``, false},
		{"key vs value boundary", `{"ab":"c"}`, `{"a":"bc"}`, false},
		{"bool", `true`, `false`, false},
		{"nested depth", `[[1]]`, `[1]`, false},
		{"control char", `"a\nb"`, `"a\\nb"`, false},
		{"surrogate pair", `"\ud83d\ude00"`, `"😀"`, true},
		{"unicode case", `"\u00E9"`, `"\u00e9"`, true},
		{"empty containers", `{"a":[],"b":{}}`, `{ "b" : { } , "a" : [ ] }`, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			da, err := Digest([]byte(tc.a))
			if err != nil {
				t.Fatalf("Digest(%q): %v", tc.a, err)
			}
			db, err := Digest([]byte(tc.b))
			if err != nil {
				t.Fatalf("Digest(%q): %v", tc.b, err)
			}
			if (da == db) != tc.same {
				t.Fatalf("Digest(%q) == Digest(%q) is %v, want %v", tc.a, tc.b, da == db, tc.same)
			}
		})
	}
}

func TestDigestRejects(t *testing.T) {
	tests := []struct{ name, in string }{
		{"duplicate key", `{"a":1,"a":2}`},
		{"nested duplicate", `{"x":{"a":1,"a":1}}`},
		{"escaped duplicate", `{"a":1,"\u0061":2}`},
		{"invalid utf8", "{\"a\":\"\xff\"}"},
		{"trailing data", `{"a":1} {}`},
		{"syntax", `{"a":}`},
		{"unterminated", `{"a":1`},
		{"lone high surrogate", `"\ud800"`},
		{"lone low surrogate", `"\udc00x"`},
		{"reversed pair", `"\udc00\ud800"`},
		{"leading zero", `01`},
		{"bare minus", `-`},
		{"empty fraction", `1.`},
		{"empty exponent", `1e+`},
		{"raw control", "\"a\x01\""},
		{"bad escape", `"\x"`},
		{"short unicode", `"\u12"`},
		{"trailing comma", `[1,]`},
		{"missing colon", `{"a" 1}`},
		{"unquoted key", `{a:1}`},
		{"bad literal", `nul`},
		{"too deep", strings.Repeat("[", maxArgsDepth+2) + strings.Repeat("]", maxArgsDepth+2)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Digest([]byte(tc.in)); !errors.Is(err, ErrInvalidArguments) {
				t.Fatalf("got %v, want ErrInvalidArguments", err)
			}
		})
	}
	ok := strings.Repeat("[", maxArgsDepth) + strings.Repeat("]", maxArgsDepth)
	if _, err := Digest([]byte(ok)); err != nil {
		t.Fatalf("depth %d rejected: %v", maxArgsDepth, err)
	}
}

func TestCanonicalForm(t *testing.T) {
	got, err := canonical([]byte(` {"b": [1, {"d":"\u0001\"", "c":false}], "a": "\u00e9<>&"} `))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"a":"é<>&","b":[1,{"c":false,"d":"\u0001\""}]}`
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

// TestDigestConfirmable: the digest of arguments a person confirms is Digest's, and an integer
// literal beyond ±2^53 anywhere in them is refused, since doubles (JavaScript, Go's
// interface{}) read it as a neighbour; the same magnitude written with a fraction or an
// exponent is read as the same double by every parser and is kept.
func TestDigestConfirmable(t *testing.T) {
	for _, args := range []string{``, `null`, `{}`, `{"n":9007199254740992}`, `{"n":-9007199254740992}`, `{"n":0}`,
		`{"n":12345678901234568.0}`, `{"n":1.2345678901234568e16}`, `{"a":[1,2,{"b":-3}],"s":"12345678901234567"}`,
		`{"n":0.1}`, `{"n":1.0}`, `{"n":-2.5e-3}`, `{"n":1E2}`, `{"n":-0.0}`, `{"n":0e-999999999999}`, `{"n":5e-324}`,
		`{"n":1.7976931348623157e308}`, `{"n":100.000}`} {
		want, err := Digest(json.RawMessage(args))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := DigestConfirmable(json.RawMessage(args)); err != nil || got != want {
			t.Errorf("DigestConfirmable(%s) = %x, %v; want Digest's %x", args, got, err, want)
		}
	}
	for _, args := range []string{`{"n":9007199254740993}`, `{"n":-9007199254740993}`, `{"n":12345678901234567}`,
		`{"a":[{"b":[100000000000000000000]}]}`, `[18446744073709551616]`,
		// Fractions and exponents a double cannot say: decimal decoders read the literal,
		// decoders into doubles its neighbour (or nothing).
		`{"n":12345678901234567.0}`, `{"n":1.2345678901234567e16}`, `{"n":0.10000000000000001}`,
		`{"n":1000000000000000.01}`, `{"a":[{"n":-1e400}]}`, `{"n":1e-400}`, `{"n":2.47e-324}`} {
		if _, err := DigestConfirmable(json.RawMessage(args)); !errors.Is(err, ErrInvalidArguments) {
			t.Errorf("DigestConfirmable(%s) = %v, want ErrInvalidArguments", args, err)
		}
		if _, err := Digest(json.RawMessage(args)); err != nil {
			t.Errorf("Digest(%s) = %v, want it digested", args, err)
		}
	}
}
