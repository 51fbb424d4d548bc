package pins

import (
	"math/big"
	"reflect"
)

// This file compares two input schemas (JSON Schema draft 2020-12, as MCP tools use) for what
// they accept. "Narrowed" is a whitelist: a change is input-schema-narrowed only when every
// difference is one the rules below prove accepts no instance the pinned schema refused;
// anything else, including every keyword the rules do not model, is input-schema-widened. What
// the schema says to its reader (descriptions, examples, …) is compared separately, in
// schematext.go: a change can be narrowed and text-changed at once.
//
// The rules rely on JSON Schema applying a schema's keywords as a conjunction, and they treat
// together the keywords that read each other: properties, patternProperties and
// additionalProperties (which keys additionalProperties governs); prefixItems and items (which
// positions items governs); contains, minContains and maxContains; if, then and else. Keywords
// whose meaning depends on the rest of the document ($ref, $dynamicRef, unevaluatedProperties,
// unevaluatedItems, which see the annotations of every adjacent and in-place subschema) make
// any change that is not text widened.

// kwRole is what a schema keyword's value is.
type kwRole uint8

const (
	kwUnknown      kwRole = iota // not a JSON Schema keyword: text for the reader, unknown to validation
	kwAnnotation                 // text or a flag for the reader; no effect on what is accepted
	kwSchema                     // one subschema
	kwSchemaList                 // an array of subschemas
	kwSchemaMap                  // member name → subschema
	kwItems                      // a subschema, or (before 2020-12) an array of subschemas
	kwDependencies               // draft 7 dependencies: member → subschema or array of names
	kwData                       // a value the validator reads (type, enum, bounds, pattern, …)
)

// schemaKeywords are the JSON Schema keywords of draft 2020-12, and those of earlier drafts a
// backend may still send, by role.
var schemaKeywords = map[string]kwRole{
	"title": kwAnnotation, "description": kwAnnotation, "$comment": kwAnnotation, "examples": kwAnnotation,
	"default": kwAnnotation, "deprecated": kwAnnotation, "readOnly": kwAnnotation, "writeOnly": kwAnnotation,

	"additionalProperties": kwSchema, "propertyNames": kwSchema, "contains": kwSchema, "not": kwSchema,
	"if": kwSchema, "then": kwSchema, "else": kwSchema, "unevaluatedProperties": kwSchema,
	"unevaluatedItems": kwSchema, "additionalItems": kwSchema, "contentSchema": kwSchema,

	"allOf": kwSchemaList, "anyOf": kwSchemaList, "oneOf": kwSchemaList, "prefixItems": kwSchemaList,
	"items": kwItems, "dependencies": kwDependencies,

	"properties": kwSchemaMap, "patternProperties": kwSchemaMap, "$defs": kwSchemaMap,
	"definitions": kwSchemaMap, "dependentSchemas": kwSchemaMap,

	"type": kwData, "enum": kwData, "const": kwData, "required": kwData, "dependentRequired": kwData,
	"pattern": kwData, "format": kwData, "multipleOf": kwData, "uniqueItems": kwData,
	"minimum": kwData, "maximum": kwData, "exclusiveMinimum": kwData, "exclusiveMaximum": kwData,
	"minLength": kwData, "maxLength": kwData, "minItems": kwData, "maxItems": kwData,
	"minProperties": kwData, "maxProperties": kwData, "minContains": kwData, "maxContains": kwData,
	"contentMediaType": kwData, "contentEncoding": kwData,
	"$schema": kwData, "$id": kwData, "$anchor": kwData, "$dynamicAnchor": kwData, "$vocabulary": kwData,
	"$ref": kwData, "$dynamicRef": kwData, "$recursiveRef": kwData, "$recursiveAnchor": kwData,
}

// nonLocal are the keywords whose effect depends on other parts of the document: with any of
// them anywhere, a change other than text is not proved narrower.
var nonLocal = map[string]bool{"$ref": true, "$dynamicRef": true, "$recursiveRef": true,
	"unevaluatedProperties": true, "unevaluatedItems": true}

var (
	lowerBounds = map[string]bool{"minimum": true, "exclusiveMinimum": true, "minLength": true, "minItems": true, "minProperties": true}
	upperBounds = map[string]bool{"maximum": true, "exclusiveMaximum": true, "maxLength": true, "maxItems": true, "maxProperties": true}
	// addOnly are assertions whose change cannot be compared: adding one narrows (a conjunct),
	// removing or changing one widens.
	addOnly = map[string]bool{"pattern": true, "format": true, "contentMediaType": true, "contentEncoding": true,
		"contentSchema": true, "dependencies": true, "additionalItems": true}
	// grouped keywords are compared with the keywords they read (schema's groups), not alone.
	grouped = map[string]bool{"properties": true, "patternProperties": true, "additionalProperties": true,
		"prefixItems": true, "items": true, "contains": true, "minContains": true, "maxContains": true,
		"if": true, "then": true, "else": true}
)

// inputSchema compares a pinned input schema with the current one.
func (d *delta) inputSchema(o, n any) {
	if schemaTextDiffers(o, n) {
		d.text = true
	}
	if structEqual(o, n, 0) {
		return
	}
	if hasNonLocal(o, 0) || hasNonLocal(n, 0) {
		d.widened = true
		return
	}
	d.schema(o, n, 0)
}

// schema records whether n accepts provably less than o (narrowed), or possibly more
// (widened). Equal schemas, and schemas that differ only in annotations, record nothing.
func (d *delta) schema(o, n any, depth int) {
	if structEqual(o, n, depth) {
		return
	}
	if depth > maxDepth {
		d.widened = true
		return
	}
	if b, ok := o.(bool); ok {
		if !b {
			d.widened = true // old accepted nothing; new differs
			return
		}
		o = map[string]any{}
	}
	if b, ok := n.(bool); ok {
		if !b {
			d.narrowed = true
			return
		}
		n = map[string]any{}
	}
	om, ok1 := o.(map[string]any)
	nm, ok2 := n.(map[string]any)
	if !ok1 || !ok2 {
		d.widened = true
		return
	}
	d.objectKeys(om, nm, depth)
	d.arrayItems(om, nm, depth)
	d.contains(om, nm, depth)
	d.conditional(om, nm, depth)
	for k := range union(om, nm) {
		ov, oin := om[k]
		nv, nin := nm[k]
		role, known := schemaKeywords[k]
		if grouped[k] || (known && role == kwAnnotation) || (oin == nin && kwEqual(k, ov, nv, depth+1)) {
			continue
		}
		d.keyword(k, ov, oin, nv, nin, depth)
	}
}

// keyword compares one keyword that is judged on its own.
func (d *delta) keyword(k string, ov any, oin bool, nv any, nin bool, depth int) {
	switch {
	case k == "type":
		d.types(ov, oin, nv, nin)
	case k == "enum":
		d.enum(ov, oin, nv, nin)
	case k == "const":
		var oa, na any
		if oin {
			oa = []any{ov}
		}
		if nin {
			na = []any{nv}
		}
		d.enum(oa, oin, na, nin)
	case k == "required":
		d.required(ov, nv)
	case k == "dependentRequired":
		d.dependentRequired(ov, nv)
	case lowerBounds[k], upperBounds[k]:
		d.bound(ov, oin, nv, nin, lowerBounds[k])
	case k == "multipleOf":
		d.multipleOf(ov, oin, nv, nin)
	case k == "uniqueItems":
		o, _ := ov.(bool)
		n, okn := nv.(bool)
		switch {
		case nin && !okn, o && !n:
			d.widened = true
		case !o && n:
			d.narrowed = true
		}
	case k == "allOf", k == "anyOf", k == "oneOf":
		d.applicators(k, ov, oin, nv, nin, depth)
	case k == "not":
		d.not(ov, oin, nv, nin, depth)
	case k == "propertyNames":
		d.schema(orTrue(ov, oin), orTrue(nv, nin), depth+1)
	case k == "dependentSchemas":
		d.schemaMap(ov, nv, depth)
	case addOnly[k] && !oin:
		d.narrowed = true
	default:
		// Removed or changed assertions, identifiers, $defs, unknown keywords: not provable.
		d.widened = true
	}
}

// objectKeys compares properties, patternProperties and additionalProperties together: which
// keys additionalProperties governs depends on the other two.
func (d *delta) objectKeys(om, nm map[string]any, depth int) {
	if !structEqual(om["patternProperties"], nm["patternProperties"], depth+1) {
		// Patterns are ECMA-262 regular expressions, and a key they start to match leaves
		// additionalProperties' rule: not compared.
		d.widened = true
		return
	}
	op, ok1 := om["properties"].(map[string]any)
	np, ok2 := nm["properties"].(map[string]any)
	if (om["properties"] != nil && !ok1) || (nm["properties"] != nil && !ok2) {
		d.widened = true
		return
	}
	nAdd, nAddIn := nm["additionalProperties"]
	for name, ns := range np {
		os, ok := op[name]
		if !ok {
			d.widened = true // a new property: a new argument the model is invited to send
			continue
		}
		d.schema(os, ns, depth+1)
	}
	_, patterns := nm["patternProperties"]
	for name := range op {
		if _, ok := np[name]; ok {
			continue
		}
		// A property no longer declared falls to patternProperties and additionalProperties:
		// refused only when no pattern could match it and additional properties are refused.
		if b, ok := nAdd.(bool); ok && nAddIn && !b && !patterns {
			d.narrowed = true
		} else {
			d.widened = true
		}
	}
	oa, oin := om["additionalProperties"]
	d.schema(orTrue(oa, oin), orTrue(nAdd, nAddIn), depth+1)
}

// arrayItems compares prefixItems and items together: items governs the positions after the
// prefix.
func (d *delta) arrayItems(om, nm map[string]any, depth int) {
	oi, oin := om["items"]
	ni, nin := nm["items"]
	_, oArr := oi.([]any)
	_, nArr := ni.([]any)
	if oArr || nArr {
		// items as an array (drafts before 2020-12) with additionalItems: not compared.
		if !structEqual(oi, ni, depth+1) || !structEqual(om["prefixItems"], nm["prefixItems"], depth+1) {
			d.widened = true
		}
		return
	}
	op, ok1 := schemaList(om["prefixItems"])
	np, ok2 := schemaList(nm["prefixItems"])
	if !ok1 || !ok2 {
		d.widened = true
		return
	}
	if len(op) != len(np) {
		// The prefix grew or shrank: positions move between prefixItems and items. Proved only
		// when items constrains nothing before and after, and the prefix only grew.
		if !isTrue(oi, oin) || !isTrue(ni, nin) || len(np) < len(op) {
			d.widened = true
			return
		}
		d.narrowed = true
	}
	for i := range min(len(op), len(np)) {
		d.schema(op[i], np[i], depth+1)
	}
	d.schema(orTrue(oi, oin), orTrue(ni, nin), depth+1)
}

// contains compares contains, minContains and maxContains together: an array must hold
// between minContains (default 1) and maxContains items matching contains; without contains,
// or with minContains 0 and no maxContains, nothing is asserted.
func (d *delta) contains(om, nm map[string]any, depth int) {
	// The counts compare by exact value (numbers.go); maxContains absent is unbounded.
	type rule struct {
		c        any
		on       bool
		min, max decimal
		bounded  bool // maxContains is present
	}
	read := func(m map[string]any) (rule, bool) {
		r := rule{min: decimal{digits: "1", exp: 1}}
		c, in := m["contains"]
		r.c, r.on = c, in
		for k, p := range map[string]*decimal{"minContains": &r.min, "maxContains": &r.max} {
			if v, ok := m[k]; ok {
				n, isNum := numberDecimal(v)
				if !isNum {
					return r, false
				}
				*p = n
			}
		}
		_, r.bounded = m["maxContains"]
		if r.min.cmp(decimal{}) <= 0 && !r.bounded {
			r.on = false // asserts nothing
		}
		return r, true
	}
	o, ok1 := read(om)
	n, ok2 := read(nm)
	same := structEqual(om["contains"], nm["contains"], depth+1) && reflect.DeepEqual(om["minContains"], nm["minContains"]) &&
		reflect.DeepEqual(om["maxContains"], nm["maxContains"])
	switch {
	case same:
	case !ok1 || !ok2:
		d.widened = true
	case !o.on && !n.on:
		// Neither asserts anything: equal.
	case !o.on:
		d.narrowed = true
	case !n.on, n.min.cmp(o.min) < 0, !n.bounded && o.bounded, n.bounded && o.bounded && n.max.cmp(o.max) > 0:
		d.widened = true
	case structEqual(o.c, n.c, depth+1):
		d.narrowed = true
	case !o.bounded:
		// A narrower contains matches fewer items: the minimum still holds for the old one.
		sub := delta{}
		sub.schema(o.c, n.c, depth+1)
		d.widened = d.widened || sub.widened
		d.narrowed = true
	default:
		d.widened = true
	}
}

// conditional compares if, then and else together: then and else apply only under an if.
func (d *delta) conditional(om, nm map[string]any, depth int) {
	oIf, oin := om["if"]
	nIf, nin := nm["if"]
	switch {
	case !oin && !nin:
		// then and else without if are ignored on both sides.
	case !oin:
		d.narrowed = true // a condition added: its branches now constrain
	case !nin || !structEqual(oIf, nIf, depth+1):
		d.widened = true // the condition went away or changed: its branches apply elsewhere
	default:
		ot, otIn := om["then"]
		nt, ntIn := nm["then"]
		d.schema(orTrue(ot, otIn), orTrue(nt, ntIn), depth+1)
		oe, oeIn := om["else"]
		ne, neIn := nm["else"]
		d.schema(orTrue(oe, oeIn), orTrue(ne, neIn), depth+1)
	}
}

// applicators compares allOf, anyOf or oneOf. Adding any of them adds a conjunct. Changed:
// allOf may gain branches or narrow each; anyOf may lose branches or narrow each; oneOf is not
// compared (narrowing one branch can make an instance that matched two match only one).
func (d *delta) applicators(k string, ov any, oin bool, nv any, nin bool, depth int) {
	switch {
	case !oin:
		d.narrowed = true
		return
	case !nin || k == "oneOf":
		d.widened = true
		return
	}
	o, ok1 := schemaList(ov)
	n, ok2 := schemaList(nv)
	if !ok1 || !ok2 {
		d.widened = true
		return
	}
	contained := func(small, big []any) bool {
		for _, s := range small {
			found := false
			for _, b := range big {
				if structEqual(s, b, depth+1) {
					found = true
					break
				}
			}
			if !found {
				return false
			}
		}
		return true
	}
	switch {
	case k == "allOf" && contained(o, n), k == "anyOf" && contained(n, o):
		d.narrowed = true
	case len(o) == len(n):
		for i := range o {
			d.schema(o[i], n[i], depth+1)
		}
	default:
		d.widened = true
	}
}

// not narrows when its schema widens: the comparison is reversed.
func (d *delta) not(ov any, oin bool, nv any, nin bool, depth int) {
	switch {
	case !oin:
		d.narrowed = true
	case !nin:
		d.widened = true
	default:
		rev := delta{}
		rev.schema(nv, ov, depth+1)
		if rev.widened {
			d.widened = true
		} else {
			d.narrowed = true
		}
	}
}

// schemaMap compares dependentSchemas: an added entry is a conjunct, a removed one widens.
func (d *delta) schemaMap(ov, nv any, depth int) {
	o, ok1 := ov.(map[string]any)
	n, ok2 := nv.(map[string]any)
	if (ov != nil && !ok1) || (nv != nil && !ok2) {
		d.widened = true
		return
	}
	for k, ns := range n {
		if os, ok := o[k]; ok {
			d.schema(os, ns, depth+1)
		} else {
			d.narrowed = true
		}
	}
	for k := range o {
		if _, ok := n[k]; !ok {
			d.widened = true
		}
	}
}

func (d *delta) dependentRequired(ov, nv any) {
	o, ok1 := ov.(map[string]any)
	n, ok2 := nv.(map[string]any)
	if (ov != nil && !ok1) || (nv != nil && !ok2) {
		d.widened = true
		return
	}
	for k := range union(o, n) {
		if !reflect.DeepEqual(o[k], n[k]) {
			d.required(o[k], n[k])
		}
	}
}

func (d *delta) multipleOf(ov any, oin bool, nv any, nin bool) {
	if d.addedOrRemoved(oin, nin) {
		return
	}
	// Every multiple of n is a multiple of o when n is an integer multiple of o, in exact
	// values (numbers.go): 0.3 is a multiple of 0.1, though not in doubles.
	if o, n, ok := multipleRats(ov, nv); ok && o.Sign() > 0 && n.Sign() > 0 && new(big.Rat).Quo(n, o).IsInt() {
		d.narrowed = true
		return
	}
	d.widened = true
}

// multipleRats is two multipleOf values as exact fractions; false when either is not a number
// or is too long to divide cheaply.
func multipleRats(ov, nv any) (o, n *big.Rat, ok bool) {
	od, ok1 := numberDecimal(ov)
	nd, ok2 := numberDecimal(nv)
	if !ok1 || !ok2 {
		return nil, nil, false
	}
	o, ok1 = od.rat()
	n, ok2 = nd.rat()
	return o, n, ok1 && ok2
}

func schemaList(v any) ([]any, bool) {
	if v == nil {
		return nil, true
	}
	l, ok := v.([]any)
	return l, ok
}

// isTrue reports whether a subschema accepts everything as written: absent, true or {}.
func isTrue(v any, in bool) bool {
	if !in {
		return true
	}
	switch v := v.(type) {
	case bool:
		return v
	case map[string]any:
		return len(v) == 0
	}
	return false
}

// structEqual reports whether two schemas are equal but for annotations (title, description,
// examples, …), which do not change what they accept. Values that are not schema objects are
// compared exactly.
func structEqual(a, b any, depth int) bool {
	am, ok1 := a.(map[string]any)
	bm, ok2 := b.(map[string]any)
	if !ok1 || !ok2 || depth > maxDepth {
		return reflect.DeepEqual(a, b)
	}
	for k := range union(am, bm) {
		av, ain := am[k]
		bv, bin := bm[k]
		if role, known := schemaKeywords[k]; known && role == kwAnnotation {
			continue
		}
		if ain != bin || !kwEqual(k, av, bv, depth+1) {
			return false
		}
	}
	return true
}

// kwEqual compares the values of keyword k: subschemas but for annotations, anything else
// exactly (an enum value or a const is data, whatever members it has).
func kwEqual(k string, a, b any, depth int) bool {
	switch schemaKeywords[k] {
	case kwSchema, kwItems:
		return structEqual(a, b, depth)
	case kwSchemaList, kwSchemaMap:
		return subschemasEqual(a, b, depth)
	}
	return reflect.DeepEqual(a, b)
}

func subschemasEqual(a, b any, depth int) bool {
	switch a := a.(type) {
	case []any:
		bl, ok := b.([]any)
		if !ok || len(a) != len(bl) {
			return false
		}
		for i := range a {
			if !structEqual(a[i], bl[i], depth) {
				return false
			}
		}
		return true
	case map[string]any:
		bm, ok := b.(map[string]any)
		if !ok || len(a) != len(bm) {
			return false
		}
		for k, av := range a {
			bv, ok := bm[k]
			if !ok || !structEqual(av, bv, depth) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

// hasNonLocal reports whether a nonLocal keyword appears anywhere in a schema, at any depth,
// member names of data values included (conservatively).
func hasNonLocal(v any, depth int) bool {
	if depth > maxDepth {
		return true
	}
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if nonLocal[k] || hasNonLocal(e, depth+1) {
				return true
			}
		}
	case []any:
		for _, e := range v {
			if hasNonLocal(e, depth+1) {
				return true
			}
		}
	}
	return false
}

// addedOrRemoved records an assertion added (narrowed: a conjunct) or removed (widened) and
// reports whether that was the change; false leaves a change of value to the caller.
func (d *delta) addedOrRemoved(oin, nin bool) bool {
	switch {
	case !nin:
		d.widened = true
		return true
	case !oin:
		d.narrowed = true
		return true
	}
	return false
}
