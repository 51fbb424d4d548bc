package guardrails

import (
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// Locating a violation. The validator says which schema failed and with which keyword, in a
// chain of "validating <schema location>: " prefixes, and then quotes the failing value. The
// guardrail reads only the chain and the keyword, never the rest: it follows the schema
// locations through the instance to the failing value's path, and words the problem from the
// schema alone. Where a step cannot tell which item or member failed (an "items" or
// "additionalProperties" schema), each candidate is checked against that sub-schema.

// locate turns the validator's error into a Violation.
func (s *CompiledSchema) locate(verr error, inst any) *Violation {
	chain, keyword := parseChain(verr.Error())
	v, at, schemaPath := inst, "", ""
	if len(chain) > 0 && chain[0] == "root" {
		chain = chain[1:]
	}
	for _, next := range chain {
		rel, ok := strings.CutPrefix(next, schemaPath+"/")
		if !ok || !strings.HasPrefix(next, "/") {
			schemaPath = next // a $ref: the same value against another schema
			continue
		}
		nv, np, ok := s.step(v, at, next, splitPointer(rel))
		if !ok {
			break
		}
		v, at, schemaPath = nv, np, next
	}
	return &Violation{Path: at, Problem: s.problem(keyword, schemaPath, v)}
}

// parseChain splits "validating A: validating B: keyword: …" into [A, B] and the keyword.
func parseChain(msg string) (chain []string, keyword string) {
	for {
		rest, ok := strings.CutPrefix(msg, "validating ")
		if !ok {
			break
		}
		loc, after, ok := strings.Cut(rest, ": ")
		if !ok {
			break
		}
		chain, msg = append(chain, loc), after
	}
	if strings.HasPrefix(msg, "unexpected additional properties") {
		return chain, "additionalProperties"
	}
	keyword, _, _ = strings.Cut(msg, ":")
	if k, _, ok := strings.Cut(keyword, "["); ok {
		keyword = k // dependentRequired["a"]
	}
	return chain, keyword
}

func splitPointer(p string) []string {
	parts := strings.Split(p, "/")
	for i, t := range parts {
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return parts
}

// step follows one schema step (tokens, relative to the schema of value v at path at) to the
// value it applies to.
func (s *CompiledSchema) step(v any, at, schemaPath string, tokens []string) (any, string, bool) {
	switch tokens[0] {
	case "properties":
		m, ok := v.(map[string]any)
		if !ok || len(tokens) < 2 {
			return nil, "", false
		}
		sub, ok := m[tokens[1]]
		return sub, at + "/" + escapeToken(tokens[1]), ok
	case "prefixItems", "items":
		if len(tokens) == 2 { // a tuple position
			n, err := strconv.Atoi(tokens[1])
			a, ok := v.([]any)
			if err != nil || !ok || n >= len(a) {
				return nil, "", false
			}
			return a[n], at + "/" + tokens[1], true
		}
		return s.failingItem(v, at, schemaPath)
	case "additionalItems", "unevaluatedItems":
		return s.failingItem(v, at, schemaPath)
	case "additionalProperties", "patternProperties", "unevaluatedProperties":
		return s.failingMember(v, at, schemaPath)
	case "allOf", "anyOf", "oneOf", "not", "if", "then", "else", "dependentSchemas", "$ref":
		return v, at, true
	}
	return nil, "", false
}

// failingItem finds the first item of the array v that fails the sub-schema at schemaPath.
func (s *CompiledSchema) failingItem(v any, at, schemaPath string) (any, string, bool) {
	a, ok := v.([]any)
	sub := s.subSchema(schemaPath)
	if !ok || sub == nil {
		return nil, "", false
	}
	for i, item := range a {
		if s.validate(sub, item) != nil {
			return item, at + "/" + strconv.Itoa(i), true
		}
	}
	return nil, "", false
}

// failingMember finds the member of the object v, least name first, that fails the
// sub-schema at schemaPath.
func (s *CompiledSchema) failingMember(v any, at, schemaPath string) (any, string, bool) {
	m, ok := v.(map[string]any)
	sub := s.subSchema(schemaPath)
	if !ok || sub == nil {
		return nil, "", false
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if s.validate(sub, m[k]) != nil {
			return m[k], at + "/" + escapeToken(k), true
		}
	}
	return nil, "", false
}

// maxSubSchemas bounds the sub-schemas one schema keeps compiled for locating violations.
const maxSubSchemas = 64

// subSchema returns the schema at pointer p of s, resolved so that its references still
// resolve against s: a schema that is only a $ref to it, whose loader hands over s.
func (s *CompiledSchema) subSchema(p string) *jsonschema.Resolved {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rs, ok := s.sub[p]; ok {
		return rs
	}
	const base = "urn:mcp-gateway:schema"
	root := s.resolved.Schema()
	ref := &jsonschema.Schema{Ref: base + "#" + (&url.URL{Fragment: p}).EscapedFragment()}
	if root.Schema != "" {
		ref.Schema = root.Schema
	}
	rs, err := ref.Resolve(&jsonschema.ResolveOptions{Loader: func(*url.URL) (*jsonschema.Schema, error) {
		return root, nil
	}})
	if err != nil {
		rs = nil
	}
	if s.sub == nil {
		s.sub = map[string]*jsonschema.Resolved{}
	}
	if len(s.sub) < maxSubSchemas {
		s.sub[p] = rs
	}
	return rs
}

// problem words what the value v at schema location schemaPath breaks with keyword, from the
// schema: the value itself appears only as its JSON type.
func (s *CompiledSchema) problem(keyword, schemaPath string, v any) string {
	sch := s.at(schemaPath)
	get := func(k string) any { return sch[k] }
	switch keyword {
	case "type":
		return "must be " + typeWords(get("type")) + ", not " + jsonType(v)
	case "enum":
		return "must be one of " + shortJSON(get("enum"))
	case "const":
		return "must be " + shortJSON(get("const"))
	case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf":
		return numberProblem(keyword, get(keyword))
	case "minLength":
		return "must be at least " + shortJSON(get(keyword)) + " characters long"
	case "maxLength":
		return "must be at most " + shortJSON(get(keyword)) + " characters long"
	case "pattern":
		return "must match the pattern " + shortJSON(get("pattern"))
	case "required":
		return "is missing required properties " + missing(get("required"), v)
	case "additionalProperties":
		return "has properties the schema does not allow: " + extra(sch, v)
	case "minItems", "maxItems", "minProperties", "maxProperties", "minContains", "maxContains":
		return "breaks " + keyword + " " + shortJSON(get(keyword))
	case "uniqueItems":
		return "must not hold equal items"
	case "contains":
		return "must hold an item matching the schema's contains"
	case "anyOf", "oneOf":
		return "must match " + map[string]string{"anyOf": "at least one", "oneOf": "exactly one"}[keyword] +
			" of the schema's alternatives (" + keyword + ")"
	case "not":
		return "must not match the schema's not"
	}
	return "does not match the schema (" + strings.TrimSpace(shortKeyword(keyword)) + ")"
}

// at is the schema object at location p ("" or "root": the schema itself).
func (s *CompiledSchema) at(p string) map[string]any {
	cur := s.doc
	if p != "" && p != "root" && strings.HasPrefix(p, "/") {
		for _, t := range splitPointer(p[1:]) {
			switch c := cur.(type) {
			case map[string]any:
				cur = c[t]
			case []any:
				n, err := strconv.Atoi(t)
				if err != nil || n < 0 || n >= len(c) {
					return nil
				}
				cur = c[n]
			default:
				return nil
			}
		}
	}
	m, _ := cur.(map[string]any)
	return m
}

func typeWords(t any) string {
	switch t := t.(type) {
	case string:
		return t
	case []any:
		parts := make([]string, 0, len(t))
		for _, x := range t {
			parts = append(parts, fmt.Sprint(x))
		}
		return strings.Join(parts, " or ")
	}
	return "of another type"
}

// jsonType names the JSON type of a decoded value, as JSON Schema does.
func jsonType(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		if v == math.Trunc(v) {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "unknown"
}

func numberProblem(keyword string, limit any) string {
	l := shortJSON(limit)
	switch keyword {
	case "minimum":
		return "must be at least " + l
	case "maximum":
		return "must be at most " + l
	case "exclusiveMinimum":
		return "must be greater than " + l
	case "exclusiveMaximum":
		return "must be less than " + l
	}
	return "must be a multiple of " + l
}

// missing lists the required properties absent from v.
func missing(req, v any) string {
	m, _ := v.(map[string]any)
	r, _ := req.([]any)
	var names []string
	for _, x := range r {
		if n, ok := x.(string); ok {
			if _, present := m[n]; !present {
				names = append(names, quoteName(n))
			}
		}
	}
	return strings.Join(names, ", ")
}

// extra lists the members of v the schema sch does not declare (names only, at most eight).
func extra(sch map[string]any, v any) string {
	m, _ := v.(map[string]any)
	props, _ := sch["properties"].(map[string]any)
	var names []string
	for k := range m {
		if _, ok := props[k]; !ok {
			names = append(names, quoteName(k))
		}
	}
	slices.Sort(names)
	if len(names) > 8 {
		names = append(names[:8], "…")
	}
	return strings.Join(names, ", ")
}

// shortJSON renders a schema value for a message, at most 200 bytes.
func shortJSON(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

// shortKeyword is a keyword the validator named that problem does not know, if it is a plain
// word (the validator's message is never passed on).
func shortKeyword(k string) string {
	if len(k) == 0 || len(k) > 32 || !all([]byte(k), isLetter) {
		return "schema"
	}
	return k
}
