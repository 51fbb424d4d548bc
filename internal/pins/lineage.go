package pins

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"
)

// A shared store that lost its memory (a Redis restarted without persistence, failed over to
// an empty instance, flushed) has forgotten every backend's record, and nothing left in it
// tells a first contact after the loss from the first contact ever. The replicas that read a
// record before still hold it. So:
//
//   - each replica asks the store, every watch interval, when its current memory began (the
//     marker that keeps confirmations single-use across such a loss, GuardOptions.Began) and,
//     when that is not the memory it last saw, writes back every kind of pins it holds that the
//     store's record lacks (Reassert), whether or not a caller lists the backend;
//   - a first contact waits until the store's memory is older than the restore window
//     (Config.RestoreWindow, several watch intervals), so that a replica holding no record (one
//     started or reloaded after the loss, or never sent to that backend) does not pin the list
//     of that moment while a replica holding the record has yet to write it back. Its items
//     are unverified meanwhile: left out of lists, calls refused as unavailable, retryable;
//     but this is not drift (Verdict.Waiting): a new deployment waits so too, and an alert on
//     drift must not fire for it. The wait is logged and counted (OnRestoreWait) on its own.
//
// When no replica holds the record (all of them restarted after the loss), the first contact
// after the window pins what the lock file holds for the backend, when a lock file is loaded
// and has its section, and otherwise the list of that moment: nothing tells that store from a
// new one.

// errRestoreWindow is why a first contact waits.
var errRestoreWindow = errors.New("the shared store's memory began less than the restore window ago; waiting for replicas holding pins to write them back")

// Bounds of the watch interval: a third of the restore window, so that a replica holding pins
// asks several times within it.
const (
	maxWatchInterval = 10 * time.Second
	minWatchInterval = 100 * time.Millisecond
)

// watchInterval is how often Watch asks the store when its memory began.
func (c *Config) watchInterval() time.Duration {
	w := c.restoreWindow() / 3
	if w <= 0 || w > maxWatchInterval {
		return maxWatchInterval
	}
	return max(w, minWatchInterval)
}

// Watch runs Reassert every watch interval until ctx ends. It returns at once when the guard
// was given no Began (the store's memory is this process's own) or no backend is in tofu mode.
func (g *Guard) Watch(ctx context.Context) {
	if g == nil || g.began == nil || !g.cfg.AnyTOFU(g.backends) {
		return
	}
	t := time.NewTicker(g.cfg.watchInterval())
	defer t.Stop()
	for {
		// A store that does not answer is asked again at the next tick; the list path says
		// so in the log.
		_ = g.Reassert(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Reassert asks the store when its memory began and, when that is not the memory this replica
// last saw, writes back, for every backend, the kinds of pins this replica holds that the
// store's record lacks. It takes the new memory as seen only once every backend's were
// written back, so a failure is tried again by the next call.
func (g *Guard) Reassert(ctx context.Context) error {
	if g == nil || g.began == nil {
		return nil
	}
	began, err := g.began(ctx)
	if err != nil {
		return err
	}
	g.mu.Lock()
	known := g.epoch
	if known.IsZero() {
		g.epoch = began
	}
	var held []string
	for ref, st := range g.tofu {
		if st.m != nil && !slices.Contains(held, ref.backend) {
			held = append(held, ref.backend)
		}
	}
	g.mu.Unlock()
	if known.IsZero() || known.Equal(began) {
		return nil
	}
	slices.Sort(held)
	for _, b := range held {
		if err := g.reassertBackend(ctx, b); err != nil {
			return err
		}
	}
	g.mu.Lock()
	g.epoch = began
	g.mu.Unlock()
	return nil
}

// reassertBackend writes back the kinds of backend's pins this replica holds and the store's
// record lacks. A record that does not open is left alone (the list path refuses its items).
func (g *Guard) reassertBackend(ctx context.Context, backend string) error {
	for range firstContactAttempts {
		raw, found, ms, err := ReadManifests(ctx, g.store.Get, g.sealer, backend)
		switch {
		case errors.Is(err, ErrManifest):
			return nil
		case err != nil:
			return err
		}
		done, err := g.restore(ctx, backend, raw, found, ms)
		if err != nil {
			return err
		}
		if !done {
			continue // written back, or another writer came first: read what is there now
		}
		g.warnOtherPins(backend, ms)
		return nil
	}
	return fmt.Errorf("pins: the stored pins of %s kept changing while this replica wrote them back", backend)
}

// warnOtherPins logs the kinds for which the record found in a store whose memory began anew
// (ms) holds other pins than this replica held: written by another replica that held other
// ones (an approval one of them had not read), or by a first contact made while no replica
// holding them reached the store within the restore window; the operator tells which.
func (g *Guard) warnOtherPins(backend string, ms map[Kind]*Manifest) {
	var other []string
	g.mu.Lock()
	for _, k := range Kinds() {
		st := g.tofu[manifestRef{backend, k}]
		if st != nil && st.m != nil && ms[k] != nil && !samePins(st.m, ms[k]) {
			other = append(other, string(k))
		}
	}
	g.mu.Unlock()
	if len(other) > 0 {
		g.log.Warn("pins: the shared store lost its data and now holds other pins for this backend than this replica held; check GET /pins and approve again what was not approved",
			"backend", backend, "kinds", other)
	}
}

// samePins reports whether a and b pin the same keys to the same fingerprints.
func samePins(a, b *Manifest) bool {
	return maps.EqualFunc(a.Pins, b.Pins, func(x, y *Definition) bool { return x.Fingerprint == y.Fingerprint })
}

// awaitRestore holds a first contact with backend back while the shared store's memory is
// younger than the restore window: a replica holding the pins the store forgot may have yet
// to write them back, and the list of this moment would otherwise be pinned, drifted items
// included. The error wraps errUnverified then; a store that does not answer, any other error.
func (g *Guard) awaitRestore(ctx context.Context, backend string) error {
	window := g.cfg.restoreWindow()
	if g.began == nil || window <= 0 {
		return nil
	}
	began, err := g.began(ctx)
	if err != nil {
		return err
	}
	if g.now().Sub(began) >= window {
		return nil
	}
	g.mu.Lock()
	logged := g.waiting[backend].Equal(began)
	g.waiting[backend] = began
	g.mu.Unlock()
	if !logged {
		if g.onWait != nil {
			g.onWait(backend)
		}
		g.log.Warn("pins: the shared store's memory is new (a new store, or one that lost its data); the backend's first contact waits for replicas holding its pins to write them back, its items refused meanwhile",
			"backend", backend, "store_memory_began", began, "until", began.Add(window))
	}
	return fmt.Errorf("%w: %w", errUnverified, errRestoreWindow)
}

// lockManifest is the manifest of kind that the loaded lock file holds for backend (pinned on
// first use), which a first contact takes in place of the backend's list: what the operator
// reviewed ('gateway pins write' writes every backend whose pins are on) outlives a store that
// lost its data with every replica. nil when the lock file has no section for the backend, or
// the section's items of kind go beyond the bounds of what is pinned on first use (the
// backend's list is pinned then, within them).
func (g *Guard) lockManifest(backend string, kind Kind) *Manifest {
	if g.lock == nil || g.lock.Backends[backend] == nil {
		return nil
	}
	b := g.lock.Backends[backend]
	m := &Manifest{Backend: backend, Kind: kind, Pins: map[string]*Definition{}}
	if kind == KindInstructions {
		if b.Instructions != nil {
			m.Pins[""] = b.Instructions
		}
	} else {
		maps.Copy(m.Pins, b.Items[kind])
	}
	if err := g.cfg.Fits(m); err != nil {
		g.log.Warn("pins: the lock file's section for this backend goes beyond the bounds of trust on first use; its first contact pins its list",
			"backend", backend, "kind", string(kind), "error", err)
		return nil
	}
	return m
}

// inherit takes over the trust-on-first-use pins prev holds for backends this guard pins on
// first use too (a reload), and the store memory prev last saw: a reload must not make a
// replica forget what it could write back.
func (g *Guard) inherit(prev *Guard) {
	prev.mu.Lock()
	defer prev.mu.Unlock()
	for ref, st := range prev.tofu {
		if st.m != nil && g.cfg.ModeFor(ref.backend) == ModeTOFU && slices.Contains(g.backends, ref.backend) {
			cp := *st
			cp.failing = false
			g.tofu[ref] = &cp
		}
	}
	g.epoch = prev.epoch
}
