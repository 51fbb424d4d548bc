package guardrails

import "math"

// Counting a value's checks before it is validated. A schema's in-place keywords are bounded
// at compile time (schemaloop.go), but the subschemas it applies to the parts of a value
// (properties, items, …) multiply level by level: a schema that reaches one schema of
// properties through two references, and whose property refers back to it, checks a value
// nested n deep 2^n times. Where the schema's subschemas, unfolded, are more than
// maxUnfolded (a recursion unfolds without end), a value is walked through them first,
// counting, and refused past a bound proportional to its size; the walk stops at the bound, so
// it costs no more than that.

// What part of a value an edge of the schema's graph applies its subschema to.
const (
	partNone     = iota // nothing the validator checks (a $defs entry)
	partSame            // the value itself
	partMember          // the object's member of the edge's name (properties)
	partMembers         // each of the object's members (patternProperties, additionalProperties, …)
	partNames           // each of the object's member names (propertyNames)
	partElement         // the array's element at the edge's index (prefixItems, draft-07's items array)
	partElements        // each of the array's elements (items, contains, …)
)

// partKind is the part of a value that keyword k (whose subschemas apply to the value itself
// when inPlace) applies them to, for a subschema found as an object (one) or in a list or an
// object of them.
func partKind(k string, inPlace bool) int {
	switch {
	case inPlace:
		return partSame
	case k == "properties":
		return partMember
	case k == "patternProperties" || k == "additionalProperties" || k == "unevaluatedProperties":
		return partMembers
	case k == "propertyNames":
		return partNames
	case k == "prefixItems":
		return partElement
	case k == "items" || k == "additionalItems" || k == "contains" || k == "unevaluatedItems":
		return partElements
	}
	return partNone
}

// refEdge applies the subschema at pointer to to a part of a value.
type refEdge struct {
	to    string
	kind  int
	name  string
	index int
}

// costEdge is a refEdge between node indices.
type costEdge struct {
	to, kind, index int
	name            string
}

// costGraph is a schema's subschemas (node 0 is the root) and what each applies to what.
type costGraph struct{ edges [][]costEdge }

// maxUnfolded is how many subschema applications, along every path from the root, a schema
// may have for its values to go unwalked: each part of a value is then checked at most that
// many times.
const maxUnfolded = 1 << 12

// checksPerValue and minChecks make the bound on a walked value's checks: a recursive schema
// applies a few subschemas to each part of a value, a multiplying one ever more.
const (
	checksPerValue = 256
	minChecks      = 1 << 16
)

// newCostGraph returns the graph of the schema's nodes (pointer → node) and in-place edges
// (no cycle among them), or nil when the schema, unfolded, stays within maxUnfolded.
func newCostGraph(nodes map[string]*refNode, inPlace map[string][]string) *costGraph {
	index := make(map[string]int, len(nodes))
	index[""] = 0
	for p := range nodes {
		if p != "" {
			index[p] = len(index)
		}
	}
	g := &costGraph{edges: make([][]costEdge, len(index))}
	for p, n := range nodes {
		from := index[p]
		for _, q := range inPlace[p] {
			g.edges[from] = append(g.edges[from], costEdge{to: index[q], kind: partSame})
		}
		for _, e := range n.parts {
			g.edges[from] = append(g.edges[from], costEdge{to: index[e.to], kind: e.kind, index: e.index, name: e.name})
		}
	}
	if g.unfolded() <= maxUnfolded {
		return nil
	}
	return g
}

// unfolded counts the applications along every path from the root, up to just past
// maxUnfolded (a cycle counts as past it).
func (g *costGraph) unfolded() int {
	const open = -1
	count := make([]int, len(g.edges))
	var visit func(n int) int
	visit = func(n int) int {
		switch c := count[n]; {
		case c == open:
			return maxUnfolded + 1
		case c > 0:
			return c
		}
		count[n] = open
		total := 1
		for _, e := range g.edges[n] {
			if total += visit(e.to); total > maxUnfolded {
				total = maxUnfolded + 1
				break
			}
		}
		count[n] = total
		return total
	}
	return visit(0)
}

// within reports whether validating inst (decoded JSON, of values values) applies the schema's
// subschemas at most checksPerValue times a value (and at least minChecks times) in all.
func (g *costGraph) within(inst any, values int) bool {
	budget := minChecks
	if values < (math.MaxInt-minChecks)/checksPerValue {
		budget += checksPerValue * values
	} else {
		budget = math.MaxInt
	}
	return g.spend(0, inst, &budget)
}

// spend takes from budget the checks of v against node n and what it applies to v's parts,
// false when the budget runs out.
func (g *costGraph) spend(n int, v any, budget *int) bool {
	if *budget--; *budget < 0 {
		return false
	}
	obj, _ := v.(map[string]any)
	arr, _ := v.([]any)
	for _, e := range g.edges[n] {
		switch {
		case e.kind == partSame:
			if !g.spend(e.to, v, budget) {
				return false
			}
		case e.kind == partMember && obj != nil:
			if m, ok := obj[e.name]; ok && !g.spend(e.to, m, budget) {
				return false
			}
		case e.kind == partMembers && obj != nil:
			for _, m := range obj {
				if !g.spend(e.to, m, budget) {
					return false
				}
			}
		case e.kind == partNames && obj != nil:
			for k := range obj {
				if !g.spend(e.to, k, budget) {
					return false
				}
			}
		case e.kind == partElement && e.index < len(arr):
			if !g.spend(e.to, arr[e.index], budget) {
				return false
			}
		case e.kind == partElements:
			for _, m := range arr {
				if !g.spend(e.to, m, budget) {
					return false
				}
			}
		}
	}
	return true
}

// countValues counts the values of inst, itself included.
func countValues(inst any) int {
	switch v := inst.(type) {
	case map[string]any:
		n := 1
		for _, m := range v {
			n += countValues(m)
		}
		return n
	case []any:
		n := 1
		for _, m := range v {
			n += countValues(m)
		}
		return n
	}
	return 1
}
