package pins

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"
)

// This file is pinning on the request path: a Guard compares every list a backend sends with
// the pins (the lock file, or the shared store in trust-on-first-use mode) once per list fetch,
// and answers for each item what the gateway must do with it. The gateway caches the answers
// with the list, so a call costs a map lookup, never a fingerprint.

// TOFUStore is the shared store behind trust on first use.
type TOFUStore interface {
	// SetNX stores value under key unless the key holds a value already, atomically across
	// replicas, and returns whether it stored it and otherwise the value that is there.
	SetNX(ctx context.Context, key string, value []byte) (stored bool, current []byte, err error)
}

// ErrStoreUnavailable is returned when trust on first use needs the shared store and it does
// not answer: items not verified yet are neither served nor callable (fail closed).
var ErrStoreUnavailable = errors.New("pins: shared store unavailable")

// Verdict is what the gateway does with one listed item.
type Verdict struct {
	// Action is the strongest action the item's classes call for; "" when it matches its pin.
	Action Action
	// Classes name the drift (ClassInvisible included whatever the pin says).
	Classes Set
	// Pinned and Current are the fingerprints ("" when there is no pin, or no current
	// definition).
	Pinned, Current string
}

// Blocked reports whether the item is hidden from lists and calls to it refused.
func (v Verdict) Blocked() bool { return v.Action == ActionBlock }

// Confirm reports whether each call to the item goes through the gateway's confirmation.
func (v Verdict) Confirm() bool { return v.Action == ActionConfirm }

// GuardOptions are what NewGuard takes.
type GuardOptions struct {
	// Config is the validated pins section.
	Config *Config
	// Lock is the loaded lock file; required when any backend is in lockfile mode.
	Lock *Lock
	// Store holds trust-on-first-use pins; required when any backend is in tofu mode.
	Store TOFUStore
	// Backends are the configured backend names.
	Backends []string
	// Logger receives one audit line per detected drift.
	Logger *slog.Logger
	// OnDrift, when set, is called once per class of each detected drift (not per request),
	// with the action taken on the item (the strongest of its classes'); it must not block.
	OnDrift func(backend string, class Class, action Action)
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Guard checks backend definitions against their pins. It is safe for concurrent use.
type Guard struct {
	cfg     *Config
	lock    *Lock
	store   TOFUStore
	log     *slog.Logger
	onDrift func(string, Class, Action)
	now     func() time.Time

	mu sync.Mutex
	// tofu caches pins read from or written to the store: a pin set with SET NX never changes,
	// so each is fetched once per replica.
	tofu map[itemRef]*Definition
	// drift is the current drift per backend and item, for the audit line (logged when it
	// appears or changes), the admin endpoint and /readyz.
	drift map[string]map[itemRef]*DriftRecord
}

// itemRef names one item of one backend.
type itemRef struct {
	backend string
	kind    Kind
	key     string
}

// DriftRecord is one item's current drift, as the admin endpoint lists it.
type DriftRecord struct {
	Backend string    `json:"backend"`
	Kind    Kind      `json:"kind"`
	Key     string    `json:"name"`
	Classes []Class   `json:"classes"`
	Action  Action    `json:"action"`
	Pinned  string    `json:"pinned,omitempty"`
	Current string    `json:"current,omitempty"`
	Since   time.Time `json:"since"`

	set Set
}

// BackendState is one backend's pinning state for /readyz.
type BackendState struct {
	Mode      Mode `json:"mode"`
	Drifted   int  `json:"drifted"`
	Blocked   int  `json:"blocked"`
	Confirmed int  `json:"confirmed"`
}

// NewGuard checks that every backend's mode has what it needs and returns the guard.
func NewGuard(o GuardOptions) (*Guard, error) {
	if o.Config == nil {
		return nil, errors.New("pins: no configuration")
	}
	var errs []error
	for _, b := range o.Backends {
		switch o.Config.ModeFor(b) {
		case ModeLockfile:
			if o.Lock == nil {
				errs = append(errs, fmt.Errorf("pins: backend %q is in lockfile mode but no lock file is loaded", b))
			} else if o.Lock.Backends[b] == nil {
				// A backend missing from the lock file would have every item held as new;
				// say so at start-up rather than on the first list.
				errs = append(errs, fmt.Errorf("pins: backend %q is in lockfile mode but the lock file has no section for it (run 'gateway pins write')", b))
			}
		case ModeTOFU:
			if o.Store == nil {
				errs = append(errs, fmt.Errorf("pins: backend %q is in tofu mode but there is no shared store", b))
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	g := &Guard{cfg: o.Config, lock: o.Lock, store: o.Store, log: o.Logger, onDrift: o.OnDrift, now: o.Now,
		tofu: map[itemRef]*Definition{}, drift: map[string]map[itemRef]*DriftRecord{}}
	if g.log == nil {
		g.log = slog.New(slog.DiscardHandler)
	}
	if g.now == nil {
		g.now = time.Now
	}
	return g, nil
}

// Enabled reports whether backend's definitions are checked.
func (g *Guard) Enabled(backend string) bool {
	return g != nil && g.cfg.ModeFor(backend) != ModeOff
}

// Listed is one item of a backend's list as CheckList takes it: its definition, or why it
// could not be fingerprinted.
type Listed struct {
	Key string
	Def *Definition // nil when Err is set
	Err error
}

// CheckList compares one complete list of backend (tools, prompts or resource templates) with
// the pins and returns the verdict of every listed item by key. Items not listed that are
// pinned are recorded as removed (their pin stays). An item that cannot be fingerprinted, or
// a key listed twice, is blocked: what it is cannot be told. In tofu mode, items seen for the
// first time are pinned in the store; a store that does not answer is ErrStoreUnavailable,
// and the caller must then serve none of the list.
func (g *Guard) CheckList(ctx context.Context, backend string, kind Kind, items []Listed) (map[string]Verdict, error) {
	if !g.Enabled(backend) {
		return nil, nil
	}
	out := make(map[string]Verdict, len(items))
	seen := make(map[string]int, len(items))
	for _, it := range items {
		seen[it.Key]++
	}
	for _, it := range items {
		if it.Err != nil || seen[it.Key] > 1 {
			v := Verdict{Classes: Set(0).Add(ClassOtherChanged), Action: ActionBlock}
			if it.Def != nil {
				v.Current = it.Def.Fingerprint
			}
			out[it.Key] = v
			continue
		}
		pinned, err := g.pinFor(ctx, backend, kind, it.Def)
		if err != nil {
			return nil, err
		}
		out[it.Key] = g.verdict(backend, pinned, it.Def)
	}
	removed := map[string]Verdict{}
	for _, key := range g.pinnedKeys(backend, kind) {
		if _, ok := out[key]; !ok {
			removed[key] = g.Unlisted(backend, kind, key)
		}
	}
	g.record(backend, kind, out, removed)
	return out, nil
}

// CheckInstructions compares a backend's server instructions ("" for none) with their pin.
func (g *Guard) CheckInstructions(ctx context.Context, backend, instructions string) (Verdict, error) {
	if !g.Enabled(backend) {
		return Verdict{}, nil
	}
	var cur *Definition
	if instructions != "" {
		var err error
		if cur, err = FromInstructions(instructions); err != nil {
			return Verdict{Action: ActionBlock, Classes: Set(0).Add(ClassOtherChanged)}, nil
		}
	}
	var pinned *Definition
	if cur != nil {
		var err error
		if pinned, err = g.pinFor(ctx, backend, KindInstructions, cur); err != nil {
			return Verdict{}, err
		}
	} else if g.cfg.ModeFor(backend) == ModeLockfile {
		pinned = g.lock.Backends[backend].Get(KindInstructions, "")
	}
	v := g.verdict(backend, pinned, cur)
	g.record(backend, KindInstructions, map[string]Verdict{"": v}, nil)
	return v, nil
}

// Unlisted is the verdict on an item its backend does not list (a call to a name the caller
// was never shown, or a pinned item that went away): removed when it is pinned, new otherwise.
func (g *Guard) Unlisted(backend string, kind Kind, key string) Verdict {
	if !g.Enabled(backend) {
		return Verdict{}
	}
	pinned := g.Pinned(backend, kind, key)
	if pinned == nil {
		// Neither listed nor pinned: a name the backend may serve without showing it. Held
		// as new, like a listed item without a pin.
		v := Verdict{Classes: Set(0).Add(ClassNew)}
		v.Action, _ = g.cfg.ActionFor(backend, v.Classes)
		return v
	}
	return g.verdict(backend, pinned, nil)
}

// Pinned returns the pin of one item as this replica knows it: from the lock file, or in tofu
// mode the pin read from or written to the store when a list of the backend was last checked
// here; nil when the item is not pinned, the backend is not pinned, or (tofu) this replica has
// not checked a list holding it. It never asks the store: what a page shows must not wait on it.
func (g *Guard) Pinned(backend string, kind Kind, key string) *Definition {
	if !g.Enabled(backend) {
		return nil
	}
	switch g.cfg.ModeFor(backend) {
	case ModeLockfile:
		return g.lock.Backends[backend].Get(kind, key)
	case ModeTOFU:
		g.mu.Lock()
		defer g.mu.Unlock()
		return g.tofu[itemRef{backend, kind, key}]
	}
	return nil
}

func (g *Guard) verdict(backend string, pinned, current *Definition) Verdict {
	v := Verdict{Classes: Classify(pinned, current)}
	v.Action, _ = g.cfg.ActionFor(backend, v.Classes)
	if pinned != nil {
		v.Pinned = pinned.Fingerprint
	}
	if current != nil {
		v.Current = current.Fingerprint
	}
	return v
}

// pinFor returns the pin of cur: from the lock file, or in tofu mode the first definition any
// replica stored, storing cur when there is none.
func (g *Guard) pinFor(ctx context.Context, backend string, kind Kind, cur *Definition) (*Definition, error) {
	if g.cfg.ModeFor(backend) == ModeLockfile {
		return g.lock.Backends[backend].Get(kind, cur.Key), nil
	}
	ref := itemRef{backend, kind, cur.Key}
	g.mu.Lock()
	p := g.tofu[ref]
	g.mu.Unlock()
	if p != nil {
		return p, nil
	}
	stored, existing, err := g.store.SetNX(ctx, tofuKey(ref), cur.Canonical)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrStoreUnavailable, err)
	}
	p = cur
	if !stored {
		if p, err = FromCanonical(kind, cur.Key, existing); err != nil {
			// The store holds something no replica wrote: fail closed on it as on drift of
			// every class rather than trust the current definition.
			return nil, fmt.Errorf("%w: stored pin of %s %s %q does not load: %w", ErrStoreUnavailable, backend, kind, cur.Key, err)
		}
	}
	g.mu.Lock()
	g.tofu[ref] = p
	g.mu.Unlock()
	return p, nil
}

// tofuKey is the store key of a trust-on-first-use pin. The parts are length-prefixed, so no
// backend or item name can make two items share a key.
func tofuKey(r itemRef) string {
	return fmt.Sprintf("pin:v1:%d:%s:%s:%d:%s", len(r.backend), r.backend, r.kind, len(r.key), r.key)
}

// pinnedKeys lists the keys of kind pinned for backend: the lock file's, or in tofu mode the
// pins this replica has seen.
func (g *Guard) pinnedKeys(backend string, kind Kind) []string {
	if g.cfg.ModeFor(backend) == ModeLockfile {
		return g.lock.Backends[backend].Keys(kind)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	var keys []string
	for r := range g.tofu {
		if r.backend == backend && r.kind == kind {
			keys = append(keys, r.key)
		}
	}
	sort.Strings(keys)
	return keys
}

// record updates backend's drift for one list (kind) and writes one audit line, and counts the
// drift, for each item whose drift appeared or changed since the last list: never per request.
func (g *Guard) record(backend string, kind Kind, listed, removed map[string]Verdict) {
	type event struct {
		ref itemRef
		v   Verdict
	}
	var events []event
	now := g.now()
	g.mu.Lock()
	m := g.drift[backend]
	if m == nil {
		m = map[itemRef]*DriftRecord{}
		g.drift[backend] = m
	}
	still := map[itemRef]bool{}
	for _, vs := range []map[string]Verdict{listed, removed} {
		for key, v := range vs {
			if v.Classes.Empty() {
				continue
			}
			ref := itemRef{backend, kind, key}
			still[ref] = true
			if old := m[ref]; old != nil && old.set == v.Classes && old.Current == v.Current && old.Pinned == v.Pinned {
				continue
			}
			m[ref] = &DriftRecord{Backend: backend, Kind: kind, Key: key, Classes: v.Classes.Classes(), Action: v.Action,
				Pinned: v.Pinned, Current: v.Current, Since: now, set: v.Classes}
			events = append(events, event{ref, v})
		}
	}
	for ref := range m {
		if ref.kind == kind && !still[ref] {
			delete(m, ref)
		}
	}
	g.mu.Unlock()
	sort.Slice(events, func(i, j int) bool { return events[i].ref.key < events[j].ref.key })
	for _, e := range events {
		g.log.Warn("pin drift", "backend", backend, "kind", string(kind), "name", e.ref.key,
			"classes", e.v.Classes.String(), "action", string(e.v.Action),
			"pinned", e.v.Pinned, "current", e.v.Current)
		if g.onDrift != nil {
			for _, cl := range e.v.Classes.Classes() {
				g.onDrift(backend, cl, e.v.Action)
			}
		}
	}
}

// Drift lists the current drift of every backend, sorted by backend, kind and name.
func (g *Guard) Drift() []DriftRecord {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	out := []DriftRecord{}
	for _, m := range g.drift {
		for _, r := range m {
			out = append(out, *r)
		}
	}
	g.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Backend != b.Backend {
			return a.Backend < b.Backend
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		return a.Key < b.Key
	})
	return out
}

// State returns backend's pinning state, nil when its definitions are not checked.
func (g *Guard) State(backend string) *BackendState {
	if !g.Enabled(backend) {
		return nil
	}
	s := &BackendState{Mode: g.cfg.ModeFor(backend)}
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, r := range g.drift[backend] {
		s.Drifted++
		switch r.Action {
		case ActionBlock:
			s.Blocked++
		case ActionConfirm:
			s.Confirmed++
		}
	}
	return s
}
