package guardrails

import (
	"errors"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

// The flat-schema check: most tools declare an object of named scalar arguments ("bytes" an
// integer, "note" a string, some required) and nothing else. Such arguments are checked on
// their text, member by member, without decoding them into a tree for the validator: under
// load that decode and the validator's walk were most of the schema guardrail's CPU and half
// of the bytes a guarded call allocated. The check only ever accepts: any member it cannot
// decide on its text (a number with a fraction or an exponent, a name that folds to a
// declared one, a nested value under a name the schema does not declare) sends the
// arguments to the full validator, as does any mismatch, so a refusal is worded by the
// validator exactly as before and nothing the validator refuses is let through.

// flatSchema is a schema that only says "an object" with properties of one scalar type each,
// some of them required.
type flatSchema struct {
	// props maps each declared property to its type.
	props map[string]flatType
	// required lists the required properties' bits in props order: bit i of a seen mask.
	required map[string]uint64
	all      uint64
}

type flatType uint8

const (
	flatString flatType = iota + 1
	flatInteger
	flatNumber
	flatBoolean
	flatNull
)

var flatTypes = map[string]flatType{
	"string": flatString, "integer": flatInteger, "number": flatNumber, "boolean": flatBoolean, "null": flatNull,
}

// compileFlat returns the flat form of a schema document, or nil when it says more than a
// flat schema can (any other keyword, a type list, additionalProperties other than true, more
// than 64 required properties).
func compileFlat(doc any) *flatSchema {
	m, ok := doc.(map[string]any)
	if !ok || m["type"] != "object" {
		return nil
	}
	f := &flatSchema{props: map[string]flatType{}, required: map[string]uint64{}}
	for k, v := range m {
		var ok bool
		switch k {
		case "type", "$schema", "title", "description":
			ok = true
		case "properties":
			ok = f.addProperties(v)
		case "required":
			ok = f.addRequired(v)
		case "additionalProperties":
			ok = v == true
		}
		if !ok {
			return nil
		}
	}
	return f
}

func (f *flatSchema) addProperties(v any) bool {
	props, ok := v.(map[string]any)
	if !ok {
		return false
	}
	for name, p := range props {
		pm, ok := p.(map[string]any)
		if !ok {
			return false
		}
		var t flatType
		for k, v := range pm {
			switch k {
			case "title", "description":
			case "type":
				s, _ := v.(string)
				if t = flatTypes[s]; t == 0 {
					return false
				}
			default:
				return false
			}
		}
		if t == 0 {
			return false
		}
		f.props[name] = t
	}
	return true
}

func (f *flatSchema) addRequired(v any) bool {
	req, ok := v.([]any)
	if !ok || len(req) > 64 {
		return false
	}
	for _, r := range req {
		name, ok := r.(string)
		if !ok {
			return false
		}
		if _, dup := f.required[name]; dup {
			continue
		}
		bit := uint64(1) << len(f.required)
		f.required[name] = bit
		f.all |= bit
	}
	return true
}

// errUndecided stops the member walk: the full validator decides.
var errUndecided = errors.New("undecided")

// accepts reports whether the arguments (text that passed the strict decode: valid, no
// duplicate members) certainly match the schema; false means the full validator decides.
// folded is the schema's folded names, as foldedName reads them.
//
// Names are compared decoded (jsonrpc.Members decodes an escaped key): "\u0062ytes" is the
// member "bytes" to every backend, so it is checked as that property.
func (f *flatSchema) accepts(instance []byte, names, folded map[string]bool) bool {
	if instance[skipWS(instance, 0)] != '{' {
		return false
	}
	var seen uint64
	err := jsonrpc.Members(instance, func(k, v []byte) error {
		t, declared := f.props[string(k)]
		if !declared {
			if names[string(k)] || foldsToDeclared(k, folded) || v[0] == '{' || v[0] == '[' {
				return errUndecided
			}
			return nil
		}
		if !t.holds(v) {
			return errUndecided
		}
		seen |= f.required[string(k)]
		return nil
	})
	return err == nil && seen == f.all
}

// foldsToDeclared reports whether a name the schema does not declare folds to one it does.
func foldsToDeclared(k []byte, folded map[string]bool) bool {
	var buf [64]byte
	return folded[string(jsonrpc.AppendFoldKey(buf[:0], k))]
}

// holds reports whether v (one JSON value's text) is certainly of type t. A number is decided
// only when it is a plain integer short enough for a float64 to hold exactly.
func (t flatType) holds(v []byte) bool {
	switch t {
	case flatString:
		return v[0] == '"'
	case flatBoolean:
		return v[0] == 't' || v[0] == 'f'
	case flatNull:
		return v[0] == 'n'
	}
	return jsonrpc.PlainInteger(v)
}
