package guardrails

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strconv"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

// Numbers and the schema's numeric keywords. The validator reads every number, the schema's
// and the instance's, as a double. An instance number that parsers read as different values is
// refused before it (decode.go), so the value it judges is the value every backend receives.
// Two places remain where doubles would judge another value than the one written:
//
//   - a number in the schema itself: "maximum": 9007199254740991.5 is read as 9007199254740992,
//     so the argument 9007199254740992 would pass a bound it breaks as written; the same for the
//     other bounds, multipleOf, and the numbers of an enum or a const. Such a schema does not
//     compile (checkSchemaNumbers).
//   - multipleOf, which the validator decides by dividing two doubles: 1e20 / 3 rounds to an
//     integer, so 1e20 would pass "multipleOf": 3. Every number of the instance is also divided
//     exactly, as the decimals it and the schema's multipleOf are written as; a number rounding
//     makes a multiple that is none is refused (roundedMultiple).

// schemaNumberKeywords are the keywords whose value is one number the validator reads as a
// double.
var schemaNumberKeywords = map[string]bool{
	"minimum": true, "maximum": true, "exclusiveMinimum": true, "exclusiveMaximum": true, "multipleOf": true,
}

// checkSchemaNumbers reports the first number of the schema raw, under a numeric keyword or in
// an enum or a const, that parsers read as different values, and returns every multipleOf.
func checkSchemaNumbers(raw []byte) (multiples []float64, err error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	var walk func(v any, path string, depth int) error
	walk = func(v any, path string, depth int) error {
		if depth > maxDepth {
			return nil
		}
		switch v := v.(type) {
		case map[string]any:
			for k, sub := range v {
				p := path + "/" + escapeToken(k)
				if n, ok := sub.(json.Number); ok && schemaNumberKeywords[k] {
					f, alike := jsonrpc.NumberAsDouble([]byte(n))
					if !alike {
						return fmt.Errorf("%s holds a number that JSON parsers read as different values", p)
					}
					if k == "multipleOf" {
						multiples = append(multiples, f)
					}
					continue
				}
				if k == "enum" || k == "const" {
					if bad := unalikeNumber(sub, p, depth+1); bad != "" {
						return fmt.Errorf("%s holds a number that JSON parsers read as different values", bad)
					}
				}
				if err := walk(sub, p, depth+1); err != nil {
					return err
				}
			}
		case []any:
			for i, sub := range v {
				if err := walk(sub, path+"/"+strconv.Itoa(i), depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(doc, "", 0); err != nil {
		return nil, err
	}
	return multiples, nil
}

// unalikeNumber returns the pointer of the first number in v that parsers read as different
// values, "" if there is none.
func unalikeNumber(v any, path string, depth int) string {
	if depth > maxDepth {
		return ""
	}
	switch v := v.(type) {
	case json.Number:
		if _, alike := jsonrpc.NumberAsDouble([]byte(v)); !alike {
			return path
		}
	case map[string]any:
		for k, sub := range v {
			if p := unalikeNumber(sub, path+"/"+escapeToken(k), depth+1); p != "" {
				return p
			}
		}
	case []any:
		for i, sub := range v {
			if p := unalikeNumber(sub, path+"/"+strconv.Itoa(i), depth+1); p != "" {
				return p
			}
		}
	}
	return ""
}

// roundedMultiple returns a violation for the first number of the decoded instance v that
// the validator's division of doubles takes for a multiple of one of multiples while, as
// written, it is none. Both are numbers every parser reads alike, so the decimal each is
// written as is the shortest one that reads as its double.
func roundedMultiple(v any, multiples []float64, path string, depth int) *Violation {
	if depth > maxDepth {
		return nil
	}
	switch v := v.(type) {
	case float64:
		for _, m := range multiples {
			if _, frac := math.Modf(v / m); frac == 0 && !exactMultiple(v, m) {
				return &Violation{Path: path, Problem: "is not exactly a multiple of " +
					strconv.FormatFloat(m, 'g', -1, 64) + ", which the validator's doubles would take it for"}
			}
		}
	case map[string]any:
		for k, sub := range v {
			if x := roundedMultiple(sub, multiples, path+"/"+escapeToken(k), depth+1); x != nil {
				return x
			}
		}
	case []any:
		for i, sub := range v {
			if x := roundedMultiple(sub, multiples, path+"/"+strconv.Itoa(i), depth+1); x != nil {
				return x
			}
		}
	}
	return nil
}

// exactMultiple reports whether the decimal x is written as is an integer multiple of the
// decimal m is written as.
func exactMultiple(x, m float64) bool {
	var rx, rm big.Rat
	if _, ok := rx.SetString(strconv.FormatFloat(x, 'g', -1, 64)); !ok {
		return false
	}
	if _, ok := rm.SetString(strconv.FormatFloat(m, 'g', -1, 64)); !ok || rm.Sign() == 0 {
		return false
	}
	return rx.Quo(&rx, &rm).IsInt()
}
