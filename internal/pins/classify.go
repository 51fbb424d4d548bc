package pins

import (
	"reflect"
	"strings"
)

// Class names one way a definition differs from its pin. Classes are data: the action taken
// (see Config) is looked up per class, and tests assert them.
type Class string

// The drift classes, in the order Set.Classes lists them.
const (
	// ClassNew: the backend lists an item that has no pin.
	ClassNew Class = "new"
	// ClassRemoved: a pinned item is no longer listed. The pin stays, so an item that comes
	// back changed is drift, not new.
	ClassRemoved Class = "removed"
	// ClassUnverified: the item's pin cannot be read: the shared store does not answer and
	// this replica has not read the backend's pins before, or the stored pins do not open
	// (tampered with, or sealed under a key no longer configured). Always blocked: a call is
	// refused as unavailable (retryable), never forwarded unverified.
	ClassUnverified Class = "unverified"
	// ClassShadows: a tool or prompt that is not pinned nearly duplicates a pinned one of its
	// kind of another backend, by name, shown name or description (Shadows): a clone that could
	// take the original's calls or the user's choice, or rank above it in search. The verdict
	// names the item it shadows.
	ClassShadows Class = "shadows"
	// ClassInvisible: the current definition contains invisible or bidirectional code points
	// (see Scan). Reported whatever the pin says: pinning such a definition does not make it
	// acceptable.
	ClassInvisible Class = "invisible-characters"
	// ClassInputSchemaWidened: the input schema (or a prompt's argument list) may now accept
	// something it did not: a new property or argument, fewer required, looser types, enums or
	// bounds, additionalProperties loosened, or any change the classifier cannot prove to be
	// narrowing.
	ClassInputSchemaWidened Class = "input-schema-widened"
	// ClassInputSchemaNarrowed: the input schema now accepts less, provably.
	ClassInputSchemaNarrowed Class = "input-schema-narrowed"
	// ClassDestructiveHintCleared: annotations.destructiveHint went from true (the default)
	// to false: clients may stop confirming calls.
	ClassDestructiveHintCleared Class = "destructive-hint-cleared"
	// ClassReadOnlyHintSet: annotations.readOnlyHint went from false (the default) to true.
	ClassReadOnlyHintSet Class = "read-only-hint-set"
	// ClassIdempotentHintSet: annotations.idempotentHint went from false (the default) to
	// true: clients may retry calls, repeating their effects.
	ClassIdempotentHintSet Class = "idempotent-hint-set"
	// ClassOpenWorldHintSet: annotations.openWorldHint went from false to true (the default):
	// the tool now says it reaches beyond the closed set of things that were approved.
	ClassOpenWorldHintSet Class = "open-world-hint-set"
	// ClassUIChanged: the MCP App part of the definition differs (SEP-1865): _meta.ui of a tool
	// or resource template (the UI resource it renders, who may call it, and a template's CSP
	// domains, permissions and sandbox domain) or the deprecated _meta["ui/resourceUri"]. The
	// app may now load other code, reach other origins or be offered to the model.
	ClassUIChanged Class = "ui-changed"
	// ClassAnnotationsChanged: annotations differ in any way (the dangerous directions above
	// are reported in addition).
	ClassAnnotationsChanged Class = "annotations-changed"
	// ClassTextChanged: text the model or user reads changed: the description or title (also
	// a display title in annotations, a template's name), the server instructions, or a
	// description, title, example or default inside the input schema or a prompt argument.
	ClassTextChanged Class = "text-changed"
	// ClassOutputSchemaChanged: the output schema differs in any way.
	ClassOutputSchemaChanged Class = "output-schema-changed"
	// ClassIconsChanged: the icons differ.
	ClassIconsChanged Class = "icons-changed"
	// ClassOtherChanged: the fingerprint differs in a way none of the classes above names (a
	// template's mimeType changed to another media type, the order of a prompt's arguments, a
	// malformed member).
	ClassOtherChanged Class = "other-changed"
)

// numClasses is how many classes there are.
const numClasses = 17

// AllClasses lists every Class in a fixed order, the most severe first: an array returned by
// value, so no caller can change the list for another.
func AllClasses() [numClasses]Class {
	return [numClasses]Class{
		ClassNew, ClassRemoved, ClassUnverified, ClassShadows, ClassInvisible, ClassInputSchemaWidened, ClassInputSchemaNarrowed,
		ClassDestructiveHintCleared, ClassReadOnlyHintSet, ClassIdempotentHintSet, ClassOpenWorldHintSet, ClassUIChanged,
		ClassAnnotationsChanged, ClassTextChanged, ClassOutputSchemaChanged, ClassIconsChanged, ClassOtherChanged,
	}
}

var classBit = func() map[Class]Set {
	m := make(map[Class]Set, numClasses)
	for i, c := range AllClasses() {
		m[c] = 1 << i
	}
	return m
}()

// Valid reports whether c is one of AllClasses.
func (c Class) Valid() bool { _, ok := classBit[c]; return ok }

// Set is a set of classes.
type Set uint32

// Has reports whether c is in s.
func (s Set) Has(c Class) bool { return s&classBit[c] != 0 }

// Add returns s with c added.
func (s Set) Add(c Class) Set { return s | classBit[c] }

// Empty reports whether s holds no class.
func (s Set) Empty() bool { return s == 0 }

// Classes lists the members in AllClasses order.
func (s Set) Classes() []Class {
	var out []Class
	for _, c := range AllClasses() {
		if s.Has(c) {
			out = append(out, c)
		}
	}
	return out
}

func (s Set) String() string {
	cs := s.Classes()
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = string(c)
	}
	return strings.Join(parts, ",")
}

// Classify compares an item's pin with its current definition (either may be nil: no pin, or
// no longer listed) and returns how it drifted. Both must be of the same kind and key, and built
// by this package (FromJSON, FromInstructions, FromCanonical).
//
// Identical definitions give the empty set, except that ClassInvisible is reported whenever
// the current definition contains invisible code points. Differing fingerprints always give at
// least one class.
func Classify(pinned, current *Definition) Set {
	var s Set
	if current != nil && len(current.Findings) > 0 {
		s = s.Add(ClassInvisible)
	}
	switch {
	case pinned == nil && current == nil:
		return s
	case pinned == nil:
		return s.Add(ClassNew)
	case current == nil:
		return s.Add(ClassRemoved)
	case pinned.Fingerprint == current.Fingerprint && pinned.Kind == current.Kind:
		return s
	}
	var d delta
	if pinned.Kind != current.Kind {
		d.other = true
	} else if pinned.Kind == KindInstructions {
		d.text = !reflect.DeepEqual(pinned.Value, current.Value)
	} else {
		o, _ := pinned.Value.(map[string]any)
		n, _ := current.Value.(map[string]any)
		d.item(current.Kind, o, n)
	}
	s |= d.set()
	if s&^classBit[ClassInvisible] == 0 {
		s = s.Add(ClassOtherChanged)
	}
	return s
}

// delta accumulates what a comparison found.
type delta struct {
	widened, narrowed, text, output, icons, other, ui         bool
	annotations, destructive, readOnly, idempotent, openWorld bool
}

func (d *delta) set() Set {
	var s Set
	for _, x := range []struct {
		on bool
		c  Class
	}{
		{d.widened, ClassInputSchemaWidened}, {d.narrowed, ClassInputSchemaNarrowed}, {d.text, ClassTextChanged},
		{d.output, ClassOutputSchemaChanged}, {d.icons, ClassIconsChanged}, {d.other, ClassOtherChanged},
		{d.annotations, ClassAnnotationsChanged}, {d.destructive, ClassDestructiveHintCleared},
		{d.readOnly, ClassReadOnlyHintSet}, {d.idempotent, ClassIdempotentHintSet}, {d.openWorld, ClassOpenWorldHintSet},
		{d.ui, ClassUIChanged},
	} {
		if x.on {
			s = s.Add(x.c)
		}
	}
	return s
}

func (d *delta) item(kind Kind, o, n map[string]any) {
	if uiMetaKinds[kind] && !reflect.DeepEqual(o["_meta"], n["_meta"]) {
		d.ui = true // only its MCP App members are covered (uiMeta)
	}
	for _, f := range coveredFields[kind] {
		ov, oin := o[f]
		nv, nin := n[f]
		if oin == nin && reflect.DeepEqual(ov, nv) {
			continue
		}
		switch f {
		case "title", "description":
			d.text = true
		case "name":
			if kind == KindResourceTemplate || kind == KindUIResource {
				d.text = true // a template's or resource's name is its display name
			} else {
				d.other = true
			}
		case "inputSchema":
			d.inputSchema(orTrue(ov, oin), orTrue(nv, nin))
		case "outputSchema":
			d.output = true
		case "annotations":
			d.annotationsDiff(ov, nv)
		case "icons":
			d.icons = true
			d.text = d.text || iconsText(ov, nv)
		case "arguments":
			d.arguments(ov, nv)
		case "mimeType":
			// A media type names a format; anything else there is read as text
			// ("text/plain. IMPORTANT: …", a quoted parameter).
			if str, isStr := nv.(string); (isStr && !mediaType(str)) || (!isStr && holdsText(nv)) {
				d.text = true
			} else {
				d.other = true
			}
		default:
			d.other = true
		}
	}
}

// mediaType reports whether s is a media type in the form RFC 6838 registers them: type and
// subtype, each a restricted name, and parameters whose names and values are restricted names
// too ("text/plain; charset=utf-8", "text/html;profile=mcp-app"). Quoted parameter values and
// spaces inside a part are not accepted: they carry sentences.
func mediaType(s string) bool {
	typ, params, hasParams := strings.Cut(s, ";")
	top, sub, ok := strings.Cut(strings.TrimRight(typ, " "), "/")
	if !ok || !restrictedName(top) || !restrictedName(sub) {
		return false
	}
	if !hasParams {
		return true
	}
	for p := range strings.SplitSeq(params, ";") {
		name, value, ok := strings.Cut(strings.Trim(p, " "), "=")
		if !ok || !restrictedName(name) || !restrictedName(value) {
			return false
		}
	}
	return true
}

// restrictedName reports whether s is an RFC 6838 restricted-name: 1 to 127 characters, a
// letter or digit first, then letters, digits and !#$&-^_.+ only.
func restrictedName(s string) bool {
	if s == "" || len(s) > 127 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
		if !alnum && (i == 0 || !strings.ContainsRune("!#$&-^_.+", rune(c))) {
			return false
		}
	}
	return true
}

func orTrue(v any, present bool) any {
	if !present {
		return true
	}
	return v
}

// hintDefaults are the values the specification gives an absent tool annotation
// (https://modelcontextprotocol.io/specification/2026-07-28/server/tools).
var hintDefaults = map[string]bool{"readOnlyHint": false, "destructiveHint": true, "idempotentHint": false, "openWorldHint": true}

// notText reports whether v, the value of annotation member k, is what the specification
// defines there, and so no text for the reader: a hint's boolean (or null, its default), a
// resource's audience of roles, its lastModified date. Any other value of those members (a
// hint or an audience spelling out a sentence) is judged as every other member is, by whether
// it holds text; a priority is a number, which holds none.
func notText(k string, v any) bool {
	switch k {
	case "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint":
		_, isBool := v.(bool)
		return isBool || v == nil
	case "audience":
		roles, ok := v.([]any)
		for _, r := range roles {
			ok = ok && (r == "user" || r == "assistant")
		}
		return ok
	case "lastModified":
		// An ISO 8601 date or time: digits and the few separators it spells, no words.
		s, ok := v.(string)
		return ok && len(s) <= 40 && strings.Trim(s, "0123456789-+:.,TZtz ") == ""
	}
	return false
}

func (d *delta) annotationsDiff(ov, nv any) {
	d.annotations = true
	o, _ := ov.(map[string]any)
	n, isObj := nv.(map[string]any)
	if !isObj && holdsText(nv) {
		// Not an object ("annotations": "IMPORTANT: …"): no client reads a hint from it, but
		// whoever reads the definition reads its text.
		d.text = true
	}
	hint := func(m map[string]any, k string) bool {
		if b, ok := m[k].(bool); ok {
			return b
		}
		return hintDefaults[k]
	}
	// A tool that said destructiveHint: true and no longer says so is cleared whatever it says
	// instead: clients and the gateway's own confirmation (server.confirmDestructiveTools) act
	// on an explicit true, and many read an absent hint as false.
	explicitly := func(m map[string]any) bool { b, _ := m["destructiveHint"].(bool); return b }
	if (hint(o, "destructiveHint") && !hint(n, "destructiveHint")) || (explicitly(o) && !explicitly(n)) ||
		turns(o, n, "destructiveHint", false) {
		d.destructive = true
	}
	d.readOnly = turns(o, n, "readOnlyHint", true)
	d.idempotent = turns(o, n, "idempotentHint", true)
	d.openWorld = turns(o, n, "openWorldHint", true)
	// Any other member that carries text (the display title, a vendor's note, a hint or an
	// audience holding a sentence) is text for the reader when it is added or changed.
	for k, v := range n {
		if notText(k, v) || reflect.DeepEqual(o[k], v) {
			continue
		}
		if holdsText(v) {
			d.text = true
		}
	}
	if _, ok := o["title"]; ok && n["title"] == nil {
		d.text = true // the display title went away: the reader now sees the name instead
	}
}

// turns reports whether hint k changed so that it may now read as to where it may not have
// before. A value that is not a boolean ("true", 1, "yes") may read as either: lax decoders
// (pydantic, the Python SDK's) turn it into true or false by their own rules. Absent or null
// is the specification's default.
func turns(o, n map[string]any, k string, to bool) bool {
	if reflect.DeepEqual(o[k], n[k]) {
		return false
	}
	mayBe := func(m map[string]any, want bool) bool {
		switch v := m[k].(type) {
		case nil:
			return hintDefaults[k] == want
		case bool:
			return v == want
		}
		return true
	}
	return mayBe(o, !to) && mayBe(n, to)
}

// arguments compares two prompt argument lists, which play the role of an input schema.
func (d *delta) arguments(ov, nv any) {
	index := func(v any) (map[string]map[string]any, []string, bool) {
		if v == nil {
			return map[string]map[string]any{}, nil, true
		}
		arr, ok := v.([]any)
		if !ok {
			return nil, nil, false
		}
		m := make(map[string]map[string]any, len(arr))
		var order []string
		for _, e := range arr {
			obj, ok := e.(map[string]any)
			name, _ := obj["name"].(string)
			if !ok || name == "" {
				return nil, nil, false
			}
			if _, dup := m[name]; dup {
				return nil, nil, false
			}
			m[name] = obj
			order = append(order, name)
		}
		return m, order, true
	}
	o, oOrder, ok1 := index(ov)
	n, nOrder, ok2 := index(nv)
	if !ok1 || !ok2 {
		d.widened = true
		return
	}
	required := func(a map[string]any) bool { b, _ := a["required"].(bool); return b }
	for name, na := range n {
		oa, ok := o[name]
		if !ok {
			d.widened = true
			if required(na) {
				d.narrowed = true
			}
			continue
		}
		if required(oa) && !required(na) {
			d.widened = true
		}
		if !required(oa) && required(na) {
			d.narrowed = true
		}
		for k := range union(oa, na) {
			if reflect.DeepEqual(oa[k], na[k]) {
				continue
			}
			// Whatever member it is, a new value holding a string is text for the reader:
			// "required": "IMPORTANT: …" is read by no client as a flag, but shown as sent.
			if k != "name" && holdsText(na[k]) {
				d.text = true
			}
			switch k {
			case "required", "name", "title", "description":
			default:
				d.widened = true
			}
		}
	}
	for name := range o {
		if _, ok := n[name]; !ok {
			d.narrowed = true
		}
	}
	if !reflect.DeepEqual(oOrder, nOrder) && len(o) == len(n) {
		d.other = true
	}
}

// iconsText reports whether the icons nv hold text that ov did not. An icon is an image, its
// src, with the mimeType, sizes and theme the specification defines for it; a string anywhere
// else in it (a note member, a sentence in sizes or theme, a mimeType that is no media type) is
// read as sent by whoever reads the definition, and is text.
func iconsText(ov, nv any) bool {
	pinned := map[string]bool{}
	allStrings(ov, pinned, 0)
	text := map[string]bool{}
	icons, isList := nv.([]any)
	if !isList {
		allStrings(nv, text, 0)
	}
	for _, icon := range icons {
		obj, isObj := icon.(map[string]any)
		if !isObj {
			allStrings(icon, text, 0)
		}
		for k, v := range obj {
			if !iconMember(k, v) {
				text[k] = true
				allStrings(v, text, 0)
			}
		}
	}
	for s := range text {
		if !pinned[s] {
			return true
		}
	}
	return false
}

// iconMember reports whether v is what the specification defines for an icon's member k: any
// src (a URL or data URI the host loads as an image), a media type, sizes such as "48x48" or
// "any", a light or dark theme.
func iconMember(k string, v any) bool {
	switch k {
	case "src":
		return true
	case "mimeType":
		s, ok := v.(string)
		return ok && mediaType(s)
	case "theme":
		return v == "light" || v == "dark"
	case "sizes":
		sizes, ok := v.([]any)
		for _, e := range sizes {
			s, _ := e.(string)
			w, h, cut := strings.Cut(s, "x")
			ok = ok && (s == "any" || (cut && digits(w) && digits(h)))
		}
		return ok
	}
	return false
}

// digits reports whether s is one or more ASCII digits.
func digits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// holdsText reports whether v is or holds a string (a member name included).
func holdsText(v any) bool {
	strs := map[string]bool{}
	allStrings(v, strs, 0)
	return len(strs) > 0
}

func union(a, b map[string]any) map[string]bool {
	u := make(map[string]bool, len(a)+len(b))
	for k := range a {
		u[k] = true
	}
	for k := range b {
		u[k] = true
	}
	return u
}
