package pins

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// TestSchemaNarrowedIsSubsetGenerated: random schema pairs over every keyword the classifier
// models (and some it does not), the second derived from the first by random edits at any
// depth, including added and removed subschemas under every applicator. Whenever a pair is not
// classed input-schema-widened, every generated instance the new schema accepts must be
// accepted by the old one (checked with a real JSON Schema validator); when it is classed
// neither widened nor narrowed, both must accept exactly the same instances.
func TestSchemaNarrowedIsSubsetGenerated(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	g := &schemaGen{rng: rng}
	instances := make([]any, 0, 400)
	for range 400 {
		instances = append(instances, g.instance(3))
	}
	var narrowed, unchanged, total int
	for i := range 2000 {
		old := g.schema(3)
		cur := deepCopy(old)
		for range 1 + rng.IntN(3) {
			cur = g.mutate(cur, 3)
		}
		oldRaw, _ := json.Marshal(old)
		curRaw, _ := json.Marshal(cur)
		s := Classify(schemaTool(t, string(oldRaw)), schemaTool(t, string(curRaw)))
		if s.Has(ClassInputSchemaWidened) {
			continue
		}
		total++
		same := !s.Has(ClassInputSchemaNarrowed)
		if same {
			unchanged++
		} else {
			narrowed++
		}
		oldRes, curRes := resolveAny(t, old), resolveAny(t, cur)
		for _, in := range instances {
			newOK, oldOK := curRes.Validate(in) == nil, oldRes.Validate(in) == nil
			if newOK && !oldOK {
				inRaw, _ := json.Marshal(in)
				t.Fatalf("case %d: %v, but the new schema accepts %s, which the old refused\nold: %s\nnew: %s", i, s, inRaw, oldRaw, curRaw)
			}
			if same && oldOK && !newOK {
				inRaw, _ := json.Marshal(in)
				t.Fatalf("case %d: %v, but the new schema refuses %s, which the old accepted\nold: %s\nnew: %s", i, s, inRaw, oldRaw, curRaw)
			}
		}
	}
	t.Logf("%d narrowed, %d unchanged of %d not widened", narrowed, unchanged, total)
	if narrowed < 200 || unchanged < 50 {
		t.Fatalf("only %d narrowed and %d unchanged pairs of %d: the generator does not exercise the classifier", narrowed, unchanged, total)
	}
}

// schemaGen draws schemas, edits and instances from small universes, so that instances hit the
// schemas' edges.
type schemaGen struct{ rng *rand.Rand }

var (
	genNames   = []string{"a", "b", "c"}
	genStrings = []any{"", "a", "ab", "abc", "x", "ba"}
	genNumbers = []any{-2.0, 0.0, 1.0, 1.5, 2.0, 3.0, 6.0}
	genTypes   = []string{"null", "boolean", "object", "array", "number", "string", "integer"}
)

func (g *schemaGen) pick(xs []any) any { return xs[g.rng.IntN(len(xs))] }

func (g *schemaGen) instance(depth int) any {
	switch k := g.rng.IntN(7); {
	case k == 0:
		return nil
	case k == 1:
		return g.rng.IntN(2) == 0
	case k == 2:
		return g.pick(genNumbers)
	case k == 3:
		return g.pick(genStrings)
	case k == 4 && depth > 0:
		arr := []any{}
		for range g.rng.IntN(4) {
			arr = append(arr, g.instance(depth-1))
		}
		return arr
	case depth > 0:
		obj := map[string]any{}
		for _, n := range append(genNames, "d") {
			if g.rng.IntN(2) == 0 {
				obj[n] = g.instance(depth - 1)
			}
		}
		return obj
	}
	return g.pick(genStrings)
}

// schema draws a schema of a few keywords.
func (g *schemaGen) schema(depth int) any {
	if depth <= 0 || g.rng.IntN(8) == 0 {
		return []any{true, false, map[string]any{}}[g.rng.IntN(3)]
	}
	s := map[string]any{}
	for range 1 + g.rng.IntN(3) {
		k, v := g.keyword(depth)
		s[k] = v
	}
	return s
}

// keyword draws one keyword and its value.
func (g *schemaGen) keyword(depth int) (string, any) {
	sub := func() any { return g.schema(depth - 1) }
	list := func() any {
		l := []any{}
		for range 1 + g.rng.IntN(2) {
			l = append(l, sub())
		}
		return l
	}
	names := func() any {
		l := []any{}
		for _, n := range genNames {
			if g.rng.IntN(2) == 0 {
				l = append(l, n)
			}
		}
		return l
	}
	switch g.rng.IntN(30) {
	case 0:
		return "type", genTypes[g.rng.IntN(len(genTypes))]
	case 1:
		return "type", []any{genTypes[g.rng.IntN(len(genTypes))], genTypes[g.rng.IntN(len(genTypes))]}
	case 2, 3:
		p := map[string]any{}
		for _, n := range genNames {
			if g.rng.IntN(2) == 0 {
				p[n] = sub()
			}
		}
		return "properties", p
	case 4:
		return "required", names()
	case 5:
		return "additionalProperties", sub()
	case 6:
		return "patternProperties", map[string]any{"^a": sub()}
	case 7:
		return "enum", []any{g.pick(genStrings), g.pick(genNumbers), g.pick(genStrings)}
	case 8:
		return "const", g.pick(genStrings)
	case 9:
		bounds := []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength",
			"minItems", "maxItems", "minProperties", "maxProperties"}
		return bounds[g.rng.IntN(len(bounds))], float64(g.rng.IntN(4))
	case 10:
		return "multipleOf", []any{1.0, 2.0, 3.0, 6.0}[g.rng.IntN(4)]
	case 11:
		return "items", sub()
	case 12:
		return "prefixItems", list()
	case 13:
		return "contains", sub()
	case 14:
		return "minContains", float64(g.rng.IntN(3))
	case 15:
		return "maxContains", float64(g.rng.IntN(3))
	case 16:
		return "uniqueItems", g.rng.IntN(2) == 0
	case 17:
		return "allOf", list()
	case 18:
		return "anyOf", list()
	case 19:
		return "oneOf", list()
	case 20:
		return "not", sub()
	case 21:
		return "if", sub()
	case 22:
		return "then", sub()
	case 23:
		return "else", sub()
	case 24:
		return "propertyNames", map[string]any{"maxLength": float64(g.rng.IntN(2))}
	case 25:
		return "dependentSchemas", map[string]any{genNames[g.rng.IntN(3)]: sub()}
	case 26:
		return "dependentRequired", map[string]any{genNames[g.rng.IntN(3)]: names()}
	case 27:
		return "unevaluatedProperties", sub()
	case 28:
		return "pattern", "^a"
	}
	return "description", "d"
}

// mutate makes one random edit somewhere in s: add, remove or redraw a keyword, or descend
// into a subschema and edit there.
func (g *schemaGen) mutate(s any, depth int) any {
	m, ok := s.(map[string]any)
	if !ok || depth <= 0 {
		return g.schema(depth)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	switch op := g.rng.IntN(5); {
	case op == 0 || len(keys) == 0:
		k, v := g.keyword(depth)
		m[k] = v
	case op == 1:
		delete(m, keys[g.rng.IntN(len(keys))])
	default:
		k := keys[g.rng.IntN(len(keys))]
		switch v := m[k].(type) {
		case map[string]any:
			switch schemaKeywords[k] {
			case kwSchemaMap:
				for name, sub := range v {
					v[name] = g.mutate(sub, depth-1)
					break
				}
			case kwSchema, kwItems:
				m[k] = g.mutate(v, depth-1)
			default:
				nk, nv := g.keyword(depth)
				m[nk] = nv
			}
		case []any:
			if len(v) > 0 && (schemaKeywords[k] == kwSchemaList) {
				i := g.rng.IntN(len(v))
				v[i] = g.mutate(v[i], depth-1)
			} else {
				nk, nv := g.keyword(depth)
				m[nk] = nv
			}
		case float64:
			m[k] = v + float64(g.rng.IntN(3)-1)
		default:
			nk, nv := g.keyword(depth)
			m[nk] = nv
		}
	}
	return m
}

func deepCopy(v any) any {
	raw, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(raw, &out)
	return out
}

// resolveAny resolves a schema of any form (an object or a boolean) with the validator.
func resolveAny(t *testing.T, v any) *jsonschema.Resolved {
	t.Helper()
	raw, _ := json.Marshal(v)
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	r, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return r
}
