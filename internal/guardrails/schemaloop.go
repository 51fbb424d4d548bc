package guardrails

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// A schema's reference graph, checked before the schema is used. The validator applies a
// $ref, a $dynamicRef and the keywords that apply a subschema to the same value (allOf, anyOf,
// oneOf, not, if, then, else, dependentSchemas) to that value again, recursing, with no bound
// of its own: a schema that reaches itself that way ({"$ref": "#"}) recurses until the
// goroutine's stack is exhausted, which ends the process rather than the call, and a schema
// that reaches one subschema through many such paths makes one value cost their number of
// checks. A backend lists the schema, so either would be its way to stop or stall every
// replica a call to the tool reaches: such a schema does not compile. A recursion through a
// keyword that descends into the value (properties, items, …) ends with the value's depth, and
// is what recursive schemas (a tree's children) are made of; but one whose subschemas apply
// to a part of the value through several paths at each level (allOf of two references to a
// schema of properties that refers back) costs two to the power of the value's depth, so a
// value is first walked through such a schema counting the checks it would take, and refused
// past a bound proportional to its size (schemacost.go).

// maxInPlace bounds how many times one value may be checked against the subschemas of one
// schema (the paths through the in-place keywords from it, itself included): the least
// bound on a value's checks (minChecks), which a schema past it would break on any value. A
// large union (anyOf of hundreds of variants, each of a few references) stays well within.
const maxInPlace = minChecks

// errRefLoop and errRefFanOut name the two shapes refused.
var (
	errRefLoop   = errors.New("a reference loop that never descends into the value")
	errRefFanOut = errors.New("more than 65536 subschemas applied to one value")
)

// refNode is one subschema of the document, by its JSON pointer.
type refNode struct {
	inPlace []string  // pointers of the subschemas applied to the same value
	parts   []refEdge // the subschemas applied to parts of the value (to is a pointer)
	refs    []string  // $ref and $dynamicRef, as written
	dynamic []bool
	base    *url.URL // the URI its references resolve against
}

// refGraph is a schema document's subschemas and the names they are known by.
type refGraph struct {
	nodes     map[string]*refNode
	resources map[string]string   // a resource's URI (no fragment) → its pointer
	anchors   map[string]string   // resource URI + "#" + anchor → pointer
	dynAnchor map[string][]string // $dynamicAnchor name → pointers
}

// checkRefs refuses a schema document (decoded JSON) with a reference loop that never
// descends into the value, or too many subschemas applied to one value. It returns the
// schema's graph when a value's checks must be counted before it is validated (schemacost.go),
// nil when the schema bounds them itself.
func checkRefs(doc any) (*costGraph, error) {
	g := &refGraph{nodes: map[string]*refNode{}, resources: map[string]string{},
		anchors: map[string]string{}, dynAnchor: map[string][]string{}}
	g.walk(doc, "", &url.URL{}, 0)
	if len(g.nodes) == 0 {
		return nil, nil
	}
	edges := make(map[string][]string, len(g.nodes))
	for p, n := range g.nodes {
		out := n.inPlace
		for i, ref := range n.refs {
			to, err := g.resolve(n.base, ref, n.dynamic[i])
			if err != nil {
				return nil, fmt.Errorf("at %s: %w", pointerOrRoot(p), err)
			}
			out = append(out, to...)
		}
		edges[p] = out
	}
	if err := inPlaceBounded(edges); err != nil {
		return nil, err
	}
	return newCostGraph(g.nodes, edges), nil
}

// inPlaceBounded refuses a cycle of edges, and a node from which more than maxInPlace paths
// start, by a depth-first walk that counts each node's paths once.
func inPlaceBounded(edges map[string][]string) error {
	const open = -1
	paths := make(map[string]int, len(edges))
	var visit func(p string) error
	visit = func(p string) error {
		switch n := paths[p]; {
		case n == open:
			return fmt.Errorf("at %s: %w", pointerOrRoot(p), errRefLoop)
		case n > 0:
			return nil
		}
		paths[p] = open
		total := 1
		for _, q := range edges[p] {
			if err := visit(q); err != nil {
				return err
			}
			if total += paths[q]; total > maxInPlace {
				return fmt.Errorf("at %s: %w", pointerOrRoot(p), errRefFanOut)
			}
		}
		paths[p] = total
		return nil
	}
	for p := range edges {
		if err := visit(p); err != nil {
			return err
		}
	}
	return nil
}

func pointerOrRoot(p string) string {
	if p == "" {
		return "the root"
	}
	return p
}

// The shapes of a keyword's value that hold subschemas.
const (
	oneSchema   = 1 << iota // a subschema
	listSchemas             // an array of them
	namedSchema             // an object of them
)

// subschemas says which shapes of keyword k's value hold subschemas, and whether they apply
// to the value itself rather than to a part of it.
func subschemas(k string) (shapes int, inPlace bool) {
	switch k {
	case "not", "if", "then", "else":
		return oneSchema, true
	case "allOf", "anyOf", "oneOf":
		return listSchemas, true
	case "dependentSchemas", "dependencies":
		return namedSchema, true
	case "items":
		return oneSchema | listSchemas, false
	case "prefixItems":
		return listSchemas, false
	case "contains", "additionalProperties", "additionalItems", "propertyNames",
		"unevaluatedItems", "unevaluatedProperties":
		return oneSchema, false
	case "properties", "patternProperties", "$defs", "definitions":
		return namedSchema, false
	}
	return 0, false
}

// walk records the subschema v at pointer p, whose references resolve against base, and
// everything under it.
func (g *refGraph) walk(v any, p string, base *url.URL, depth int) {
	m, ok := v.(map[string]any)
	if !ok || depth > 4*maxDepth {
		return
	}
	n := &refNode{base: base}
	g.nodes[p] = n
	if id, ok := m["$id"].(string); ok {
		if frag, isAnchor := strings.CutPrefix(id, "#"); isAnchor {
			g.anchors[base.String()+"#"+frag] = p // draft-07's plain-name $id
		} else if u, err := url.Parse(id); err == nil {
			b := *base.ResolveReference(u)
			b.Fragment = ""
			n.base = &b
		}
	}
	if p == "" || n.base != base {
		g.resources[n.base.String()] = p
	}
	for _, k := range []string{"$anchor", "$dynamicAnchor"} {
		if a, ok := m[k].(string); ok {
			g.anchors[n.base.String()+"#"+a] = p
			if k == "$dynamicAnchor" {
				g.dynAnchor[a] = append(g.dynAnchor[a], p)
			}
		}
	}
	for i, k := range []string{"$ref", "$dynamicRef"} {
		if r, ok := m[k].(string); ok {
			n.refs, n.dynamic = append(n.refs, r), append(n.dynamic, i == 1)
		}
	}
	for k, sub := range m {
		shapes, inPlace := subschemas(k)
		at := p + "/" + escapeToken(k)
		switch sub := sub.(type) {
		case map[string]any:
			if shapes&oneSchema != 0 {
				g.child(n, sub, at, refEdge{kind: partKind(k, inPlace)}, depth)
			} else if shapes&namedSchema != 0 {
				for name, s := range sub {
					g.child(n, s, at+"/"+escapeToken(name), refEdge{kind: partKind(k, inPlace), name: name}, depth)
				}
			}
		case []any:
			if shapes&listSchemas != 0 {
				kind := partKind(k, inPlace)
				if kind == partElements {
					kind = partElement // draft-07's items array: one schema an element
				}
				for i, s := range sub {
					g.child(n, s, at+"/"+strconv.Itoa(i), refEdge{kind: kind, index: i}, depth)
				}
			}
		}
	}
}

// child records the subschema v at pointer p under n, applied as e says.
func (g *refGraph) child(n *refNode, v any, p string, e refEdge, depth int) {
	if _, ok := v.(map[string]any); !ok {
		return
	}
	switch e.kind {
	case partSame:
		n.inPlace = append(n.inPlace, p)
	case partNone:
	default:
		e.to = p
		n.parts = append(n.parts, e)
	}
	g.walk(v, p, n.base, depth+1)
}

// resolve returns the pointers a reference from a schema whose base is base may lead to: its
// target, and for a $dynamicRef to a dynamic anchor every schema that declares that anchor
// (which one applies depends on the path the validator took). A reference the walk cannot
// follow is an error: the check fails closed.
func (g *refGraph) resolve(base *url.URL, ref string, dynamic bool) ([]string, error) {
	u, err := url.Parse(ref)
	if err != nil {
		return nil, fmt.Errorf("a reference %q that is not a URI", ref)
	}
	abs := base.ResolveReference(u)
	frag := abs.Fragment
	abs.Fragment, abs.RawFragment = "", ""
	res, ok := g.resources[abs.String()]
	if !ok {
		return nil, fmt.Errorf("a reference %q outside the schema", ref)
	}
	if frag != "" && !strings.HasPrefix(frag, "/") {
		to, ok := g.anchors[abs.String()+"#"+frag]
		if !ok {
			return nil, fmt.Errorf("a reference %q to no anchor", ref)
		}
		if dynamic {
			return append([]string{to}, g.dynAnchor[frag]...), nil
		}
		return []string{to}, nil
	}
	p := res
	if frag != "" {
		for _, tok := range splitPointer(frag[1:]) {
			p += "/" + escapeToken(tok)
		}
	}
	if _, ok := g.nodes[p]; !ok {
		return nil, fmt.Errorf("a reference %q to no subschema the gateway reads", ref)
	}
	return []string{p}, nil
}
