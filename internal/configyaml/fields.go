// Package configyaml reads the gateway's configuration file strictly and describes it: Decode
// walks the YAML against the Go types and reports every problem with its key path, line and
// what was expected, suggesting the nearest known key and never quoting a value; Schema derives
// the JSON Schema of the same types, which editors use to validate and complete the file.
//
// Both read the types the way go.yaml.in/yaml/v3 does: a field's key is its yaml tag's name (the
// field name lower-cased when the tag names none), ",inline" merges an embedded struct's keys
// into its parent's, "-" leaves a field out, and a type that unmarshals itself (yaml.Unmarshaler
// or encoding.TextUnmarshaler) is one value.
package configyaml

import (
	"encoding"
	"reflect"
	"strconv"
	"strings"
	"unicode"

	"go.yaml.in/yaml/v3"
)

// Field is one key of a mapping read into a struct.
type Field struct {
	// Key is the YAML key.
	Key string
	// Type is the field's Go type.
	Type reflect.Type
	// Owner is the struct type that declares the field (an inlined struct for its keys), and
	// GoName the field's name there: where its documentation is.
	Owner  reflect.Type
	GoName string
	// Index is the field's index sequence in the struct Fields was given, through inlined
	// structs (reflect.Value.FieldByIndex).
	Index []int
	// Was is the key's former name (the field's `was` tag), which a file may still use: it is
	// refused with a pointer to the new one rather than as an unknown key.
	Was string
	// MinItems is the fewest entries a list the file writes may hold (the field's `minItems`
	// tag), when validation refuses a shorter one: an empty list that would mean nothing. The
	// schema says it so an editor flags the list. 0: any length.
	MinItems int
}

// Fields lists the keys of a mapping read into struct type t, in declaration order, inlined
// structs' keys in place.
func Fields(t reflect.Type) []Field {
	var out []Field
	for i := range t.NumField() {
		index := []int{i}
		f := t.Field(i)
		if !f.IsExported() && !f.Anonymous {
			continue
		}
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if strings.Contains(","+opts+",", ",inline,") {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem() // an inlined pointer is left out of Index: FieldByIndex would need it set
				index = nil
			}
			for _, inner := range Fields(ft) {
				if index != nil {
					inner.Index = append(append([]int(nil), index...), inner.Index...)
				}
				out = append(out, inner)
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		minItems, _ := strconv.Atoi(f.Tag.Get("minItems"))
		out = append(out, Field{Key: name, Type: f.Type, Owner: t, GoName: f.Name, Index: index, Was: f.Tag.Get("was"), MinItems: minItems})
	}
	return out
}

var (
	yamlUnmarshaler = reflect.TypeFor[yaml.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// selfDecoding reports whether values of t decode themselves from YAML, so they are one value
// whatever their Go kind.
func selfDecoding(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return t.Implements(yamlUnmarshaler) || p.Implements(yamlUnmarshaler) ||
		t.Implements(textUnmarshaler) || p.Implements(textUnmarshaler)
}

// keyPath is parent joined with a mapping key: "a.b", or a["k.x"] for a key that would not read
// back as one element of a path.
func keyPath(parent, key string) string {
	plain := key != ""
	for _, r := range key {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-:*/", r)) {
			plain = false
			break
		}
	}
	if !plain {
		return parent + "[" + quote(key) + "]"
	}
	if parent == "" {
		return key
	}
	return parent + "." + key
}

// quote writes s in double quotes, escaping what would break the path's reading.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case unicode.IsControl(r): // C0, DEL and C1
			b.WriteString("?")
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
