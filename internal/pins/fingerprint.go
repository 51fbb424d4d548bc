package pins

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mcp-gateway/gateway/internal/resuri"
)

// Kind is what a pinned item is.
type Kind string

// The kinds of item a backend lists that carry instructions for the model.
const (
	KindTool             Kind = "tool"
	KindPrompt           Kind = "prompt"
	KindResourceTemplate Kind = "resourceTemplate"
	KindInstructions     Kind = "instructions"
	// KindUIResource is an MCP App's UI resource (a resources/list entry whose URI starts with
	// ui://): the host renders its HTML in a sandbox built from its _meta.ui (CSP domains,
	// permissions, sandbox domain), so those are instructions to the host. Other resources are
	// data and are not pinned.
	KindUIResource Kind = "uiResource"
)

// numKinds is how many kinds there are.
const numKinds = 5

// Kinds lists every Kind in the order the lock file and the diff print them: an array returned
// by value, so no caller can change the list for another.
func Kinds() [numKinds]Kind {
	return [numKinds]Kind{KindInstructions, KindTool, KindPrompt, KindResourceTemplate, KindUIResource}
}

// Valid reports whether k is one of Kinds.
func (k Kind) Valid() bool {
	ks := Kinds()
	return slices.Contains(ks[:], k)
}

// coveredFields are the members of a listed definition that a fingerprint covers, per kind:
// exactly what the MCP specification defines as the item's own description for the model and
// the user (https://modelcontextprotocol.io/specification/2026-07-28/server/tools,
// …/server/prompts, …/server/resources):
//
//   - tool: name, title, description, inputSchema, outputSchema, annotations, icons;
//   - prompt: name, title, description, arguments, icons;
//   - resource template: uriTemplate, name, title, description, mimeType, annotations, icons.
//
// Excluded on purpose:
//
//   - _meta: reserved by the specification for protocol- and implementation-level metadata
//     (trace context, SDK or vendor extensions, values a gateway or proxy adds or rewrites on
//     the way). Backends and intermediaries change it without changing what the item is, so
//     covering it would make pins drift on every such change and train operators to re-pin
//     without reading. Except MCP Apps' members (uiMetaKeys), which hosts obey: a tool's or
//     resource template's _meta.ui and the deprecated flat _meta["ui/resourceUri"] are covered
//     as a "_meta" member holding only them, present only when the item has one, so the
//     fingerprint of every item without them is what it always was.
//   - any member the specification does not define: it is not part of the contract a client
//     interprets, and an unknown member added by a newer protocol version must not make every
//     pin drift at once. Adding it here is a deliberate, reviewed change of the fingerprint.
//
// Server instructions (the initialize result's instructions string) are fingerprinted as one
// JSON string.
var coveredFields = map[Kind][]string{
	KindTool:             {"name", "title", "description", "inputSchema", "outputSchema", "annotations", "icons"},
	KindPrompt:           {"name", "title", "description", "arguments", "icons"},
	KindResourceTemplate: {"uriTemplate", "name", "title", "description", "mimeType", "annotations", "icons"},
	KindUIResource:       {"uri", "name", "title", "description", "mimeType", "annotations", "icons"},
}

// uiMetaKeys are the members of _meta a fingerprint covers (MCP Apps, SEP-1865, ext-apps
// specification 2026-01-26): _meta.ui (a tool's resourceUri and visibility; a UI resource's or
// resource template's csp, permissions, domain and prefersBorder) and the deprecated flat
// "ui/resourceUri". Hosts act on them: which HTML they render, which origins it may reach, who
// may call the tool.
var uiMetaKeys = []string{"ui", "ui/resourceUri"}

// uiMetaKinds are the kinds whose fingerprint covers uiMetaKeys.
var uiMetaKinds = map[Kind]bool{KindTool: true, KindResourceTemplate: true, KindUIResource: true}

// uiMeta projects a _meta value onto uiMetaKeys; nil when it holds none of them (or is not an
// object).
func uiMeta(meta any) map[string]any {
	m, _ := meta.(map[string]any)
	var out map[string]any
	for _, k := range uiMetaKeys {
		if v, ok := m[k]; ok {
			if out == nil {
				out = make(map[string]any, len(uiMetaKeys))
			}
			out[k] = v
		}
	}
	return out
}

// CoveredFields returns the members a fingerprint of kind covers (nil for instructions, which
// are one string).
func CoveredFields(kind Kind) []string {
	return append([]string(nil), coveredFields[kind]...)
}

// keyField is the member that identifies an item of kind within its backend's list.
func keyField(kind Kind) string {
	switch kind {
	case KindResourceTemplate:
		return "uriTemplate"
	case KindUIResource:
		return "uri"
	}
	return "name"
}

// ItemKey is the key under which an item of kind whose key member reads listed is pinned,
// looked up and named: a resource template's or UI resource's URI in its normal form
// (internal/resuri), which is the name the gateway lists it under, forwards and judges reads
// by, whatever spelling its backend lists (an upper-case host, a percent-encoded unreserved
// character); listed itself for other kinds, and for a URI that has no normal form (the
// gateway does not list it). The canonical text keeps the spelling the backend listed: that is
// what the fingerprint covers.
func ItemKey(kind Kind, listed string) string {
	if kind != KindResourceTemplate && kind != KindUIResource {
		return listed
	}
	normalize := resuri.Normalize
	if strings.IndexByte(listed, '{') >= 0 {
		normalize = resuri.NormalizeTemplate
	}
	if n, err := normalize(listed); err == nil {
		return n
	}
	return listed
}

// Definition is one item reduced to the members its fingerprint covers.
type Definition struct {
	Kind Kind
	// Key identifies the item in its backend's list: the name of a tool or prompt, the
	// uriTemplate of a resource template, "" for the instructions.
	Key string
	// Value is the projected definition in the package's value model: a map[string]any of the
	// covered members for items, a string for instructions.
	Value any
	// Canonical is the RFC 8785 form of Value; Fingerprint its SHA-256 in lower-case hex.
	Canonical   []byte
	Fingerprint string
	// Findings are the invisible code points in Value (see Scan), found once when the
	// definition is built so that comparing it with its pin does not scan it again.
	Findings []Finding
}

// FromJSON projects one listed item (the JSON object a backend sent in tools/list,
// prompts/list or resources/templates/list) onto the covered members and fingerprints it.
// The item must be a JSON object whose key member is a non-empty string; it is parsed with the
// canonicaliser's refusals, so a definition with duplicate members or invalid UTF-8 is an
// error, never a fingerprint; so is one with another spelling of a covered member
// (spellingVariants).
func FromJSON(kind Kind, item json.RawMessage) (*Definition, error) {
	fields, ok := coveredFields[kind]
	if !ok {
		return nil, fmt.Errorf("pins: kind %q has no JSON object form", kind)
	}
	v, err := Parse(item)
	if err != nil {
		return nil, err
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("pins: %s definition is not a JSON object", kind)
	}
	key, _ := obj[keyField(kind)].(string)
	if key == "" {
		return nil, fmt.Errorf("pins: %s definition has no %s", kind, keyField(kind))
	}
	key = ItemKey(kind, key)
	if err := spellingVariants(kind, obj); err != nil {
		return nil, err
	}
	proj := make(map[string]any, len(fields)+1)
	for _, f := range fields {
		if fv, ok := obj[f]; ok {
			proj[f] = fv
		}
	}
	if m := uiMeta(obj["_meta"]); m != nil && uiMetaKinds[kind] {
		proj["_meta"] = m
	}
	return newDefinition(kind, key, proj)
}

// Text returns the title and description members of an item's definition ("" when absent or
// not strings), as a page that shows the pinned definition of a tool renders them.
func (d *Definition) Text() (title, description string) {
	obj, _ := d.Value.(map[string]any)
	title, _ = obj["title"].(string)
	description, _ = obj["description"].(string)
	return title, description
}

// FromInstructions fingerprints a server's instructions string.
func FromInstructions(s string) (*Definition, error) {
	return newDefinition(KindInstructions, "", s)
}

func newDefinition(kind Kind, key string, v any) (*Definition, error) {
	c, err := Encode(v)
	if err != nil {
		return nil, err
	}
	return &Definition{Kind: kind, Key: key, Value: v, Canonical: c, Fingerprint: Fingerprint(c), Findings: Scan(v)}, nil
}

// Fingerprint is the SHA-256 of canonical bytes in lower-case hex.
func Fingerprint(canonical []byte) string {
	sum := sha256.Sum256(canonical)
	return hex.EncodeToString(sum[:])
}

// FromCanonical rebuilds a Definition from its canonical text, as the lock file stores it. The
// text must be exactly canonical (re-canonicalising it gives the same bytes), of the kind's
// shape, contain only covered members, and carry key as its key member.
func FromCanonical(kind Kind, key string, canonical []byte) (*Definition, error) {
	c, err := Canonicalize(canonical)
	if err != nil {
		return nil, err
	}
	if string(c) != string(canonical) {
		return nil, fmt.Errorf("pins: text is not in canonical form")
	}
	if kind == KindInstructions {
		s, ok := mustParse(c).(string)
		if !ok {
			return nil, fmt.Errorf("pins: instructions are not a JSON string")
		}
		return FromInstructions(s)
	}
	fields, ok := coveredFields[kind]
	if !ok {
		return nil, fmt.Errorf("pins: unknown kind %q", kind)
	}
	obj, ok := mustParse(c).(map[string]any)
	if !ok {
		return nil, fmt.Errorf("pins: %s definition is not a JSON object", kind)
	}
	allowed := map[string]bool{}
	for _, f := range fields {
		allowed[f] = true
	}
	for k, v := range obj {
		if k == "_meta" && uiMetaKinds[kind] {
			if m, ok := v.(map[string]any); !ok || len(m) == 0 || len(uiMeta(m)) != len(m) {
				return nil, fmt.Errorf("pins: %s _meta holds members a fingerprint does not cover", kind)
			}
			continue
		}
		if !allowed[k] {
			return nil, fmt.Errorf("pins: member %q is not covered by a %s fingerprint", k, kind)
		}
	}
	if got, _ := obj[keyField(kind)].(string); got == "" || ItemKey(kind, got) != key {
		return nil, fmt.Errorf("pins: %s %q: canonical text names %q, pinned as %q", kind, key, got, ItemKey(kind, got))
	}
	return newDefinition(kind, key, obj)
}

func mustParse(c []byte) any {
	v, err := Parse(c)
	if err != nil {
		panic("pins: canonical text does not parse: " + err.Error())
	}
	return v
}
