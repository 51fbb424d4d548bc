package guardrails

import (
	"bytes"
	"encoding/json"
	"math"
	"math/big"
	"strconv"
	"testing"
	"unique"
)

// schemaNumberBounds and schemaNumberArgs make the family of a number against a numeric
// keyword: integers about 2^53 and beyond, decimals finer than a double, beyond the doubles,
// negative zero, an integer spelt with a fraction or an exponent.
var (
	schemaNumberBounds = []string{"9007199254740992", "9007199254740991.5", "9007199254740993", "0", "1", "3",
		"0.1", "1e20", "1e-300", "100000000000000000001", "0.30000000000000004"}
	schemaNumberArgs = []string{"9007199254740991", "9007199254740992", "9007199254740993", "9007199254740994",
		"9.007199254740993e15", "9007199254740992.5", "1e20", "100000000000000000001", "99999999999999999999",
		"1e400", "-1e400", "-0", "-0.0", "0", "1", "1.0", "1e0", "3", "0.3", "0.2", "0.30000000000000004",
		"0.1000000000000000055511151231257827", "2e-300", "1e-300", "3e-300", "1152921504606846976", "6e20"}
)

// TestSchemaNumbersAsBackendsReadThem: whatever the schema guardrail lets through breaks no
// numeric keyword (minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf, enum,
// const) as either kind of backend reads the number: one that reads literals exactly (Go's
// encoding/json into json.Number and then big.Rat or big.Int, Python's int and Decimal), and
// one that reads doubles (JSON.parse, and so the TypeScript SDK's zod; Go's float64), each
// reading the schema's numbers as it reads the arguments' and judging them exactly. The validator reads doubles and
// divides them for multipleOf: 1e20 passed "multipleOf": 3, 9007199254740992 passed a
// "maximum" of 9007199254740991.5 and an "enum" of [9007199254740993] it rounds to.
func TestSchemaNumbersAsBackendsReadThem(t *testing.T) {
	e := testEngine(t, everything("log"))
	accepted := 0
	for _, kw := range []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "enum", "const"} {
		for _, b := range schemaNumberBounds {
			val := b
			if kw == "enum" {
				val = "[" + b + `,"x"]`
			}
			if kw == "multipleOf" && b == "0" {
				continue // not a schema
			}
			schema := `{"type":"object","properties":{"n":{"` + kw + `":` + val + `}}}`
			s := e.ContentSchema(unique.Make(schema))
			for _, a := range schemaNumberArgs {
				v, err := s.Validate([]byte(`{"n":` + a + `}`))
				if err != nil || v != nil {
					continue
				}
				accepted++
				for _, r := range []struct {
					name string
					read func(string) *big.Rat
				}{{"exactly", readExact}, {"as a double", readDouble}} {
					read := r.read
					if kw == "multipleOf" && r.name == "as a double" {
						read = readShortest
					}
					x, bound := read(a), read(b)
					if x == nil || !keywordHolds(kw, x, bound) {
						t.Errorf(`{%q:%s} let {"n":%s} through, which a backend reading numbers %s finds breaking it`, kw, val, a, r.name)
					}
				}
			}
		}
	}
	if accepted < 200 {
		t.Errorf("only %d of the family accepted: the check refuses what every backend reads alike", accepted)
	}
}

// Some of the family, with what the guardrail says of it.
func TestSchemaNumbersVerdicts(t *testing.T) {
	e := testEngine(t, everything("log"))
	for _, c := range []struct {
		prop, arg string
		ok        bool
	}{
		{`{"type":"integer","maximum":9007199254740992}`, "9007199254740992", true},
		{`{"type":"integer","maximum":9007199254740992}`, "9007199254740993", false},
		{`{"type":"integer","multipleOf":3}`, "1e20", false},
		{`{"type":"integer","multipleOf":3}`, "6e20", true},
		{`{"multipleOf":0.1}`, "0.2", true},
		{`{"multipleOf":1e-300}`, "3e-300", true},
		{`{"exclusiveMinimum":0}`, "-0", false},
		{`{"const":0}`, "-0", true},
		{`{"const":0}`, "-0.0", true},
		{`{"enum":[1]}`, "1.0", true},
		{`{"type":"integer"}`, "1.0", true},
		{`{"type":"integer"}`, "1e2", true},
		{`{"type":"integer"}`, "1.5", false},
		{`{"type":"number"}`, "1e400", false},
		{`{"type":"number"}`, "0.10000000000000001", false},
	} {
		s := e.ContentSchema(unique.Make(`{"type":"object","properties":{"n":` + c.prop + `}}`))
		v, err := s.Validate([]byte(`{"n":` + c.arg + `}`))
		if err != nil {
			t.Fatalf("%s: %v", c.prop, err)
		}
		if (v == nil) != c.ok {
			t.Errorf("%s with %s: violation %v, want accepted %v", c.prop, c.arg, v, c.ok)
		}
	}
	// A schema whose own numbers doubles round does not compile: every call fails the check.
	for _, prop := range []string{`{"maximum":9007199254740991.5}`, `{"minimum":100000000000000000001}`,
		`{"multipleOf":0.30000000000000000001}`, `{"enum":[1,[9007199254740993]]}`, `{"const":{"a":0.10000000000000001}}`} {
		s := e.ContentSchema(unique.Make(`{"type":"object","properties":{"n":` + prop + `}}`))
		if _, err := s.Validate([]byte(`{"n":1}`)); err == nil {
			t.Errorf("%s compiled", prop)
		}
	}
}

// readExact reads a literal as its exact value, as json.Number into big.Rat does; nil for what
// such a backend cannot hold.
func readExact(lit string) *big.Rat {
	var n json.Number
	dec := json.NewDecoder(bytes.NewReader([]byte(lit)))
	dec.UseNumber()
	if dec.Decode(&n) != nil {
		return nil
	}
	r, ok := new(big.Rat).SetString(n.String())
	if !ok || len(lit) > 5 && (lit == "1e400" || lit == "-1e400") {
		return nil // a magnitude beyond what a backend holds
	}
	return r
}

// readDouble reads a literal as JSON.parse does: the nearest double; nil for infinities.
func readDouble(lit string) *big.Rat {
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil || math.IsInf(f, 0) {
		return nil
	}
	return new(big.Rat).SetFloat64(f)
}

// readShortest reads a literal as the shortest decimal of its double, as a backend that reads
// doubles divides for multipleOf (zod divides the decimals the numbers print as: 1 is a
// multiple of 0.1 to it, though no double is exactly a tenth).
func readShortest(lit string) *big.Rat {
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil || math.IsInf(f, 0) {
		return nil
	}
	r, _ := new(big.Rat).SetString(strconv.FormatFloat(f, 'g', -1, 64))
	return r
}

// keywordHolds evaluates one numeric keyword exactly.
func keywordHolds(kw string, x, b *big.Rat) bool {
	if b == nil {
		return false
	}
	switch c := x.Cmp(b); kw {
	case "minimum":
		return c >= 0
	case "maximum":
		return c <= 0
	case "exclusiveMinimum":
		return c > 0
	case "exclusiveMaximum":
		return c < 0
	case "enum", "const":
		return c == 0
	case "multipleOf":
		return new(big.Rat).Quo(x, b).IsInt()
	}
	return false
}
