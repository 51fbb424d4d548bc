package pins

import (
	"context"
	"errors"
	"fmt"
	"sort"
)

// Trust on first use keeps, per backend and kind (tools, prompts, resource templates, the
// instructions), one record in the shared store: a manifest of the pins, sealed under the key
// ring so that whoever can write the store cannot choose what is "pinned". The first replica to
// read a backend's list finds no record and writes one (SET NX) with every item of that list:
// first contact. Any later item is new, held by default, until an operator pins it ('gateway
// pins approve'). Each replica caches the manifest it read and reads it again at most every
// tofuRecheck, on the list path.

// TOFUStore is the shared store behind trust on first use.
type TOFUStore interface {
	// Get returns the value stored under key, and false when there is none.
	Get(ctx context.Context, key string) ([]byte, bool, error)
	// SetNX stores value under key unless the key holds a value already, atomically across
	// replicas, without expiry, and returns whether it stored it and otherwise the value that
	// is there.
	SetNX(ctx context.Context, key string, value []byte) (stored bool, current []byte, err error)
}

// Sealer seals and opens the stored manifests (seal.Sealer, with a purpose of its own).
type Sealer interface {
	Seal(plaintext []byte) (string, error)
	Open(token string) ([]byte, error)
}

// PurposeManifest is the sealing purpose of trust-on-first-use manifests: a manifest never opens
// as any other sealed value, nor the reverse.
const PurposeManifest = "mcp-gateway/pins/v2"

// manifestVersion is the version inside a sealed manifest.
const manifestVersion = 2

// ManifestKey is the store key of one backend's trust-on-first-use pins of one kind. The
// backend name is length-prefixed, so no backend name can make two backends share a key.
func ManifestKey(backend string, kind Kind) string {
	return fmt.Sprintf("pins:v2:%d:%s:%s", len(backend), backend, kind)
}

// Manifest is one backend's pins of one kind, by key.
type Manifest struct {
	Backend string
	Kind    Kind
	Pins    map[string]*Definition
}

// Keys lists the pinned keys, sorted.
func (m *Manifest) Keys() []string {
	keys := make([]string, 0, len(m.Pins))
	for k := range m.Pins {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// SealManifest encodes m (RFC 8785, the pins' canonical values as members) and seals it. The
// record names its backend and kind, which OpenManifest checks: a record copied under another
// backend's key does not open as that backend's.
func SealManifest(s Sealer, m *Manifest) ([]byte, error) {
	pins := make(map[string]any, len(m.Pins))
	for k, d := range m.Pins {
		pins[k] = d.Value
	}
	plain, err := Encode(map[string]any{"v": float64(manifestVersion), "backend": m.Backend, "kind": string(m.Kind), "pins": pins})
	if err != nil {
		return nil, err
	}
	tok, err := s.Seal(plain)
	if err != nil {
		return nil, fmt.Errorf("pins: sealing the pins of %s %s: %w", m.Backend, m.Kind, err)
	}
	return []byte(tok), nil
}

// ErrManifest is wrapped by every reason a stored manifest does not open.
var ErrManifest = errors.New("pins: stored pins do not open")

// OpenManifest opens a manifest stored under ManifestKey(backend, kind): one that does not
// open, names another backend, kind or version, or holds a pin that does not load is an error
// wrapping ErrManifest, never a partial manifest.
func OpenManifest(s Sealer, backend string, kind Kind, sealed []byte) (*Manifest, error) {
	plain, err := s.Open(string(sealed))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrManifest, err)
	}
	v, err := Parse(plain)
	obj, ok := v.(map[string]any)
	if err != nil || !ok || obj["v"] != float64(manifestVersion) || obj["backend"] != backend || obj["kind"] != string(kind) {
		return nil, fmt.Errorf("%w: not the pins of %s %s", ErrManifest, backend, kind)
	}
	raw, ok := obj["pins"].(map[string]any)
	if !ok || len(obj) != 4 {
		return nil, fmt.Errorf("%w: malformed", ErrManifest)
	}
	m := &Manifest{Backend: backend, Kind: kind, Pins: make(map[string]*Definition, len(raw))}
	for key, val := range raw {
		c, err := Encode(val)
		if err == nil {
			m.Pins[key], err = FromCanonical(kind, key, c)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %s %q: %w", ErrManifest, kind, key, err)
		}
	}
	return m, nil
}

// FirstContact is the manifest first contact with a list pins: every item that was
// fingerprinted and is listed once, except the tools shadows says nearly duplicate another
// backend's, in key order while they fit in maxPins items and maxBytes of canonical text.
// The second result lists the keys left out for the bounds.
func FirstContact(backend string, kind Kind, items []Listed, shadows func(*Definition) bool, maxPins, maxBytes int) (*Manifest, []string) {
	count := make(map[string]int, len(items))
	for _, it := range items {
		count[it.Key]++
	}
	sorted := append([]Listed(nil), items...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Key < sorted[j].Key })
	m := &Manifest{Backend: backend, Kind: kind, Pins: map[string]*Definition{}}
	var over []string
	size := 0
	for _, it := range sorted {
		if it.Def == nil || count[it.Key] > 1 || (shadows != nil && shadows(it.Def)) {
			continue
		}
		if len(m.Pins) >= maxPins || size+len(it.Def.Canonical)+len(it.Key) > maxBytes {
			over = append(over, it.Key)
			continue
		}
		size += len(it.Def.Canonical) + len(it.Key)
		m.Pins[it.Key] = it.Def
	}
	return m, over
}

// manifest returns backend's trust-on-first-use manifest of kind as this replica knows it,
// reading the store when the cached one is older than tofuRecheck. With first set and no
// manifest in the store, it writes the one items make (first contact); another replica's,
// written first, wins. A store that does not answer leaves the cached manifest in use (what was
// verified stays verified); with none cached, the error wraps errUnverified, as it does for a
// stored manifest that does not open (whatever this replica read before: the store was
// written by someone else).
func (g *Guard) manifest(ctx context.Context, backend string, kind Kind, items []Listed, first bool) (*manifestState, error) {
	ref := manifestRef{backend, kind}
	now := g.now()
	g.mu.Lock()
	st := g.tofu[ref]
	g.mu.Unlock()
	if st != nil && now.Sub(st.readAt) < tofuRecheck && (st.m != nil || !first) {
		return st, nil
	}
	key := ManifestKey(backend, kind)
	raw, found, err := g.store.Get(ctx, key)
	if err == nil && !found && first {
		raw, err = g.firstContact(ctx, backend, kind, items)
		found = err == nil
	}
	switch {
	case err != nil:
		return g.storeFailed(ref, st, err)
	case !found:
		st = &manifestState{readAt: now}
		g.keep(ref, st)
		return st, nil
	}
	m, err := OpenManifest(g.sealer, backend, kind, raw)
	if err != nil {
		g.log.Error("pins: stored pins do not open; the backend's items are refused until they are pinned again",
			"backend", backend, "kind", string(kind), "error", err)
		g.mu.Lock()
		delete(g.tofu, ref)
		g.mu.Unlock()
		return nil, fmt.Errorf("%w: %w", errUnverified, err)
	}
	st = &manifestState{m: m, readAt: now}
	if kind == KindTool {
		st.index = newShadowIndex(m.Pins)
	}
	g.keep(ref, st)
	return st, nil
}

// firstContact writes the manifest items make unless the store holds one, and returns the
// stored one.
func (g *Guard) firstContact(ctx context.Context, backend string, kind Kind, items []Listed) ([]byte, error) {
	var shadows func(*Definition) bool
	if kind == KindTool {
		shadows = func(d *Definition) bool { _, ok := g.shadowed(ctx, backend, d); return ok }
	}
	m, over := FirstContact(backend, kind, items, shadows, g.cfg.maxPins(), g.cfg.maxPinBytes())
	sealed, err := SealManifest(g.sealer, m)
	if err != nil {
		return nil, err
	}
	stored, current, err := g.store.SetNX(ctx, ManifestKey(backend, kind), sealed)
	if err != nil {
		return nil, err
	}
	if !stored {
		return current, nil
	}
	g.log.Info("pins: first contact: pinned the backend's list", "backend", backend, "kind", string(kind),
		"pinned", len(m.Pins), "listed", len(items), "over_bounds", len(over))
	return sealed, nil
}

// storeFailed answers for a manifest the store could not be asked for: the cached one, or
// errUnverified. The first failure of an outage is logged.
func (g *Guard) storeFailed(ref manifestRef, st *manifestState, err error) (*manifestState, error) {
	g.mu.Lock()
	logIt := st == nil || !st.failing
	failing := &manifestState{failing: true} // not fresh: the next list asks the store again
	if st != nil {
		cp := *st
		cp.failing = true
		failing = &cp
	}
	g.tofu[ref] = failing
	g.mu.Unlock()
	if logIt {
		g.log.Warn("pins: shared store unavailable; items verified before are served, the others refused",
			"backend", ref.backend, "kind", string(ref.kind), "error", err)
	}
	if st != nil && st.m != nil {
		return st, nil
	}
	return nil, fmt.Errorf("%w: %w", errUnverified, err)
}

func (g *Guard) keep(ref manifestRef, st *manifestState) {
	g.mu.Lock()
	g.tofu[ref] = st
	g.mu.Unlock()
}
