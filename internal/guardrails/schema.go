package guardrails

import (
	"container/list"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unique"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

// The schema guardrail: a tool's arguments against its inputSchema, its structuredContent
// against its outputSchema, with github.com/google/jsonschema-go (the validator the pin
// soundness tests check the drift classifier against; draft 2020-12, and draft-07 where a
// schema says so). Compiled schemas are cached by what they are: a listed schema by its
// content, a pinned one by its definition's fingerprint.

// SchemaKey names a schema in the cache.
type SchemaKey struct {
	content unique.Handle[string]
	pin     string
}

// ContentKey is the key of a schema known by its text (a handle from unique.Make).
func ContentKey(h unique.Handle[string]) SchemaKey { return SchemaKey{content: h} }

// PinKey is the key of the inputSchema (output false) or outputSchema of the pinned definition
// whose fingerprint is fp.
func PinKey(fp string, output bool) SchemaKey {
	if output {
		return SchemaKey{pin: fp + "#out"}
	}
	return SchemaKey{pin: fp + "#in"}
}

// CompiledSchema is a compiled schema.
type CompiledSchema struct {
	raw      []byte
	resolved *jsonschema.Resolved
	doc      any // the schema as JSON values, for naming what a violation broke
	// err is why the schema does not compile; such a schema fails every check.
	err error
	// objectOnly: the schema accepts any object (type object, nothing else that constrains):
	// arguments need not be decoded.
	objectOnly bool
	// flat: the schema declares scalar properties and nothing more; arguments it certainly
	// accepts are not decoded (schemaflat.go).
	flat *flatSchema
	// names are the property names the schema declares, exactly and under folding (see
	// jsonrpc.FoldKey), to refuse an argument whose name only a case-insensitive decoder reads
	// as a declared one.
	names, folded map[string]bool
	// multiples are the values of every multipleOf in the schema, to divide exactly what the
	// validator divides as doubles (schemanumber.go).
	multiples []float64
	// cost is the schema's graph when a value's checks are counted before it is validated
	// (schemacost.go).
	cost *costGraph

	mu  sync.Mutex
	sub map[string]*jsonschema.Resolved // sub-schemas by pointer, to locate a violation
}

// ErrSchema is a schema the guardrail cannot use (not JSON Schema, a remote $ref, an unknown
// dialect); every check against it fails.
var ErrSchema = errors.New("guardrails: the tool's schema cannot be compiled")

// Schema returns the compiled schema for key, compiling src() on a miss. A schema that does
// not compile is cached too, as such.
func (e *Engine) Schema(key SchemaKey, src func() ([]byte, error)) *CompiledSchema {
	if s := e.schemas.get(key); s != nil {
		return s
	}
	raw, err := src()
	var s *CompiledSchema
	if err != nil {
		s = &CompiledSchema{err: fmt.Errorf("%w: %v", ErrSchema, err)}
	} else {
		s = compileSchema(raw)
	}
	e.schemas.put(key, s)
	return s
}

// ContentSchema is Schema for a schema known by its text.
func (e *Engine) ContentSchema(h unique.Handle[string]) *CompiledSchema {
	return e.Schema(ContentKey(h), func() ([]byte, error) { return []byte(h.Value()), nil })
}

func compileSchema(raw []byte) *CompiledSchema {
	s := &CompiledSchema{raw: raw}
	var js jsonschema.Schema
	if err := json.Unmarshal(raw, &js); err != nil {
		s.err = fmt.Errorf("%w: %v", ErrSchema, err)
		return s
	}
	switch js.Schema {
	case "", "https://json-schema.org/draft/2020-12/schema", "http://json-schema.org/draft-07/schema#",
		"http://json-schema.org/draft-07/schema", "https://json-schema.org/draft-07/schema#":
	default:
		s.err = fmt.Errorf("%w: unsupported dialect %q", ErrSchema, js.Schema)
		return s
	}
	rs, err := js.Resolve(nil)
	if err != nil {
		s.err = fmt.Errorf("%w: %v", ErrSchema, err)
		return s
	}
	_ = json.Unmarshal(raw, &s.doc)
	if s.cost, err = checkRefs(s.doc); err != nil {
		s.err = fmt.Errorf("%w: %v", ErrSchema, err)
		return s
	}
	if s.multiples, err = checkSchemaNumbers(raw); err != nil {
		s.err = fmt.Errorf("%w: %v", ErrSchema, err)
		return s
	}
	s.resolved = rs
	s.objectOnly = objectOnly(s.doc)
	if !s.objectOnly {
		s.flat = compileFlat(s.doc)
	}
	s.names, s.folded = map[string]bool{}, map[string]bool{}
	collectNames(s.doc, s.names, s.folded, 0)
	return s
}

// objectOnly reports whether a schema says no more than "an object".
func objectOnly(doc any) bool {
	m, ok := doc.(map[string]any)
	if !ok || m["type"] != "object" {
		return false
	}
	for k, v := range m {
		switch k {
		case "type", "$schema", "title", "description":
		case "properties":
			if p, ok := v.(map[string]any); !ok || len(p) > 0 {
				return false
			}
		case "additionalProperties":
			if v != true {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// collectNames gathers every property name the schema refers to anywhere: those "properties"
// declares, and those a condition names without declaring them ("required", in an "if" too;
// "dependentRequired" and "dependentSchemas"; a "patternProperties" pattern that is one name,
// ^name$). An argument named like one of them only up to case would skip the condition it is
// meant to trigger ("Force" where "dependentSchemas" says what "force" requires) while a
// case-insensitive backend reads it as that name.
func collectNames(v any, names, folded map[string]bool, depth int) {
	if depth > maxDepth {
		return
	}
	add := func(name string) {
		names[name] = true
		folded[jsonrpc.FoldKey(name)] = true
	}
	switch v := v.(type) {
	case map[string]any:
		for _, kw := range [...]string{"properties", "dependentRequired", "dependentSchemas", "patternProperties"} {
			p, _ := v[kw].(map[string]any)
			for name, sub := range p {
				if kw == "patternProperties" {
					name, _ = literalPattern(name)
				}
				if name != "" {
					add(name)
				}
				if req, ok := sub.([]any); ok && kw == "dependentRequired" {
					addStrings(req, add)
				}
			}
		}
		if req, ok := v["required"].([]any); ok {
			addStrings(req, add)
		}
		for _, sub := range v {
			collectNames(sub, names, folded, depth+1)
		}
	case []any:
		for _, sub := range v {
			collectNames(sub, names, folded, depth+1)
		}
	}
}

// addStrings calls add with every string of list.
func addStrings(list []any, add func(string)) {
	for _, e := range list {
		if s, ok := e.(string); ok {
			add(s)
		}
	}
}

// literalPattern returns the one name a pattern ^name$ of letters, digits, '_' and '-'
// matches, false for any other pattern.
func literalPattern(p string) (string, bool) {
	name, anchored := strings.CutPrefix(p, "^")
	name, ended := strings.CutSuffix(name, "$")
	if !anchored || !ended || name == "" {
		return "", false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return "", false
		}
	}
	return name, true
}

// Violation is why an instance does not match its schema: where, and what it breaks, in
// terms of the schema only (the instance's value is never named).
type Violation struct {
	// Path is the RFC 6901 pointer of the failing value in the instance ("" for the instance
	// itself).
	Path string
	// Problem says what the value must be, from the schema: "must be integer, not string",
	// "missing required property \"id\"".
	Problem string
}

// String renders the violation for a refusal: "/items/2: must be integer, not string".
func (v *Violation) String() string {
	p := v.Path
	if p == "" {
		p = "(root)"
	}
	return p + ": " + v.Problem
}

// Validate checks instance (JSON text that passed the strict decode; nil is an empty object)
// against the schema. It returns nil when it matches; err when the schema cannot be used.
func (s *CompiledSchema) Validate(instance []byte) (v *Violation, err error) {
	if s.err != nil {
		return nil, s.err
	}
	if len(instance) == 0 {
		instance = []byte("{}")
	}
	if s.objectOnly && instance[skipWS(instance, 0)] == '{' {
		return nil, nil
	}
	if s.flat != nil && s.flat.accepts(instance, s.names, s.folded) {
		return nil, nil
	}
	inst, err := decodeTrusted(instance)
	var ne *numberError
	if errors.As(err, &ne) {
		// A number the validator, which reads doubles, would judge as another value than a
		// backend that reads the literal (beyond 2^53, finer than a double, beyond the
		// doubles): no verdict on it would hold for every backend.
		return &Violation{Path: ne.path, Problem: "holds a number that JSON parsers read as different values"}, nil
	}
	if err != nil {
		return &Violation{Problem: "is nested too deeply to check"}, nil
	}
	if v := s.foldedName(inst, "", 0); v != nil {
		return v, nil
	}
	if s.cost != nil && !s.cost.within(inst, countValues(inst)) {
		return &Violation{Problem: "takes more checks against the tool's schema than the gateway makes for a value of its size"}, nil
	}
	if verr := s.validate(s.resolved, inst); verr != nil {
		return s.locate(verr, inst), nil
	}
	if len(s.multiples) > 0 {
		return roundedMultiple(inst, s.multiples, "", 0), nil
	}
	return nil, nil
}

// validate runs the validator, which asserts its own invariants with panics: one is a failed
// check, not a crashed gateway.
func (s *CompiledSchema) validate(rs *jsonschema.Resolved, inst any) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("validator failed: %v", p)
		}
	}()
	return rs.Validate(inst)
}

// foldedName refuses a member whose name is not one the schema declares but is one under
// folding ("Path" where the schema says "path"): a backend that decodes case-insensitively
// would act on it as the declared argument the validator never saw.
func (s *CompiledSchema) foldedName(v any, path string, depth int) *Violation {
	if depth > maxDepth {
		return nil
	}
	switch v := v.(type) {
	case map[string]any:
		for k, sub := range v {
			if !s.names[k] && s.folded[jsonrpc.FoldKey(k)] {
				return &Violation{Path: path, Problem: "has a property " + quoteName(k) +
					" that differs from a declared property only in case or punctuation"}
			}
			if x := s.foldedName(sub, path+"/"+escapeToken(k), depth+1); x != nil {
				return x
			}
		}
	case []any:
		for i, sub := range v {
			if x := s.foldedName(sub, fmt.Sprintf("%s/%d", path, i), depth+1); x != nil {
				return x
			}
		}
	}
	return nil
}

func escapeToken(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}

// quoteName renders a member name for a message: quoted and cut short.
func quoteName(k string) string {
	if len(k) > 64 {
		k = k[:64] + "…"
	}
	b, _ := json.Marshal(k)
	return string(b)
}

// schemaCache is the LRU cache of compiled schemas, bounded in count and in the bytes of the
// schemas' text (their compiled form is a small multiple of it).
type schemaCache struct {
	mu    sync.Mutex
	max   int
	bytes int
	order *list.List // of *cacheEntry, most recent first
	byKey map[SchemaKey]*list.Element
}

// schemaCacheBytes bounds the text of the schemas cached.
const schemaCacheBytes = 16 << 20

type cacheEntry struct {
	key SchemaKey
	s   *CompiledSchema
}

func newSchemaCache(max int) *schemaCache {
	return &schemaCache{max: max, order: list.New(), byKey: map[SchemaKey]*list.Element{}}
}

func (c *schemaCache) get(k SchemaKey) *CompiledSchema {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[k]; ok {
		c.order.MoveToFront(el)
		return el.Value.(*cacheEntry).s
	}
	return nil
}

func (c *schemaCache) put(k SchemaKey, s *CompiledSchema) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[k]; ok {
		e := el.Value.(*cacheEntry)
		c.bytes += len(s.raw) - len(e.s.raw)
		e.s = s
		c.order.MoveToFront(el)
		return
	}
	c.byKey[k] = c.order.PushFront(&cacheEntry{key: k, s: s})
	c.bytes += len(s.raw)
	for c.order.Len() > c.max || (c.bytes > schemaCacheBytes && c.order.Len() > 1) {
		old := c.order.Back()
		c.order.Remove(old)
		e := old.Value.(*cacheEntry)
		c.bytes -= len(e.s.raw)
		delete(c.byKey, e.key)
	}
}

// Len is the number of schemas cached.
func (c *schemaCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
