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
}

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
				v.Members = append(v.Members, Member{Key: webpage.Visible(key), KeyLookAlike: webpage.LookAlikeWord(key), Value: mv})
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
