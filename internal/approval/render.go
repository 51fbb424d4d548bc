package approval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// foldRunes is the length beyond which a string is shown folded: its beginning in the page and
// the whole value in a <details> element, which works without JavaScript.
const foldRunes = 240

// maxRenderDepth bounds the nesting rendered; the gateway already refuses deeper arguments.
const maxRenderDepth = 64

// Value is one JSON value prepared for the page. Exactly one group of fields is set, by Kind.
type Value struct {
	// Kind is "object", "array", "string" or "literal" (number, true, false, null).
	Kind string
	// Members are an object's members in the order the client sent them.
	Members []Member
	// Items are an array's elements.
	Items []Value
	// Text is a string's text; Literal a number's, boolean's or null's JSON text.
	Text    Text
	Literal string
}

// Member is one object member.
type Member struct {
	Key   Text
	Value Value
}

// Text is a string split into runs of plain text and of characters made visible. Short is the
// beginning shown when the string is folded; Full is all of it.
type Text struct {
	Full   []Run
	Short  []Run
	Folded bool
	// Runes is the length in characters; Hidden counts the characters made visible.
	Runes, Hidden int
}

// Run is plain text, or (Mark) the visible name of an invisible or direction-changing
// character such as "U+202E".
type Run struct {
	S    string
	Mark bool
}

// RenderArguments prepares a call's arguments for the page. It preserves member order and
// number text; html/template escapes the result when the page is written.
func RenderArguments(raw json.RawMessage) (Value, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return Value{Kind: "object"}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	v, err := decodeValue(dec, 0)
	if err != nil {
		return Value{}, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Value{}, errors.New("approval: trailing data after arguments")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder, depth int) (Value, error) {
	if depth > maxRenderDepth {
		return Value{}, errors.New("approval: arguments nested too deeply")
	}
	tok, err := dec.Token()
	if err != nil {
		return Value{}, fmt.Errorf("approval: arguments: %w", err)
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			v := Value{Kind: "object"}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return Value{}, fmt.Errorf("approval: arguments: %w", err)
				}
				key, _ := kt.(string)
				mv, err := decodeValue(dec, depth+1)
				if err != nil {
					return Value{}, err
				}
				v.Members = append(v.Members, Member{Key: visible(key), Value: mv})
			}
			_, err := dec.Token()
			return v, err
		case '[':
			v := Value{Kind: "array"}
			for dec.More() {
				iv, err := decodeValue(dec, depth+1)
				if err != nil {
					return Value{}, err
				}
				v.Items = append(v.Items, iv)
			}
			_, err := dec.Token()
			return v, err
		}
		return Value{}, errors.New("approval: arguments: unexpected delimiter")
	case string:
		return Value{Kind: "string", Text: visible(t)}, nil
	case json.Number:
		return Value{Kind: "literal", Literal: t.String()}, nil
	case bool:
		return Value{Kind: "literal", Literal: fmt.Sprint(t)}, nil
	case nil:
		return Value{Kind: "literal", Literal: "null"}, nil
	}
	return Value{}, errors.New("approval: arguments: unexpected token")
}

// visible splits s into runs, replacing each character a reader could not see, or that
// reorders what follows it, by a marked run naming its code point, and folds long strings.
func visible(s string) Text {
	t := Text{Runes: utf8.RuneCountInString(s)}
	t.Folded = t.Runes > foldRunes
	var plain strings.Builder
	n := 0
	flush := func() {
		if plain.Len() > 0 {
			t.Full = append(t.Full, Run{S: plain.String()})
			plain.Reset()
		}
	}
	for _, r := range s {
		if n == foldRunes && t.Folded {
			flush()
			t.Short = append([]Run(nil), t.Full...)
		}
		n++
		if name, hidden := invisibleName(r); hidden {
			flush()
			t.Hidden++
			t.Full = append(t.Full, Run{S: name, Mark: true})
			continue
		}
		plain.WriteRune(r)
	}
	flush()
	return t
}

// invisibleName reports whether r must be made visible and how it is shown. Newlines and tabs
// stay as they are (the page preserves white space); every other control, format (bidi
// overrides and isolates, zero-width characters, tag characters), line or paragraph separator,
// space other than U+0020, variation selector and filler is named.
func invisibleName(r rune) (string, bool) {
	switch {
	case r == '\n' || r == '\t' || r == ' ':
		return "", false
	case r == utf8.RuneError:
		return "U+FFFD", true
	case unicode.IsControl(r), unicode.Is(unicode.Cf, r), unicode.Is(unicode.Zl, r), unicode.Is(unicode.Zp, r),
		unicode.Is(unicode.Zs, r), unicode.Is(unicode.Variation_Selector, r),
		r == 0x034F, r == 0x115F, r == 0x1160, r == 0x3164, r == 0xFFA0, r == 0x2800,
		unicode.Is(unicode.Co, r), unicode.Is(unicode.Cs, r), !unicode.IsPrint(r) && !unicode.IsGraphic(r):
		return fmt.Sprintf("U+%04X", r), true
	}
	return "", false
}
