package pins

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"
)

// This file is pinning on the request path: a Guard compares every list a backend sends with
// the pins (the lock file, or the shared store in trust-on-first-use mode) once per list fetch,
// and answers for each item what the gateway must do with it. The gateway caches the answers
// with the list, so a call costs a map lookup, never a fingerprint.

// tofuRecheck is how long a replica uses the trust-on-first-use manifest it read before it
// reads it again (on the list path), so that an operator's approval reaches every replica.
const tofuRecheck = time.Minute

// errUnverified is why an item's pin cannot be read.
var errUnverified = errors.New("pins: cannot verify")

// Ref names one item of one backend.
type Ref struct {
	Backend string `json:"backend"`
	Kind    Kind   `json:"kind"`
	Key     string `json:"name"`
}

// Verdict is what the gateway does with one listed item.
type Verdict struct {
	// Action is the strongest action the item's classes call for; "" when it matches its pin.
	Action Action
	// Classes name the drift (ClassInvisible included whatever the pin says).
	Classes Set
	// Pinned and Current are the fingerprints ("" when there is no pin, or no current
	// definition).
	Pinned, Current string
	// Shadows is the tool, or prompt, of another backend this one nearly duplicates
	// (ClassShadows).
	Shadows *Ref
	// Waiting is set on an unverified item whose backend's first contact waits for the
	// restore window (lineage.go): refused like any unverified item, but not drift, so not
	// logged as such nor counted by OnDrift (GuardOptions.OnRestoreWait counts the wait).
	Waiting bool
}

// Blocked reports whether the item is hidden from lists and calls to it refused.
func (v Verdict) Blocked() bool { return v.Action == ActionBlock }

// Confirm reports whether each call to the item goes through the gateway's confirmation.
func (v Verdict) Confirm() bool { return v.Action == ActionConfirm }

// Unverified reports whether the item is refused because its pin cannot be read: a call is
// answered as unavailable and may be retried.
func (v Verdict) Unverified() bool { return v.Classes.Has(ClassUnverified) }

// GuardOptions are what NewGuard takes.
type GuardOptions struct {
	// Config is the validated pins section.
	Config *Config
	// Lock is the loaded lock file; required when any backend is in lockfile mode.
	Lock *Lock
	// Store holds trust-on-first-use pins, and Sealer seals them (PurposeManifest); both
	// required when any backend is in tofu mode.
	Store  TOFUStore
	Sealer Sealer
	// Backends are the configured backend names.
	Backends []string
	// Logger receives one audit line per detected drift.
	Logger *slog.Logger
	// OnDrift, when set, is called once per class of each detected drift (not per request),
	// with the action taken on the item (the strongest of its classes'); it must not block.
	OnDrift func(backend string, class Class, action Action)
	// OnRestoreWait, when set, is called when a backend's first contact starts waiting for
	// the restore window of a store memory (once per backend and memory, where the wait is
	// logged); it must not block. Items withheld by that wait are not drift (Verdict.Waiting).
	OnRestoreWait func(backend string)
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Began returns when the shared store's current memory began (the marker a store that
	// lost its data is told by, mrtr.EpochGuard.Began); nil when the store's memory is this
	// process's own. With it, replicas write back the pins a store forgot (Watch) and a first
	// contact waits for them (Config.RestoreWindow).
	Began func(context.Context) (time.Time, error)
	// Previous is the guard this one replaces (a reload): the trust-on-first-use pins it holds
	// are carried over.
	Previous *Guard
}

// Guard checks backend definitions against their pins. It is safe for concurrent use.
type Guard struct {
	cfg      *Config
	lock     *Lock
	store    TOFUStore
	sealer   Sealer
	log      *slog.Logger
	onDrift  func(string, Class, Action)
	onWait   func(string)
	now      func() time.Time
	backends []string // sorted
	// lockIndex are the lockfile backends' pinned tools and prompts, for shadowing.
	lockIndex map[manifestRef]*shadowIndex

	mu sync.Mutex
	// tofu caches the manifests read from or written to the store.
	tofu map[manifestRef]*manifestState
	// drift is the current drift per backend (record.go).
	drift map[string]*backendDrift
	// began, epoch and waiting are for a store that loses its memory (lineage.go): when the
	// store's memory began as this replica last saw it, and as a first contact of each
	// backend last waited on it (logged once).
	began   func(context.Context) (time.Time, error)
	epoch   time.Time
	waiting map[string]time.Time
}

type manifestRef struct {
	backend string
	kind    Kind
}

// manifestState is a manifest as this replica last read it; m is nil when the store held none.
type manifestState struct {
	m       *Manifest
	readAt  time.Time
	index   *shadowIndex // tools and prompts only (ShadowKind)
	failing bool         // the last read failed (logged once per outage)
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
			if o.Store == nil || o.Sealer == nil {
				errs = append(errs, fmt.Errorf("pins: backend %q is in tofu mode but there is no shared store or sealing key", b))
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	g := &Guard{cfg: o.Config, lock: o.Lock, store: o.Store, sealer: o.Sealer, log: o.Logger, onDrift: o.OnDrift, onWait: o.OnRestoreWait, now: o.Now,
		backends: slices.Sorted(slices.Values(o.Backends)), lockIndex: map[manifestRef]*shadowIndex{},
		tofu: map[manifestRef]*manifestState{}, drift: map[string]*backendDrift{}, began: o.Began, waiting: map[string]time.Time{}}
	if g.log == nil {
		g.log = slog.New(slog.DiscardHandler)
	}
	if g.now == nil {
		g.now = time.Now
	}
	if o.Previous != nil {
		g.inherit(o.Previous)
	}
	for _, b := range g.backends {
		if g.cfg.ModeFor(b) == ModeLockfile {
			for _, kind := range shadowKinds() {
				g.lockIndex[manifestRef{b, kind}] = newShadowIndex(g.lock.Backends[b].Items[kind])
			}
		}
	}
	return g, nil
}

// Enabled reports whether backend's definitions are checked.
func (g *Guard) Enabled(backend string) bool {
	return g != nil && g.cfg.ModeFor(backend) != ModeOff
}

// JudgesShadows reports whether backend's tools and prompts (ShadowKind) are compared with the
// pinned ones of the other backends although its own definitions are not checked: its pinning
// is off while another backend's is on. A copy of a pinned tool or prompt is held whoever lists
// it, and a backend that cannot be pinned (per-user OAuth, token exchange) is no less likely to
// list one.
func (g *Guard) JudgesShadows(backend string) bool {
	if g == nil || g.Enabled(backend) {
		return false
	}
	for _, b := range g.backends {
		if b != backend && g.Enabled(b) {
			return true
		}
	}
	return false
}

// checkShadows judges the tools or prompts (kind) of a backend whose pinning is off
// (JudgesShadows) on shadowing alone: an item that nearly duplicates a pinned one of another
// backend is ClassShadows, with the action the configuration gives that class for this
// backend; every other item gets the zero verdict, as a backend that is not pinned does, and so
// does an item that cannot be fingerprinted (this backend's definitions are served as listed).
// A name listed twice takes the stronger of its verdicts.
func (g *Guard) checkShadows(ctx context.Context, backend string, kind Kind, items []Listed) map[string]Verdict {
	out := make(map[string]Verdict, len(items))
	for _, it := range items {
		var v Verdict
		if it.Def != nil {
			if r, ok := g.shadowed(ctx, backend, kind, it.Def); ok {
				v = Verdict{Classes: Set(0).Add(ClassShadows), Shadows: &r, Current: it.Def.Fingerprint}
				v.Action, _ = g.cfg.ActionFor(backend, v.Classes)
			}
		}
		if old, dup := out[it.Key]; dup && old.Action.rank() >= v.Action.rank() {
			continue
		}
		out[it.Key] = v
	}
	g.record(backend, kind, out, nil)
	return out
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
// a key listed twice, is blocked: what it is cannot be told. A tool or prompt that is not
// pinned and nearly duplicates a pinned one of its kind of another backend is flagged
// ClassShadows.
//
// In tofu mode the first list of a backend pins its items (first contact); later items are
// new. When the pins cannot be read (the store does not answer and this replica has not read
// them before, or they do not open) every item is ClassUnverified: blocked, and refused as
// unavailable; items of other backends are not affected (nor, while the store is down, the
// kinds this replica read before).
func (g *Guard) CheckList(ctx context.Context, backend string, kind Kind, items []Listed) map[string]Verdict {
	if !g.Enabled(backend) {
		if !ShadowKind(kind) || !g.JudgesShadows(backend) {
			return nil
		}
		return g.checkShadows(ctx, backend, kind, items)
	}
	pinned, err := g.pinsOf(ctx, backend, kind, items)
	out := make(map[string]Verdict, len(items))
	seen := make(map[string]int, len(items))
	for _, it := range items {
		seen[it.Key]++
	}
	for _, it := range items {
		switch {
		case it.Err != nil || seen[it.Key] > 1:
			v := Verdict{Classes: Set(0).Add(ClassOtherChanged), Action: ActionBlock}
			if it.Def != nil {
				v.Current = it.Def.Fingerprint
			}
			out[it.Key] = v
		case err != nil:
			out[it.Key] = g.unverified(backend, it.Def, err)
		default:
			p := pinned[it.Key]
			var extra Set
			var shadows *Ref
			if p == nil && ShadowKind(kind) {
				if r, ok := g.shadowed(ctx, backend, kind, it.Def); ok {
					extra, shadows = extra.Add(ClassShadows), &r
				}
			}
			v := g.verdict(backend, p, it.Def, extra)
			v.Shadows = shadows
			out[it.Key] = v
		}
	}
	removed := map[string]Verdict{}
	for key, p := range pinned {
		if _, ok := out[key]; !ok {
			removed[key] = g.verdict(backend, p, nil, 0)
		}
	}
	g.record(backend, kind, out, removed)
	return out
}

// CheckInstructions compares a backend's server instructions ("" for none) with their pin.
// Instructions that cannot be verified are ClassUnverified.
func (g *Guard) CheckInstructions(ctx context.Context, backend, instructions string) Verdict {
	if !g.Enabled(backend) {
		return Verdict{}
	}
	var cur *Definition
	var items []Listed
	if instructions != "" {
		var err error
		if cur, err = FromInstructions(instructions); err != nil {
			return Verdict{Action: ActionBlock, Classes: Set(0).Add(ClassOtherChanged)}
		}
		items = []Listed{{Key: "", Def: cur}}
	}
	pinned, err := g.pinsOf(ctx, backend, KindInstructions, items)
	var v Verdict
	if err != nil {
		v = g.unverified(backend, cur, err)
	} else {
		v = g.verdict(backend, pinned[""], cur, 0)
	}
	g.record(backend, KindInstructions, map[string]Verdict{"": v}, nil)
	return v
}

// Unlisted is the verdict on an item its backend does not list (a call to a name the caller
// was never shown, or a pinned item that went away): removed when it is pinned, new otherwise.
// It never asks the store.
func (g *Guard) Unlisted(backend string, kind Kind, key string) Verdict {
	if !g.Enabled(backend) {
		return Verdict{}
	}
	// Neither listed nor pinned: a name the backend may serve without showing it is held as
	// new, like a listed item without a pin.
	p := g.Pinned(backend, kind, key)
	if p == nil {
		return g.verdict(backend, nil, nil, Set(0).Add(ClassNew))
	}
	return g.verdict(backend, p, nil, 0)
}

// Pinned returns the pin of one item as this replica knows it: from the lock file, or in tofu
// mode from the manifest this replica last read; nil when the item is not pinned, the backend
// is not pinned, or (tofu) this replica has not read the backend's pins. It never asks the
// store: what a page shows must not wait on it.
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
		if st := g.tofu[manifestRef{backend, kind}]; st != nil && st.m != nil {
			return st.m.Pins[key]
		}
	}
	return nil
}

// verdict classifies current against pinned, with the extra classes, and takes the action.
func (g *Guard) verdict(backend string, pinned, current *Definition, extra Set) Verdict {
	v := Verdict{Classes: extra}
	if !extra.Has(ClassUnverified) {
		v.Classes |= Classify(pinned, current)
	} else if current != nil && len(current.Findings) > 0 {
		v.Classes = v.Classes.Add(ClassInvisible)
	}
	v.Action, _ = g.cfg.ActionFor(backend, v.Classes)
	if pinned != nil {
		v.Pinned = pinned.Fingerprint
	}
	if current != nil {
		v.Current = current.Fingerprint
	}
	return v
}

// unverified is the verdict on current when backend's pins could not be read (err): Waiting
// when err is the restore window's wait.
func (g *Guard) unverified(backend string, current *Definition, err error) Verdict {
	v := g.verdict(backend, nil, current, Set(0).Add(ClassUnverified))
	v.Waiting = errors.Is(err, errRestoreWindow)
	return v
}

// pinsOf returns backend's pins of kind: the lock file's, or in tofu mode the manifest's (with
// first contact when the store holds none and items is the backend's list).
func (g *Guard) pinsOf(ctx context.Context, backend string, kind Kind, items []Listed) (map[string]*Definition, error) {
	if g.cfg.ModeFor(backend) == ModeLockfile {
		b := g.lock.Backends[backend]
		if kind == KindInstructions {
			if b == nil || b.Instructions == nil {
				return nil, nil
			}
			return map[string]*Definition{"": b.Instructions}, nil
		}
		return b.Items[kind], nil
	}
	st, err := g.manifest(ctx, backend, kind, items, true)
	if err != nil || st.m == nil {
		return nil, err
	}
	return st.m.Pins, nil
}

// shadowed returns the pinned item of kind (a tool or a prompt) of another pinned backend that
// d nearly duplicates: of the backends in name order, the first one's least matching item.
func (g *Guard) shadowed(ctx context.Context, backend string, kind Kind, d *Definition) (Ref, bool) {
	sig := itemSig(d)
	for _, other := range g.backends {
		if other == backend || !g.Enabled(other) {
			continue
		}
		idx := g.lockIndex[manifestRef{other, kind}]
		if g.cfg.ModeFor(other) == ModeTOFU {
			// Another backend's manifest, read (never written) here: a backend whose first
			// contact has not happened has no pinned items to shadow.
			if st, err := g.manifest(ctx, other, kind, nil, false); err == nil {
				idx = st.index
			}
		}
		if idx == nil {
			continue
		}
		if key, ok := idx.match(sig); ok {
			return Ref{Backend: other, Kind: kind, Key: key}, true
		}
	}
	return Ref{}, false
}
