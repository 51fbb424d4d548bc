package approval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/mcp-gateway/gateway/internal/webpage"
)

// maxRenderDepth bounds the nesting rendered; the gateway already refuses deeper arguments.
const maxRenderDepth = 64

// indentedLevels is how many levels of nesting the page indents. Each level takes about 28 px,
// and what is indented past the width of the arguments' box is laid out beyond its right edge,
// where a person sees it only by scrolling the box sideways (on a phone, whose scroll bars
// show only while scrolling, not at all): with every level indented, a value nested a dozen
// levels deep stood out of sight at a phone's width, and two dozen on a desktop's. Deeper
// levels are not indented further; each of their members and items says its level instead
// (Value.Flat), so that every key and value is within the box, at any depth the gateway takes.
const indentedLevels = 6

// Value is one JSON value prepared for the page. Exactly one group of fields is set, by Kind.
type Value struct {
	// Kind is "object", "array", "string" or "literal" (number, true, false, null).
	Kind string
	// Members are an object's members in the order the client sent them.
	Members []Member
	// Items are an array's elements.
	Items []Value
	// Text is a string's text; Literal a number's, boolean's or null's JSON text.
	Text    webpage.Text
	Literal string
	// LookAlike, for a string, names a word of it that could pass for another
	// (webpage.LookAlikeWord).
	LookAlike string
	// Depth is how deep an object or array is nested in the arguments: 0 for the arguments
	// themselves, 1 for a value of theirs.
	Depth int
}

// Flat reports whether v, an object or array, is nested past the levels the page indents
// (indentedLevels): its members and items are shown without further indentation, each with
// its level.
func (v Value) Flat() bool { return v.Depth >= indentedLevels }

// Level is the level the members and items of v, an object or array, are at (1 for the
// arguments' own members), which a Flat value's say.
func (v Value) Level() int { return v.Depth + 1 }

// Member is one object member; KeyLookAlike is LookAlike for its name.
type Member struct {
	Key          webpage.Text
	KeyLookAlike string
	Value        Value
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
			v := Value{Kind: "object", Depth: depth}
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
				v.Members = append(v.Members, Member{Key: webpage.Visible(key), KeyLookAlike: webpage.LookAlikeWord(key), Value: mv})
			}
			_, err := dec.Token()
			return v, err
		case '[':
			v := Value{Kind: "array", Depth: depth}
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
		return Value{Kind: "string", Text: webpage.Visible(t), LookAlike: webpage.LookAlikeWord(t)}, nil
	case json.Number:
		return Value{Kind: "literal", Literal: t.String()}, nil
	case bool:
		return Value{Kind: "literal", Literal: fmt.Sprint(t)}, nil
	case nil:
		return Value{Kind: "literal", Literal: "null"}, nil
	}
	return Value{}, errors.New("approval: arguments: unexpected token")
}
