package mrtr

// The json.Decoder-based canonicalizer this package used first, kept as an
// oracle: FuzzDigest checks the hand-written scanner against it.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"
)

func referenceCanonical(raw []byte) ([]byte, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return []byte("null"), nil
	}
	if !utf8.Valid(raw) {
		return nil, fmt.Errorf("%w: invalid UTF-8", ErrInvalidArguments)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	out, err := refValue(dec, nil, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: trailing data", ErrInvalidArguments)
	}
	return out, nil
}

func refValue(dec *json.Decoder, out []byte, depth int) ([]byte, error) {
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
			return refObject(dec, out, depth)
		}
		if v == '[' {
			return refArray(dec, out, depth)
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

type refMember struct {
	key   string
	value []byte
}

func refObject(dec *json.Decoder, out []byte, depth int) ([]byte, error) {
	var members []refMember
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidArguments, err)
		}
		key, _ := tok.(string) // the decoder guarantees keys are strings
		v, err := refValue(dec, nil, depth+1)
		if err != nil {
			return nil, err
		}
		members = append(members, refMember{key: key, value: v})
	}
	if _, err := dec.Token(); err != nil { // '}'
		return nil, fmt.Errorf("%w: %w", ErrInvalidArguments, err)
	}
	slices.SortFunc(members, func(a, b refMember) int { return strings.Compare(a.key, b.key) })
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

func refArray(dec *json.Decoder, out []byte, depth int) ([]byte, error) {
	out = append(out, '[')
	for i := 0; dec.More(); i++ {
		if i > 0 {
			out = append(out, ',')
		}
		var err error
		if out, err = refValue(dec, out, depth+1); err != nil {
			return nil, err
		}
	}
	if _, err := dec.Token(); err != nil { // ']'
		return nil, fmt.Errorf("%w: %w", ErrInvalidArguments, err)
	}
	return append(out, ']'), nil
}
