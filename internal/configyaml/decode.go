package configyaml

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/mcp-gateway/gateway/internal/configerr"
)

// Options tune Decode and Schema for the types whose Go kind says too little.
type Options struct {
	// Expect says, per type, what a value must look like ("a secret: {file: PATH}, {env: NAME}
	// or {value: …}"), in place of what Decode derives from the type.
	Expect map[reflect.Type]string
}

// Lines maps each key path the file sets to the line it is set on.
type Lines map[string]int

// Decoded is what Decode learnt of the file besides the values.
type Decoded struct {
	// Lines locates every key path the file sets.
	Lines Lines
	// Unread are the blocks (key paths; "" for the whole file) whose settings were not all read
	// because of a problem Decode reported: a problem found later inside one of them may be a
	// consequence (a misspelt url read as no url at all), and is better left unsaid.
	Unread []string
	// Empty is a file with nothing written in it: no document, or documents with nothing but
	// comments ("~" and "null" are written; they are not empty).
	Empty bool
}

// Covers reports whether path lies in a block that was not all read.
func (d *Decoded) Covers(path string) bool {
	for _, u := range d.Unread {
		if u == "" || path == u || strings.HasPrefix(path, u+".") || strings.HasPrefix(path, u+"[") {
			return true
		}
	}
	return false
}

// Decode reads the one YAML document in data into v, a pointer to a struct, after checking it
// against v's type: every key known (inside list entries and inlined blocks too, with the
// nearest known key suggested for one that is not), every value of the expected shape and type,
// no key twice. It reports every problem at once, each a *configerr.Error with its key path,
// line and column, and what was expected; no message quotes a value from the file, which may be
// a secret. It returns where each key path is set, to locate later problems, and, when it
// reports problems, still reads every value it can into v, so that the rest of the
// configuration can be checked in the same pass (Decoded.Unread says what may be missing).
// When the file is not YAML at all, it returns a nil *Decoded.
func Decode(data []byte, v any, opts Options) (*Decoded, error) {
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			return &Decoded{Lines: Lines{}, Empty: true}, nil // an empty file sets nothing
		}
		return nil, syntaxError(err, data)
	}
	if err := onlyEmptyAfter(dec); err != nil {
		return nil, err
	}
	w := walker{opts: opts, lines: Lines{}, root: reflect.TypeOf(v).Elem()}
	w.walk(&root, w.root, "")
	d := &Decoded{Lines: w.lines, Unread: w.unread, Empty: emptyDocument(&root)}
	err := root.Decode(v) // with problems, yaml reads every value it can
	if len(w.errs) > 0 {
		return d, errors.Join(w.errs...)
	}
	if err != nil {
		// The walk checked every value; yaml's own message would quote it.
		return nil, &configerr.Error{Err: errors.New("the file does not decode into the configuration")}
	}
	return d, nil
}

// yamlLine finds the line yaml's syntax errors name; unknownAnchor is the one that names none.
var (
	yamlLine      = regexp.MustCompile(`^yaml: line (\d+): `)
	unknownAnchor = regexp.MustCompile(`^yaml: unknown anchor '([^']*)' referenced$`)
)

// syntaxError reports a file that is not YAML. yaml's syntax messages describe the structure
// ("did not find expected key"), not values.
func syntaxError(err error, data []byte) error {
	msg := err.Error()
	line := 0
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = msg[len(m[0]):]
	}
	if m := unknownAnchor.FindStringSubmatch(msg); m != nil {
		line = aliasLine(data, m[1])
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	return &configerr.Error{Line: line, Err: fmt.Errorf("not valid YAML: %s", msg)}
}

// aliasLine is the line of the first alias *name in data (0 when not found): the place an
// alias to an anchor never defined is used.
func aliasLine(data []byte, name string) int {
	alias := regexp.MustCompile(`(^|[\s\[{,:])\*` + regexp.QuoteMeta(name) + `($|[\s\]},])`)
	for i, l := range strings.Split(string(data), "\n") {
		if alias.MatchString(l) {
			return i + 1
		}
	}
	return 0
}

type walker struct {
	opts   Options
	root   reflect.Type
	lines  Lines
	errs   []error
	unread []string
}

// fail reports a problem at path; unread is the block it leaves not all read.
func (w *walker) fail(n *yaml.Node, path, unread, format string, args ...any) {
	w.errs = append(w.errs, &configerr.Error{Path: path, Line: n.Line, Column: n.Column, Err: fmt.Errorf(format, args...)})
	w.unread = append(w.unread, unread)
}

// walk checks n against t at path and records the lines of the keys it sets.
func (w *walker) walk(n *yaml.Node, t reflect.Type, path string) {
	for n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if isNull(n) {
		return // an empty value leaves the setting at its default
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case selfDecoding(t):
		w.leaf(n, t, path)
	case t.Kind() == reflect.Struct && t != reflect.TypeFor[time.Time]():
		if w.shape(n, yaml.MappingNode, t, path) {
			w.structure(n, t, path)
		}
	case t.Kind() == reflect.Map:
		if w.shape(n, yaml.MappingNode, t, path) {
			w.mapping(n, t, path)
		}
	case t.Kind() == reflect.Slice || t.Kind() == reflect.Array:
		if w.shape(n, yaml.SequenceNode, t, path) {
			for i, item := range n.Content {
				p := fmt.Sprintf("%s[%d]", path, i)
				w.lines[p] = item.Line
				if isNull(item) {
					// yaml drops an empty entry or reads it as one with nothing set: a "- "
					// line left behind when its settings were removed, or a value not written.
					w.fail(item, p, path, "an empty entry: give it its settings, or remove the line")
					continue
				}
				w.walk(item, t.Elem(), p)
			}
		}
	case t.Kind() == reflect.Interface:
	default:
		if w.shape(n, yaml.ScalarNode, t, path) {
			w.leaf(n, t, path)
		}
	}
}

// shape checks that n is a node of kind want, reporting what was expected otherwise.
func (w *walker) shape(n *yaml.Node, want yaml.Kind, t reflect.Type, path string) bool {
	if n.Kind == want {
		return true
	}
	w.fail(n, path, path, "expected %s, got %s", w.expect(t), nodeKind(n))
	return false
}

// leaf decodes a scalar (or a self-decoding value) on its own to check its type.
func (w *walker) leaf(n *yaml.Node, t reflect.Type, path string) {
	if wholeKind(t) && (n.ShortTag() == "!!float" || n.ShortTag() == "!!int") {
		w.whole(n, t, path)
		return
	}
	if err := n.Decode(reflect.New(t).Interface()); err != nil {
		if t == reflect.TypeFor[time.Duration]() && n.ShortTag() == "!!str" && durationSyntax.MatchString(n.Value) {
			// Written as a duration, but longer than one can be (about 106751 days).
			w.fail(n, path, path, "expected %s, got one longer than %s", w.expect(t), time.Duration(math.MaxInt64))
			return
		}
		w.fail(n, path, path, "expected %s, got %s", w.expect(t), nodeKind(n))
		if selfDecoding(t) {
			// yaml stops reading the whole file at the first value that refuses to decode
			// itself (its type errors it collects and goes on): the settings after this one
			// would be read as not set, and judged missing. Read as not set, this one alone is.
			*n = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Line: n.Line, Column: n.Column}
		}
	}
}

// durationSyntax is what time.ParseDuration reads, in range or not.
var durationSyntax = regexp.MustCompile(DurationPattern)

// whole checks a number read into an integer setting (not a duration): yaml would cut a
// fraction off (64.5 read as 64) and says nothing useful of a number out of the type's range.
func (w *walker) whole(n *yaml.Node, t reflect.Type, path string) {
	var f float64
	if err := n.Decode(&f); err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		w.fail(n, path, path, "expected %s, got %s", w.expect(t), nodeKind(n))
		return
	}
	if f != math.Trunc(f) {
		w.fail(n, path, path, "expected %s, got a number with a fraction", w.expect(t))
		return
	}
	if err := n.Decode(reflect.New(t).Interface()); err != nil {
		lo, hi := intRange(t)
		w.fail(n, path, path, "expected %s from %d to %d, got a number out of that range", w.expect(t), lo, hi)
	}
}

// wholeKind reports an integer type that is not a duration (which has its own notation).
func wholeKind(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return t != reflect.TypeFor[time.Duration]() && !selfDecoding(t)
	}
	return false
}

// maxInt is the largest value of the integer type t.
func maxInt(t reflect.Type) uint64 {
	_, hi := intRange(t)
	return hi
}

// intRange is the range of the integer type t.
func intRange(t reflect.Type) (int64, uint64) {
	bits := t.Bits()
	if t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uint64 {
		return 0, math.MaxUint64 >> (64 - bits)
	}
	return -1 << (bits - 1), 1<<(bits-1) - 1
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" }

// mergeKey is YAML's merge key ("<<: *defaults").
const mergeKey = "<<"

// isMerge reports whether k is YAML's merge key.
func isMerge(k *yaml.Node) bool { return k.Value == mergeKey && k.ShortTag() == "!!merge" }

// merge checks what a merge key merges into the mapping at path, in each form yaml reads: a
// mapping (or an alias of one), or a list of them.
func (w *walker) merge(v *yaml.Node, t reflect.Type, path string) {
	if v.Kind == yaml.AliasNode && v.Alias != nil {
		v = v.Alias
	}
	if v.Kind != yaml.SequenceNode {
		w.walk(v, t, path)
		return
	}
	for _, m := range v.Content {
		w.walk(m, t, path)
	}
}

// structure checks a mapping read into struct type t: known keys, each once, each value.
func (w *walker) structure(n *yaml.Node, t reflect.Type, path string) {
	fields := Fields(t)
	seen := map[string]int{}
	for j, kv := range pairs(n) {
		k, v := kv[0], kv[1]
		if isMerge(k) {
			w.merge(v, t, path)
			continue
		}
		if k.Kind != yaml.ScalarNode {
			w.fail(k, path, path, "a key that is %s, not a name: this mapping's key number %d%s", nodeKind(k), j+1, keyList(fields))
			continue
		}
		i := slices.IndexFunc(fields, func(f Field) bool { return f.Key == k.Value })
		if i < 0 && !w.showsKey(k.Value, fields) {
			// A token or password pasted where a key goes: no part of it is printed, nor
			// anything derived from it (a key it is near, a path it is found at).
			w.fail(k, path, path, "an unknown key of %d characters, not shown (it does not look like a key, and may be a secret); "+
				"it is this mapping's key number %d%s", utf8.RuneCountInString(k.Value), j+1, keyList(fields))
			continue
		}
		p := keyPath(path, k.Value)
		if first, dup := seen[k.Value]; dup {
			w.fail(k, p, dropped(path), "set twice (first on line %d)", first)
			continue
		}
		seen[k.Value] = k.Line
		if i < 0 {
			// What the key was meant to set is left unset: the whole block is in doubt.
			w.fail(k, p, path, "unknown key%s", w.unknownHint(k.Value, fields))
			continue
		}
		w.lines[p] = k.Line
		w.walk(v, fields[i].Type, p)
	}
}

// mapping checks a mapping read into a Go map: each key of the key type, each once, each value.
func (w *walker) mapping(n *yaml.Node, t reflect.Type, path string) {
	seen := map[string]int{}
	for j, kv := range pairs(n) {
		k, v := kv[0], kv[1]
		if isMerge(k) {
			w.merge(v, t, path)
			continue
		}
		if k.Kind != yaml.ScalarNode {
			w.fail(k, path, path, "a key that is %s, not a name: this mapping's key number %d", nodeKind(k), j+1)
			continue
		}
		p := keyPath(path, k.Value)
		if first, dup := seen[k.Value]; dup {
			w.fail(k, p, dropped(path), "set twice (first on line %d)", first)
			continue
		}
		seen[k.Value] = k.Line
		if err := k.Decode(reflect.New(t.Key()).Interface()); err != nil {
			if !LooksLikeKey(k.Value) {
				w.fail(k, path, path, "expected keys that are %s; this mapping's key number %d is not one (%d characters, not shown: "+
					"it does not look like a key, and may be a secret)", w.expect(t.Key()), j+1, utf8.RuneCountInString(k.Value))
				continue
			}
			w.fail(k, p, p, "expected a key that is %s", w.expect(t.Key()))
			continue
		}
		w.lines[p] = k.Line
		w.walk(v, t.Elem(), p)
	}
}

// dropped is the block yaml leaves unread when the mapping at path sets a key twice: it reads
// nothing of that mapping, and nothing of the list entry it is (up to the list itself).
func dropped(path string) string {
	for strings.HasSuffix(path, "]") {
		path = path[:strings.LastIndex(path, "[")]
	}
	return path
}

// pairs returns a mapping node's key and value nodes.
func pairs(n *yaml.Node) [][2]*yaml.Node {
	out := make([][2]*yaml.Node, 0, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		out = append(out, [2]*yaml.Node{n.Content[i], n.Content[i+1]})
	}
	return out
}

// unknownHint suggests the nearest key of this mapping, or where else in the file a key of that
// name belongs, or lists the keys when they are few.
func (w *walker) unknownHint(key string, fields []Field) string {
	keys := make([]string, len(fields))
	for i, f := range fields {
		if f.Was != "" && f.Was == key {
			return fmt.Sprintf(" (renamed: write %q)", f.Key)
		}
		keys[i] = f.Key
	}
	if n := Nearest(key, keys); n != "" {
		return fmt.Sprintf(" (did you mean %q?)", n)
	}
	if elsewhere := PathsOf(w.root, key, 3); len(elsewhere) > 0 {
		return fmt.Sprintf(" here (did you mean %s?)", strings.Join(elsewhere, " or "))
	}
	return keyList(fields)
}

// keyList lists the keys of a mapping, when they are few.
func keyList(fields []Field) string {
	if len(fields) > 20 {
		return ""
	}
	keys := make([]string, len(fields))
	for i, f := range fields {
		keys[i] = f.Key
	}
	return "; expected one of: " + strings.Join(keys, ", ")
}

// maxKeyLength is the longest key LooksLikeKey takes for one; the configuration's longest is
// a little under.
const maxKeyLength = 32

// ShownKey reports whether an unknown key may be printed in an error, given the keys known
// where it was written: it looks like a key (LooksLikeKey), or it is a known key misspelt
// (Nearest finds one of known), which no pasted credential is. A long key's misspelling is
// shown so.
func ShownKey(key string, known []string) bool {
	return LooksLikeKey(key) || Nearest(key, known) != ""
}

// showsKey is ShownKey for a key written in a mapping of fields, or anywhere the
// configuration has a key of that name (the key written at the wrong level).
func (w *walker) showsKey(key string, fields []Field) bool {
	known := make([]string, len(fields))
	for i, f := range fields {
		known[i] = f.Key
	}
	return ShownKey(key, known) || len(PathsOf(w.root, key, 1)) > 0
}

// LooksLikeKey reports whether an unknown key may be printed in an error: it is short and
// written as the configuration's keys are (camelCase: a letter, then letters, digits, '_' or
// '-', at most two digits, at most two capitals more than small letters). Anything else, a
// token or a password pasted where a key goes, is named by its position and length alone.
func LooksLikeKey(key string) bool {
	if key == "" || len(key) > maxKeyLength || !isLetter(rune(key[0])) {
		return false
	}
	digits, upper, lower := 0, 0, 0
	for _, r := range key {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r >= 'A' && r <= 'Z':
			upper++
		case r >= 'a' && r <= 'z':
			lower++
		case r != '_' && r != '-':
			return false
		}
	}
	return digits <= 2 && upper <= lower+2
}

func isLetter(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' }

// expect says what a value of type t must be.
func (w *walker) expect(t reflect.Type) string {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if s, ok := w.opts.Expect[t]; ok {
		return s
	}
	return describe(t)
}

// describe says what a value of type t is, from its Go kind.
func describe(t reflect.Type) string {
	switch {
	case t == reflect.TypeFor[time.Duration]():
		return "a duration such as 250ms, 30s, 5m or 1h30m"
	case selfDecoding(t):
		return "a value of " + t.Name()
	}
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "a whole number"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number, not negative"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "a list (one \"- \" entry per line, or [a, b])"
	case reflect.Map:
		return "a mapping of keys to values"
	case reflect.Struct:
		return "a mapping (key: value)"
	}
	return "a value of type " + t.String()
}

// nodeKind names what the file holds at n, never its text.
func nodeKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	switch n.ShortTag() {
	case "!!str":
		return "a string"
	case "!!int":
		return "a whole number"
	case "!!float":
		return "a number"
	case "!!bool":
		return "true or false"
	}
	return "a " + strings.TrimPrefix(n.ShortTag(), "!!") + " value"
}

// onlyEmptyAfter reads the documents after the first and refuses the first that holds anything:
// the configuration is one document. An empty one (a "---" with nothing but comments after it,
// as tools that join manifests write at the end) sets nothing and is passed over.
func onlyEmptyAfter(dec *yaml.Decoder) error {
	for {
		var extra yaml.Node
		err := dec.Decode(&extra)
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case err == nil && emptyDocument(&extra):
			continue
		}
		line := 0
		if err == nil {
			line = extra.Line
		}
		return &configerr.Error{Line: line,
			Err: errors.New("a second YAML document (after ---): the configuration is one document")}
	}
}

// emptyDocument reports whether n is a document with nothing written in it: its one node a null
// scalar spelled as nothing (not "~" or "null", which someone wrote).
func emptyDocument(n *yaml.Node) bool {
	if n.Kind != yaml.DocumentNode || len(n.Content) != 1 {
		return false
	}
	c := n.Content[0]
	return c.Kind == yaml.ScalarNode && c.Tag == "!!null" && c.Value == "" && c.Anchor == ""
}
