package pins

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
	"unicode"

	"github.com/mcp-gateway/gateway/internal/configerr"
	"github.com/mcp-gateway/gateway/internal/configyaml"
)

// LockVersion is the version of the pins.yaml format this package reads and writes.
const LockVersion = 1

// maxLockBytes bounds the lock file LoadLock reads.
const maxLockBytes = 64 << 20

// Lock is the content of a pins.yaml lock file: per backend, the pinned definitions.
type Lock struct {
	Backends map[string]*BackendPins
}

// BackendPins are one backend's pins.
type BackendPins struct {
	// Instructions is the pinned server instructions, nil if the backend had none.
	Instructions *Definition
	// Items maps KindTool, KindPrompt, KindResourceTemplate and KindUIResource to the pinned items
	// by key.
	Items map[Kind]map[string]*Definition
}

// NewLock returns an empty lock.
func NewLock() *Lock { return &Lock{Backends: map[string]*BackendPins{}} }

// Backend returns the backend's pins, creating them.
func (l *Lock) Backend(name string) *BackendPins {
	b := l.Backends[name]
	if b == nil {
		b = &BackendPins{Items: map[Kind]map[string]*Definition{}}
		l.Backends[name] = b
	}
	return b
}

// Add pins d for backend. A second definition with the same kind and key is an error: a
// backend listing two different items under one name cannot be pinned unambiguously.
func (l *Lock) Add(backend string, d *Definition) error {
	if backend == "" {
		return errors.New("pins: empty backend name")
	}
	b := l.Backend(backend)
	if d.Kind == KindInstructions {
		if b.Instructions != nil {
			return fmt.Errorf("pins: %s: instructions pinned twice", backend)
		}
		b.Instructions = d
		return nil
	}
	if _, ok := coveredFields[d.Kind]; !ok {
		return fmt.Errorf("pins: unknown kind %q", d.Kind)
	}
	m := b.Items[d.Kind]
	if m == nil {
		m = map[string]*Definition{}
		b.Items[d.Kind] = m
	}
	if _, dup := m[d.Key]; dup {
		return fmt.Errorf("pins: %s: %s %q listed twice", backend, d.Kind, d.Key)
	}
	m[d.Key] = d
	return nil
}

// Get returns the pinned definition of kind and key (key "" for instructions), or nil.
func (b *BackendPins) Get(kind Kind, key string) *Definition {
	if b == nil {
		return nil
	}
	if kind == KindInstructions {
		return b.Instructions
	}
	return b.Items[kind][key]
}

// Keys lists the keys pinned for kind, sorted.
func (b *BackendPins) Keys(kind Kind) []string {
	if b == nil {
		return nil
	}
	if kind == KindInstructions {
		if b.Instructions == nil {
			return nil
		}
		return []string{""}
	}
	keys := make([]string, 0, len(b.Items[kind]))
	for k := range b.Items[kind] {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Names lists the backends, sorted.
func (l *Lock) Names() []string {
	names := make([]string, 0, len(l.Backends))
	for n := range l.Backends {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// lockSection is the YAML member of each kind in a backend's section.
var lockSection = map[Kind]string{KindTool: "tools", KindPrompt: "prompts", KindResourceTemplate: "resourceTemplates",
	KindUIResource: "uiResources"}

// The file form, for the loader only: unknown members are refused.
type (
	lockFile struct {
		Version  int                    `yaml:"version"`
		Backends map[string]lockBackend `yaml:"backends"`
	}
	lockBackend struct {
		Instructions      *lockEntry           `yaml:"instructions"`
		Tools             map[string]lockEntry `yaml:"tools"`
		Prompts           map[string]lockEntry `yaml:"prompts"`
		ResourceTemplates map[string]lockEntry `yaml:"resourceTemplates"`
		UIResources       map[string]lockEntry `yaml:"uiResources"`
	}
	lockEntry struct {
		Fingerprint string `yaml:"fingerprint"`
		Canonical   string `yaml:"canonical"`
	}
)

var fingerprintRE = regexp.MustCompile(`^[0-9a-f]{64}$`)

// LoadLock reads and validates a lock file.
func LoadLock(path string) (*Lock, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxLockBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxLockBytes {
		return nil, fmt.Errorf("pins: %s is larger than %d bytes", path, maxLockBytes)
	}
	l, err := ParseLock(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return l, nil
}

// ParseLock validates a lock file's content and returns every problem at once: unknown
// members, a version other than LockVersion, canonical text that is not canonical or not of
// the item's kind and key, and a fingerprint that does not match its canonical text.
func ParseLock(data []byte) (*Lock, error) {
	// The configuration's strict reader: every problem with its line, key path and what was
	// expected, rather than yaml's "cannot unmarshal !!str into pins.lockFile".
	var lf lockFile
	d, err := configyaml.Decode(data, &lf, configyaml.Options{})
	if err != nil {
		return nil, fmt.Errorf("pins: not a lock file as gateway pins write writes it:\n%w", withLines(err))
	}
	if len(d.Lines) == 0 {
		return nil, errors.New("pins: empty lock file")
	}
	var errs []error
	if lf.Version != LockVersion {
		errs = append(errs, fmt.Errorf("pins: version %d, want %d", lf.Version, LockVersion))
	}
	l := NewLock()
	names := make([]string, 0, len(lf.Backends))
	for n := range lf.Backends {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		lb := lf.Backends[name]
		if name == "" {
			errs = append(errs, errors.New("pins: backend with an empty name"))
			continue
		}
		b := l.Backend(name)
		if lb.Instructions != nil {
			d, err := entry(KindInstructions, "", *lb.Instructions)
			if err != nil {
				errs = append(errs, fmt.Errorf("backends.%s.instructions: %w", name, err))
			} else {
				b.Instructions = d
			}
		}
		for _, kind := range []Kind{KindTool, KindPrompt, KindResourceTemplate, KindUIResource} {
			var m map[string]lockEntry
			switch kind {
			case KindTool:
				m = lb.Tools
			case KindPrompt:
				m = lb.Prompts
			case KindResourceTemplate:
				m = lb.ResourceTemplates
			default:
				m = lb.UIResources
			}
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, key := range keys {
				d, err := entry(kind, key, m[key])
				if err != nil {
					errs = append(errs, fmt.Errorf("backends.%s.%s[%q]: %w", name, lockSection[kind], key, err))
					continue
				}
				if err := l.Add(name, d); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return l, nil
}

func entry(kind Kind, key string, e lockEntry) (*Definition, error) {
	if !fingerprintRE.MatchString(e.Fingerprint) {
		return nil, errors.New("fingerprint is not 64 lower-case hex digits")
	}
	if e.Canonical == "" {
		return nil, errors.New("no canonical text")
	}
	d, err := FromCanonical(kind, key, []byte(e.Canonical))
	if err != nil {
		return nil, err
	}
	if d.Fingerprint != e.Fingerprint {
		return nil, fmt.Errorf("fingerprint %s does not match the canonical text (SHA-256 %s)", e.Fingerprint, d.Fingerprint)
	}
	return d, nil
}

const lockHeader = `# Tool-definition pins for mcp-gateway, written by 'gateway pins write'.
# Each entry is the SHA-256 fingerprint of the RFC 8785 canonical text beside it. Review every
# change to this file before committing it; 'gateway pins diff' classifies what changed.
`

// Marshal writes the lock file. The output is byte-for-byte deterministic: backends and items
// sorted by name, every string double-quoted, and every code point that is invisible or not
// printable escaped (\uXXXX, \UXXXXXXXX) so a reviewer sees it in a diff.
func (l *Lock) Marshal() []byte {
	var w bytes.Buffer
	w.WriteString(lockHeader)
	fmt.Fprintf(&w, "version: %d\n", LockVersion)
	if len(l.Backends) == 0 {
		w.WriteString("backends: {}\n")
		return w.Bytes()
	}
	w.WriteString("backends:\n")
	for _, name := range l.Names() {
		b := l.Backends[name]
		fmt.Fprintf(&w, "  %s:\n", yamlQuote(name))
		if b.Instructions != nil {
			w.WriteString("    instructions:\n")
			writeEntry(&w, "      ", b.Instructions)
		}
		for _, kind := range []Kind{KindTool, KindPrompt, KindResourceTemplate, KindUIResource} {
			keys := b.Keys(kind)
			if len(keys) == 0 && kind == KindUIResource {
				continue // optional: a lock of a backend without MCP Apps reads as it always did
			}
			if len(keys) == 0 {
				fmt.Fprintf(&w, "    %s: {}\n", lockSection[kind])
				continue
			}
			fmt.Fprintf(&w, "    %s:\n", lockSection[kind])
			for _, k := range keys {
				fmt.Fprintf(&w, "      %s:\n", yamlQuote(k))
				writeEntry(&w, "        ", b.Items[kind][k])
			}
		}
	}
	return w.Bytes()
}

func writeEntry(w *bytes.Buffer, indent string, d *Definition) {
	fmt.Fprintf(w, "%sfingerprint: %s\n", indent, d.Fingerprint)
	fmt.Fprintf(w, "%scanonical: %s\n", indent, yamlQuote(string(d.Canonical)))
}

// yamlQuote renders s as a YAML flow scalar: single-quoted (YAML 1.2 §7.3.2, only ' doubled,
// so canonical JSON stays readable) when every code point is printable and visible, otherwise
// double-quoted (§7.3.1) with each such code point escaped.
func yamlQuote(s string) string {
	if plainPrintable(s) {
		return "'" + strings.ReplaceAll(s, "'", "''") + "'"
	}
	var sb strings.Builder
	sb.WriteByte('"')
	runes := []rune(s)
	for i, r := range runes {
		prev, next := rune(-1), rune(-1)
		if i > 0 {
			prev = runes[i-1]
		}
		if i+1 < len(runes) {
			next = runes[i+1]
		}
		switch {
		case r == '"':
			sb.WriteString(`\"`)
		case r == '\\':
			sb.WriteString(`\\`)
		default:
			_, invisible := classifyRune(r, prev, next)
			if invisible || !unicode.IsPrint(r) || r == unicode.ReplacementChar {
				if r > 0xFFFF {
					fmt.Fprintf(&sb, `\U%08X`, r)
				} else {
					fmt.Fprintf(&sb, `\u%04X`, r)
				}
				continue
			}
			sb.WriteRune(r)
		}
	}
	sb.WriteByte('"')
	return sb.String()
}

// AddItems fingerprints and pins each item of one list (the objects of a tools/list,
// prompts/list or resources/templates/list result) for backend, reporting every item that
// cannot be pinned.
func (l *Lock) AddItems(backend string, kind Kind, items []json.RawMessage) error {
	var errs []error
	for i, it := range items {
		d, err := FromJSON(kind, it)
		if err == nil {
			err = l.Add(backend, d)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %s item %d: %w", backend, kind, i, err))
		}
	}
	return errors.Join(errs...)
}

// plainPrintable reports whether s can be written single-quoted: every code point printable
// (unicode.IsPrint: no controls, no separators but the ASCII space) and none invisible.
func plainPrintable(s string) bool {
	runes := []rune(s)
	for i, r := range runes {
		prev, next := rune(-1), rune(-1)
		if i > 0 {
			prev = runes[i-1]
		}
		if i+1 < len(runes) {
			next = runes[i+1]
		}
		if _, invisible := classifyRune(r, prev, next); invisible || !unicode.IsPrint(r) || r == unicode.ReplacementChar {
			return false
		}
	}
	return true
}

// withLines puts the line in front of each problem Decode found ("line 3: backends.web.tool:
// unknown key …").
func withLines(err error) error {
	var out []error
	for _, e := range configerr.List(err) {
		var ce *configerr.Error
		if errors.As(e, &ce) && ce.Line > 0 {
			e = fmt.Errorf("line %d: %w", ce.Line, e)
		}
		out = append(out, e)
	}
	return errors.Join(out...)
}
