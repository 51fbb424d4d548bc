package jsonrpc

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
)

// CanonicalID gives one spelling to each JSON-RPC id as a peer reads it: "7" and 7 are
// different ids, "a" and "\u0061" the same one, and so are two integers a peer reads as one
// number. The TypeScript SDK (so mcp-remote, and Node backends) decodes every JSON number as a
// double: 0 and -0 are one id to it, and integers beyond 2^53 that round to the same double
// too, so such integers are compared as that double (an exact integer below 2^53 keeps its
// digits). An id that is neither a string nor an integer (a fraction, an exponent, null) has
// no canonical form: !ok. Every place that asks whether two ids are one (a backend's answer, a
// client's cancellation, a batch's duplicates) asks this, so they cannot disagree.
func CanonicalID(id json.RawMessage) (string, bool) {
	id = bytes.TrimSpace(id)
	if len(id) == 0 {
		return "", false
	}
	if id[0] == '"' {
		var s string
		if json.Unmarshal(id, &s) != nil {
			return "", false
		}
		return "s" + s, true
	}
	digits := id
	if digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > maxIDDigits {
		return "", false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return "", false
		}
	}
	f, err := strconv.ParseFloat(string(id), 64)
	switch {
	case err != nil:
		return "", false
	case f == 0:
		return "n0", true // -0 too
	case math.Abs(f) < 1<<53:
		return "n" + string(id), true
	}
	return "n" + strconv.FormatFloat(f, 'g', -1, 64), true
}

// maxIDDigits bounds the digits of an integer id compared by its value: a longer one is no
// double a peer could tell from its neighbours, and none a peer sends.
const maxIDDigits = 308
