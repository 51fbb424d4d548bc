package mrtr

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"
)

// maxArgsDepth bounds nesting so hostile arguments cannot exhaust the stack.
const maxArgsDepth = 128

// Digest returns the SHA-256 of the canonical form of args, so that key
// order and insignificant whitespace do not matter but any value change does.
//
// Canonical form: no whitespace; object members sorted by key bytes; strings
// decoded and re-escaped minimally (so "\u0041" equals "A"); numbers kept as
// their literal text, so 1 and 1.0 differ (a false mismatch is safe, a false
// match is not). Absent arguments (empty or JSON null) digest as null.
// Invalid UTF-8, duplicate keys, nesting deeper than 128 or trailing data
// are rejected with ErrInvalidArguments: parsers disagree on those, and the
// backend must act on exactly what the user confirmed.
func Digest(args json.RawMessage) ([32]byte, error) {
	b, err := canonical(args)
	if err != nil {
		return [32]byte{}, err
	}
	return sha256.Sum256(b), nil
}

func canonical(raw []byte) ([]byte, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return []byte("null"), nil
	}
	if !utf8.Valid(raw) {
		return nil, fmt.Errorf("%w: invalid UTF-8", ErrInvalidArguments)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	out, err := canonValue(dec, nil, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: trailing data", ErrInvalidArguments)
	}
	return out, nil
}

func canonValue(dec *json.Decoder, out []byte, depth int) ([]byte, error) {
	if depth > maxArgsDepth {
		return nil, fmt.Errorf("%w: nested deeper than %d", ErrInvalidArguments, maxArgsDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidArguments, err)
	}
	switch v := tok.(type) {
	case json.Delim:
		if v == '{' {
			return canonObject(dec, out, depth)
		}
		if v == '[' {
			return canonArray(dec, out, depth)
		}
		return nil, fmt.Errorf("%w: unexpected %q", ErrInvalidArguments, v)
	case string:
		return appendString(out, v), nil
	case json.Number:
		return append(out, v...), nil
	case bool:
		if v {
			return append(out, "true"...), nil
		}
		return append(out, "false"...), nil
	case nil:
		return append(out, "null"...), nil
	}
	return nil, fmt.Errorf("%w: unexpected token", ErrInvalidArguments)
}

type member struct {
	key   string
	value []byte
}

func canonObject(dec *json.Decoder, out []byte, depth int) ([]byte, error) {
	var members []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidArguments, err)
		}
		key, _ := tok.(string) // the decoder guarantees keys are strings
		v, err := canonValue(dec, nil, depth+1)
		if err != nil {
			return nil, err
		}
		members = append(members, member{key: key, value: v})
	}
	if _, err := dec.Token(); err != nil { // '}'
		return nil, fmt.Errorf("%w: %w", ErrInvalidArguments, err)
	}
	slices.SortFunc(members, func(a, b member) int { return strings.Compare(a.key, b.key) })
	out = append(out, '{')
	for i, m := range members {
		if i > 0 {
			if members[i-1].key == m.key {
				return nil, fmt.Errorf("%w: duplicate key", ErrInvalidArguments)
			}
			out = append(out, ',')
		}
		out = appendString(out, m.key)
		out = append(out, ':')
		out = append(out, m.value...)
	}
	return append(out, '}'), nil
}

func canonArray(dec *json.Decoder, out []byte, depth int) ([]byte, error) {
	out = append(out, '[')
	for i := 0; dec.More(); i++ {
		if i > 0 {
			out = append(out, ',')
		}
		var err error
		if out, err = canonValue(dec, out, depth+1); err != nil {
			return nil, err
		}
	}
	if _, err := dec.Token(); err != nil { // ']'
		return nil, fmt.Errorf("%w: %w", ErrInvalidArguments, err)
	}
	return append(out, ']'), nil
}

// appendString writes s as a JSON string escaping only what JSON requires,
// so each string value has exactly one canonical spelling.
func appendString(out []byte, s string) []byte {
	const hex = "0123456789abcdef"
	out = append(out, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			out = append(out, '\\', c)
		case c < 0x20:
			out = append(out, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			out = append(out, c)
		}
	}
	return append(out, '"')
}
