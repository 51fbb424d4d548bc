package pins

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sort"
	"time"
)

// Trust on first use keeps, per backend, one record in the shared store: a manifest of the pins
// of each kind (tools, prompts, resource templates, UI resources, the instructions), sealed
// under the key ring so that whoever can write the store cannot choose what is "pinned". The
// first replica to read a backend's list of a kind finds no manifest of that kind and adds one
// with every item of that list (first contact), writing the record only while it holds what
// that replica read (SET NX, or a compare-and-swap). Any later item is new, held by default,
// until an operator pins it ('gateway pins approve'), which writes the record once with every
// kind it changes: a replica sees all of an approval or none of it, never new tools with old
// prompts. Each replica caches the record it read, every kind of it, and reads it again at
// most every tofuRecheck, on the list path. A store that lost its memory gets back from the
// replicas what they hold, and a first contact waits for them (lineage.go).
//
// Releases before kept one record per backend and kind (ManifestKey). While a backend has no
// record of its own, its per-kind records are read in its place, and the first write (a first
// contact of another kind, an approval, a reseal) writes them into one.

// TOFUStore is the shared store behind trust on first use.
type TOFUStore interface {
	// Get returns the value stored under key, and false when there is none.
	Get(ctx context.Context, key string) ([]byte, bool, error)
	// SetNX stores value under key unless the key holds a value already, atomically across
	// replicas, without expiry, and returns whether it stored it and otherwise the value that
	// is there.
	SetNX(ctx context.Context, key string, value []byte) (stored bool, current []byte, err error)
	// Swap replaces the value stored under key with value only while it still holds old,
	// atomically across replicas.
	Swap(ctx context.Context, key string, old, value []byte) (swapped bool, err error)
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

// manifestsVersion is the version inside a sealed record of every kind (SealManifests).
const manifestsVersion = 3

// ManifestsKey is the store key of one backend's trust-on-first-use pins, every kind in one
// record. The backend name is length-prefixed, so no backend name can make two backends share
// a key.
func ManifestsKey(backend string) string {
	return fmt.Sprintf("pins:v3:%d:%s", len(backend), backend)
}

// ManifestKey is the store key of one backend's trust-on-first-use pins of one kind, as
// releases before ManifestsKey kept them; they are read while a backend has no record under
// ManifestsKey.
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

// SealManifest encodes m (RFC 8785, the pins' canonical values as members) and seals it: the
// per-kind record of earlier releases (ManifestKey), read while a backend has no other. The
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
	return manifestOf(backend, kind, raw)
}

// manifestOf loads the pins of a manifest as sealed: one that does not load is an error
// wrapping ErrManifest.
func manifestOf(backend string, kind Kind, raw map[string]any) (*Manifest, error) {
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

// SealManifests encodes backend's manifests of every kind into one record (RFC 8785) and seals
// it. The record names its backend, which OpenManifests checks.
func SealManifests(s Sealer, backend string, ms map[Kind]*Manifest) ([]byte, error) {
	kinds := make(map[string]any, len(ms))
	for kind, m := range ms {
		pins := make(map[string]any, len(m.Pins))
		for k, d := range m.Pins {
			pins[k] = d.Value
		}
		kinds[string(kind)] = pins
	}
	plain, err := Encode(map[string]any{"v": float64(manifestsVersion), "backend": backend, "kinds": kinds})
	if err != nil {
		return nil, err
	}
	tok, err := s.Seal(plain)
	if err != nil {
		return nil, fmt.Errorf("pins: sealing the pins of %s: %w", backend, err)
	}
	return []byte(tok), nil
}

// OpenManifests opens a record stored under ManifestsKey(backend): one that does not open,
// names another backend or version, or holds a kind or pin that does not load is an error
// wrapping ErrManifest, never a partial record.
func OpenManifests(s Sealer, backend string, sealed []byte) (map[Kind]*Manifest, error) {
	plain, err := s.Open(string(sealed))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrManifest, err)
	}
	v, err := Parse(plain)
	obj, ok := v.(map[string]any)
	if err != nil || !ok || obj["v"] != float64(manifestsVersion) || obj["backend"] != backend {
		return nil, fmt.Errorf("%w: not the pins of %s", ErrManifest, backend)
	}
	kinds, ok := obj["kinds"].(map[string]any)
	if !ok || len(obj) != 3 {
		return nil, fmt.Errorf("%w: malformed", ErrManifest)
	}
	out := make(map[Kind]*Manifest, len(kinds))
	for k, raw := range kinds {
		pins, ok := raw.(map[string]any)
		if !ok || !Kind(k).Valid() {
			return nil, fmt.Errorf("%w: malformed %q", ErrManifest, k)
		}
		if out[Kind(k)], err = manifestOf(backend, Kind(k), pins); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ReadManifests reads backend's record of every kind: raw is what the store holds under
// ManifestsKey (found false when nothing), for a writer to write only while it still holds
// that (Swap, or SetNX when not found). Without such a record, the per-kind records of earlier
// releases are read in its place. A record that does not open is an error wrapping
// ErrManifest; a store that does not answer, any other error.
func ReadManifests(ctx context.Context, get func(context.Context, string) ([]byte, bool, error), s Sealer, backend string) (
	raw []byte, found bool, ms map[Kind]*Manifest, err error) {
	raw, found, err = get(ctx, ManifestsKey(backend))
	switch {
	case err != nil:
		return nil, false, nil, err
	case found:
		ms, err = OpenManifests(s, backend, raw)
		return raw, true, ms, err
	}
	ms = map[Kind]*Manifest{}
	for _, kind := range Kinds() {
		old, ok, err := get(ctx, ManifestKey(backend, kind))
		if err != nil {
			return nil, false, nil, err
		}
		if ok {
			if ms[kind], err = OpenManifest(s, backend, kind, old); err != nil {
				return nil, false, nil, err
			}
		}
	}
	return nil, false, ms, nil
}

// FirstContact is the manifest first contact with a list pins: every item that was
// fingerprinted and is listed once, except the tools and prompts shadows says nearly duplicate
// another backend's, in key order while they fit in maxPins items and maxBytes of canonical text.
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

// firstContactAttempts bounds how often a first contact reads the record again after another
// writer changed it between its read and its write.
const firstContactAttempts = 5

// manifest returns backend's trust-on-first-use manifest of kind as this replica knows it,
// reading the store when the cached one is older than tofuRecheck; a read keeps every kind of
// the record, so this replica never mixes kinds of two approvals. With first set and no
// manifest of kind in the record, it adds the one items make (first contact), only while the
// record holds what it read: another replica's first contact or an approval written first is
// read again and kept; kinds this replica holds that the record lacks are written back
// first, and a first contact waits while the store's memory is new (awaitRestore), its error
// wrapping errUnverified. A store that does not answer leaves the cached manifest in use (what
// was verified stays verified); with none cached, the error wraps errUnverified, as it does for
// a stored record that does not open (whatever this replica read before: the store was written
// by someone else).
func (g *Guard) manifest(ctx context.Context, backend string, kind Kind, items []Listed, first bool) (*manifestState, error) {
	ref := manifestRef{backend, kind}
	now := g.now()
	g.mu.Lock()
	st := g.tofu[ref]
	g.mu.Unlock()
	if st != nil && now.Sub(st.readAt) < tofuRecheck && (st.m != nil || !first) {
		return st, nil
	}
	for range firstContactAttempts {
		raw, found, ms, err := ReadManifests(ctx, g.store.Get, g.sealer, backend)
		switch {
		case errors.Is(err, ErrManifest):
			g.log.Error("pins: stored pins do not open; the backend's items are refused until they are pinned again",
				"backend", backend, "kind", string(kind), "error", err)
			g.mu.Lock()
			for _, k := range Kinds() {
				delete(g.tofu, manifestRef{backend, k})
			}
			g.mu.Unlock()
			return nil, fmt.Errorf("%w: %w", errUnverified, err)
		case err != nil:
			return g.storeFailed(ref, st, err)
		}
		done, err := g.restore(ctx, backend, raw, found, ms)
		if err != nil {
			return g.storeFailed(ref, st, err)
		}
		if !done {
			continue // written back, or another writer came first: read what is there now
		}
		if ms[kind] == nil && first {
			switch err := g.awaitRestore(ctx, backend); {
			case errors.Is(err, errUnverified):
				return nil, err
			case err != nil:
				return g.storeFailed(ref, st, err)
			}
			wrote, err := g.firstContact(ctx, backend, kind, items, raw, found, ms)
			if err != nil {
				return g.storeFailed(ref, st, err)
			}
			if !wrote {
				continue // another writer came first: read what it wrote
			}
		}
		return g.keepAll(backend, kind, ms, now), nil
	}
	return g.storeFailed(ref, st, errors.New("the stored pins kept changing during first contact"))
}

// firstContact adds to ms the manifest items make (or the lock file's section for the backend,
// lockManifest) and writes the record, only while the store holds raw (nothing when not
// found); wrote is false when another writer came first.
func (g *Guard) firstContact(ctx context.Context, backend string, kind Kind, items []Listed, raw []byte, found bool, ms map[Kind]*Manifest) (bool, error) {
	var shadows func(*Definition) bool
	if ShadowKind(kind) {
		shadows = func(d *Definition) bool { _, ok := g.shadowed(ctx, backend, kind, d); return ok }
	}
	m, over := FirstContact(backend, kind, items, shadows, g.cfg.maxPins(), g.cfg.maxPinBytes())
	from := "list"
	if lm := g.lockManifest(backend, kind); lm != nil {
		m, over, from = lm, nil, "lock file"
	}
	next := maps.Clone(ms)
	next[kind] = m
	sealed, err := SealManifests(g.sealer, backend, next)
	if err != nil {
		return false, err
	}
	key := ManifestsKey(backend)
	var wrote bool
	if found {
		wrote, err = g.store.Swap(ctx, key, raw, sealed)
	} else {
		wrote, _, err = g.store.SetNX(ctx, key, sealed)
	}
	if err != nil || !wrote {
		return false, err
	}
	ms[kind] = m
	g.log.Info("pins: first contact: pinned the backend's definitions", "backend", backend, "kind", string(kind),
		"pinned", len(m.Pins), "listed", len(items), "over_bounds", len(over), "from", from)
	return true, nil
}

// restore writes back the kinds of pins this replica holds for backend that the store's record
// lacks (ms is what it read: raw when found, else nothing or an earlier release's records).
// Nothing deletes a record or a kind of it, and a record has no expiry, so a kind this replica
// read or wrote and the store no longer has was lost with the store's memory (a Redis
// restarted without persistence): taking the backend's list of this moment as a first contact
// would pin, silently, whatever changed or appeared since it was trusted. done is true when
// there was nothing to write back; false when it wrote them (or another writer came first),
// for the caller to read the record again. It writes only while the store holds what was read.
func (g *Guard) restore(ctx context.Context, backend string, raw []byte, found bool, ms map[Kind]*Manifest) (done bool, err error) {
	next := maps.Clone(ms)
	var restored []string
	g.mu.Lock()
	for _, k := range Kinds() {
		if st := g.tofu[manifestRef{backend, k}]; next[k] == nil && st != nil && st.m != nil {
			next[k] = st.m
			restored = append(restored, string(k))
		}
	}
	g.mu.Unlock()
	if len(restored) == 0 {
		return true, nil
	}
	sealed, err := SealManifests(g.sealer, backend, next)
	if err != nil {
		return false, err
	}
	var wrote bool
	if found {
		wrote, err = g.store.Swap(ctx, ManifestsKey(backend), raw, sealed)
	} else {
		wrote, _, err = g.store.SetNX(ctx, ManifestsKey(backend), sealed)
	}
	if err != nil || !wrote {
		return false, err
	}
	g.log.Warn("pins: the shared store had lost this backend's pins (restarted without its data?); wrote back the ones this replica held",
		"backend", backend, "kinds", restored)
	return false, nil
}

// keepAll caches every kind of backend's record as read now and returns kind's.
func (g *Guard) keepAll(backend string, kind Kind, ms map[Kind]*Manifest, now time.Time) *manifestState {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, k := range Kinds() {
		st := &manifestState{m: ms[k], readAt: now}
		if ShadowKind(k) && st.m != nil {
			st.index = newShadowIndex(st.m.Pins)
		}
		g.tofu[manifestRef{backend, k}] = st
	}
	return g.tofu[manifestRef{backend, kind}]
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
