package mrtr

import (
	"bytes"
	"fmt"
	"slices"
	"unicode/utf8"
)

// canonical returns the canonical form described at Digest. It is a
// hand-written scanner (RFC 8259 grammar) because encoding/json's token API
// costs about a hundred allocations for a small arguments object.
func canonical(raw []byte) ([]byte, error) { return canonicalOf(raw, false) }

// canonicalOf is canonical; exactIntegers also refuses an integer literal beyond ±2^53 and any
// other number literal that parsers read as different values (jsonrpc.NumberAsDouble), with
// ErrInvalidArguments (DigestConfirmable).
func canonicalOf(raw []byte, exactIntegers bool) ([]byte, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return []byte("null"), nil
	}
	if !utf8.Valid(raw) {
		return nil, fmt.Errorf("%w: invalid UTF-8", ErrInvalidArguments)
	}
	p := canonParser{in: raw, exactIntegers: exactIntegers}
	out, err := p.value(make([]byte, 0, len(raw)), 0)
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos != len(p.in) {
		return nil, p.fail("trailing data")
	}
	return out, nil
}

type canonParser struct {
	in      []byte
	pos     int
	scratch []byte // decoded string values, reused
	// exactIntegers refuses number literals that parsers read differently (canonicalOf).
	exactIntegers bool
}

func (p *canonParser) fail(what string) error {
	return fmt.Errorf("%w: %s at offset %d", ErrInvalidArguments, what, p.pos)
}

func (p *canonParser) skipSpace() {
	for p.pos < len(p.in) {
		switch p.in[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *canonParser) value(out []byte, depth int) ([]byte, error) {
	if depth > maxArgsDepth {
		return nil, p.fail("nested too deep")
	}
	p.skipSpace()
	if p.pos >= len(p.in) {
		return nil, p.fail("unexpected end")
	}
	switch c := p.in[p.pos]; {
	case c == '{':
		return p.object(out, depth)
	case c == '[':
		return p.array(out, depth)
	case c == '"':
		s, err := p.str(p.scratch[:0])
		if err != nil {
			return nil, err
		}
		p.scratch = s
		return appendString(out, s), nil
	case c == '-' || c >= '0' && c <= '9':
		return p.number(out)
	}
	for _, lit := range [...]string{"true", "false", "null"} {
		if end := p.pos + len(lit); end <= len(p.in) && string(p.in[p.pos:end]) == lit {
			p.pos += len(lit)
			return append(out, lit...), nil
		}
	}
	return nil, p.fail("unexpected character")
}

// canonMember is one object member: its decoded key and the span of its
// canonical value in the object's scratch buffer.
type canonMember struct {
	key        string
	start, end int
}

func (p *canonParser) object(out []byte, depth int) ([]byte, error) {
	p.pos++ // '{'
	var members []canonMember
	var vals []byte
	for i := 0; ; i++ {
		p.skipSpace()
		if i == 0 && p.pos < len(p.in) && p.in[p.pos] == '}' {
			break
		}
		if p.pos >= len(p.in) || p.in[p.pos] != '"' {
			return nil, p.fail("expected object key")
		}
		key, err := p.str(p.scratch[:0])
		if err != nil {
			return nil, err
		}
		if p.skipSpace(); p.pos >= len(p.in) || p.in[p.pos] != ':' {
			return nil, p.fail("expected ':'")
		}
		p.pos++
		p.scratch = key
		keyStr := string(key)
		start := len(vals)
		if vals, err = p.value(vals, depth+1); err != nil {
			return nil, err
		}
		members = append(members, canonMember{key: keyStr, start: start, end: len(vals)})
		if done, err := p.next('}'); err != nil || done {
			if err != nil {
				return nil, err
			}
			break
		}
	}
	p.pos++ // '}'
	return writeObject(out, members, vals, p)
}

func writeObject(out []byte, members []canonMember, vals []byte, p *canonParser) ([]byte, error) {
	slices.SortFunc(members, func(a, b canonMember) int {
		switch {
		case a.key < b.key:
			return -1
		case a.key > b.key:
			return 1
		}
		return 0
	})
	out = append(out, '{')
	for i, m := range members {
		if i > 0 {
			if members[i-1].key == m.key {
				return nil, p.fail("duplicate key")
			}
			out = append(out, ',')
		}
		out = appendString(out, m.key)
		out = append(out, ':')
		out = append(out, vals[m.start:m.end]...)
	}
	return append(out, '}'), nil
}

// next consumes ',' (reporting false) or stops before closer (reporting true).
func (p *canonParser) next(closer byte) (bool, error) {
	p.skipSpace()
	if p.pos >= len(p.in) {
		return false, p.fail("unexpected end")
	}
	switch p.in[p.pos] {
	case ',':
		p.pos++
		return false, nil
	case closer:
		return true, nil
	}
	return false, p.fail("expected ',' or closing bracket")
}

func (p *canonParser) array(out []byte, depth int) ([]byte, error) {
	p.pos++ // '['
	out = append(out, '[')
	for i := 0; ; i++ {
		p.skipSpace()
		if i == 0 && p.pos < len(p.in) && p.in[p.pos] == ']' {
			break
		}
		if i > 0 {
			out = append(out, ',')
		}
		var err error
		if out, err = p.value(out, depth+1); err != nil {
			return nil, err
		}
		if done, err := p.next(']'); err != nil || done {
			if err != nil {
				return nil, err
			}
			break
		}
	}
	p.pos++ // ']'
	return append(out, ']'), nil
}
