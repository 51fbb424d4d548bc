package configyaml

import (
	"encoding/json"
	"reflect"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
)

// DurationPattern is what time.ParseDuration reads, as a JSON Schema pattern: "0", or numbers
// with units ("1h30m", "250ms", "-1s").
const DurationPattern = `^(0|[-+]?(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$`

// SchemaOptions say what the types alone do not: documentation, defaults and closed sets of
// values, each keyed by a setting's generic key path (list entries written "[]":
// "upstreams[].timeout"), and the schema of types that decode themselves.
type SchemaOptions struct {
	// Doc returns the documentation of owner's field, or "".
	Doc func(owner reflect.Type, field string) string
	// Defaults are the settings' default values, as the file would write them.
	Defaults map[string]any
	// Enums are the only values a setting takes.
	Enums map[string][]any
	// Keys are the only keys a mapping setting takes (a map keyed by names of a closed set,
	// such as detector names), given as the mapping's propertyNames, so an editor refuses a
	// misspelt one.
	Keys map[string][]string
	// Types replaces the schema derived for a type.
	Types map[reflect.Type]*jsonschema.Schema
}

// Schema is the JSON Schema (draft 2020-12) of a YAML file read into root, as Decode reads it:
// every mapping read into a struct closed to other keys, durations as strings of
// time.ParseDuration's form, each key described with its documentation and default.
func Schema(root reflect.Type, title string, opts SchemaOptions) *jsonschema.Schema {
	g := schemaGen{opts: opts}
	s := g.of(root, "", 0)
	s.Schema = "https://json-schema.org/draft/2020-12/schema"
	s.Title = title
	return s
}

type schemaGen struct{ opts SchemaOptions }

func (g schemaGen) of(t reflect.Type, path string, depth int) *jsonschema.Schema {
	s := g.shape(t, path, depth)
	if e, ok := g.opts.Enums[path]; ok {
		s.Enum = e
	}
	if keys, ok := g.opts.Keys[path]; ok {
		names := make([]any, len(keys))
		for i, k := range keys {
			names[i] = k
		}
		s.PropertyNames = &jsonschema.Schema{Enum: names}
	}
	return s
}

// shape is the schema of type t at path, from the type alone.
func (g schemaGen) shape(t reflect.Type, path string, depth int) *jsonschema.Schema {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if s, ok := g.opts.Types[t]; ok {
		return clone(s)
	}
	switch {
	case t == reflect.TypeFor[time.Duration]():
		return &jsonschema.Schema{Type: "string", Pattern: DurationPattern}
	case selfDecoding(t):
		return &jsonschema.Schema{Type: "string"}
	}
	switch t.Kind() {
	case reflect.Bool:
		return &jsonschema.Schema{Type: "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		// The type's largest value, as the loader holds it (Decode's whole); the smallest of
		// a signed type is left out: every setting refuses a negative value long before it.
		s := &jsonschema.Schema{Type: "integer", Maximum: new(float64(maxInt(t)))}
		if t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uint64 {
			s.Minimum = new(0.0)
		}
		return s
	case reflect.Float32, reflect.Float64:
		return &jsonschema.Schema{Type: "number"}
	case reflect.String:
		return &jsonschema.Schema{Type: "string"}
	case reflect.Slice, reflect.Array:
		return &jsonschema.Schema{Type: "array", Items: g.of(t.Elem(), path+"[]", depth+1)}
	case reflect.Map:
		return &jsonschema.Schema{Type: "object", AdditionalProperties: g.of(t.Elem(), keyPath(path, "*"), depth+1)}
	case reflect.Struct:
		if depth > maxDepth {
			return &jsonschema.Schema{Type: "object"}
		}
		return g.object(t, path, depth)
	}
	return &jsonschema.Schema{}
}

// object is the schema of a mapping read into struct type t: its keys and nothing else.
func (g schemaGen) object(t reflect.Type, path string, depth int) *jsonschema.Schema {
	s := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{},
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}}}
	for _, f := range Fields(t) {
		p := keyPath(path, f.Key)
		fs := g.of(f.Type, p, depth+1)
		if f.MinItems > 0 && fs.Type == "array" {
			fs.MinItems = new(f.MinItems)
		}
		if g.opts.Doc != nil {
			if d := g.opts.Doc(f.Owner, f.GoName); d != "" {
				fs.Description = d
			}
		}
		if v, ok := g.opts.Defaults[p]; ok {
			if b, err := json.Marshal(jsonValue(v)); err == nil {
				fs.Default = b
			}
		} else if fs.Type == "boolean" {
			fs.Default = json.RawMessage("false") // what an absent key decodes to
		}
		s.Properties[f.Key] = fs
		s.PropertyOrder = append(s.PropertyOrder, f.Key)
	}
	return s
}

// jsonValue is v as the file writes it: a duration as its string.
func jsonValue(v any) any {
	switch x := v.(type) {
	case time.Duration:
		return FormatDuration(x)
	case []time.Duration:
		out := make([]string, len(x))
		for i, d := range x {
			out[i] = FormatDuration(d)
		}
		return out
	}
	return v
}

// FormatDuration writes d the way a person writes it in the file: "10s", "2m", "1h", "250ms",
// "1h30m", without the zero units time.Duration.String adds ("2m0s").
func FormatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

func clone(s *jsonschema.Schema) *jsonschema.Schema {
	c := *s
	return &c
}
