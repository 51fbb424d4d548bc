package pins

import (
	"reflect"
	"strconv"
)

// typeNames are the values of "type": naming one is not text for the model.
var typeNames = map[string]bool{"null": true, "boolean": true, "object": true, "array": true,
	"number": true, "string": true, "integer": true}

// schemaTextDiffers reports whether the text a reader of two input schemas sees differs, at any
// depth and inside any subschema (added ones included):
//
//   - an annotation (title, description, $comment, examples, default, deprecated, readOnly,
//     writeOnly) or an unknown keyword is added or changed at any schema position (text that
//     went away, with its subschema or alone, tells the reader nothing new);
//   - a string in a value the validator reads (enum and const values, pattern, format,
//     required and dependentRequired names, identifiers, …), a member name of a keyword that
//     maps names to subschemas (properties, patternProperties, $defs, dependentSchemas), or a
//     string in a malformed subschema does
//     not occur anywhere in the pinned schema (a required entry naming an existing property is
//     not new text; "IMPORTANT: read ~/.ssh" as an enum value is).
func schemaTextDiffers(o, n any) bool {
	ot := schemaText{annotations: map[string]any{}, data: map[string]bool{}}
	nt := schemaText{annotations: map[string]any{}, data: map[string]bool{}}
	ot.walk(o, "", 0)
	nt.walk(n, "", 0)
	for p, v := range nt.annotations {
		if ov, ok := ot.annotations[p]; !ok || !reflect.DeepEqual(ov, v) {
			return true
		}
	}
	if len(nt.data) == 0 {
		return false
	}
	all := map[string]bool{}
	allStrings(o, all, 0)
	for s := range nt.data {
		if !all[s] && !typeNames[s] {
			return true
		}
	}
	return false
}

// schemaText is what a schema says to its reader.
type schemaText struct {
	annotations map[string]any  // JSON pointer → value of an annotation or unknown keyword
	data        map[string]bool // strings in values the validator reads
}

func (t *schemaText) walk(v any, path string, depth int) {
	if depth > maxDepth {
		t.annotations[path] = v // too deep to walk: compared whole
		return
	}
	m, ok := v.(map[string]any)
	if !ok {
		if _, isBool := v.(bool); !isBool {
			allStrings(v, t.data, depth) // not a schema: every string in it is text
		}
		return
	}
	for k, e := range m {
		p := path + "/" + escapePointer(k)
		role, known := schemaKeywords[k]
		switch {
		case !known || role == kwAnnotation:
			t.annotations[p] = e
		case role == kwSchema:
			t.walk(e, p, depth+1)
		case role == kwSchemaList, role == kwItems:
			if l, isList := e.([]any); isList {
				for i, s := range l {
					t.walk(s, p+"/"+strconv.Itoa(i), depth+1)
				}
			} else if role == kwItems {
				t.walk(e, p, depth+1)
			} else {
				allStrings(e, t.data, depth)
			}
		case role == kwSchemaMap, role == kwDependencies:
			t.schemaMap(e, p, role, depth)
		default:
			allStrings(e, t.data, depth)
		}
	}
}

func (t *schemaText) schemaMap(e any, p string, role kwRole, depth int) {
	sm, isMap := e.(map[string]any)
	if !isMap {
		allStrings(e, t.data, depth)
		return
	}
	for name, s := range sm {
		// The name is read too: a property, pattern, definition or dependency name is text
		// the model reads, and one added under a new conjunct or a widened not would
		// otherwise pass as a proved narrowing.
		t.data[name] = true
		if _, names := s.([]any); names && role == kwDependencies {
			allStrings(s, t.data, depth)
			continue
		}
		t.walk(s, p+"/"+escapePointer(name), depth+1)
	}
}

// allStrings adds every string value and member name in v to set.
func allStrings(v any, set map[string]bool, depth int) {
	if depth > 2*maxDepth {
		return
	}
	switch v := v.(type) {
	case string:
		set[v] = true
	case []any:
		for _, e := range v {
			allStrings(e, set, depth+1)
		}
	case map[string]any:
		for k, e := range v {
			set[k] = true
			allStrings(e, set, depth+1)
		}
	}
}
