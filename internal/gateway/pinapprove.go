package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcp-gateway/gateway/internal/pins"
	"github.com/mcp-gateway/gateway/internal/store"
)

// pinAdmin runs the operator's commands on trust-on-first-use pins ('pins approve', 'pins
// reseal').
type pinAdmin struct {
	// beforeWrite, when set, runs after a manifest was read and before what was made of it is
	// written back, with the manifest's store key: tests land another writer there.
	beforeWrite func(key string)
}

// manifestAttempts bounds how often a command reads a manifest again after another writer
// changed it between the command's read and its write.
const manifestAttempts = 5

// errManifestBusy is why a command gave up on a manifest that kept changing under it.
var errManifestBusy = errors.New("pins: the stored pins kept changing while this command wrote them")

// approvePins is 'gateway pins approve --backend NAME [--item KIND/NAME]…': the operator pins,
// in the shared store, the definitions a trust-on-first-use backend lists now: the named items
// (added to its pins), or without --item its whole current lists (which replace its pins).
// A replica uses them from its first fetch of that backend's list a minute or more after it
// last read the pins.
func approvePins(ctx context.Context, inv invocation, args []string) error {
	return pinAdmin{}.approve(ctx, inv, args)
}

// resealPins is 'gateway pins reseal': every trust-on-first-use manifest in the store is opened
// and sealed again under the newest key, unchanged, so that an older key can leave mrtr.keys.
func resealPins(ctx context.Context, inv invocation, args []string) error {
	return pinAdmin{}.reseal(ctx, inv, args)
}

func (a pinAdmin) approve(ctx context.Context, inv invocation, args []string) error {
	cf := newConfigFlags("pins approve", "Pin, in the shared store, what a trust-on-first-use backend lists now: the items named\n"+
		"by --item, or without --item its whole lists (which replace its pins).", inv)
	cf.noListener = true
	var backend string
	cf.fs.StringVar(&backend, "backend", "", "the trust-on-first-use backend to approve, by its `NAME` (required)")
	var items []string
	cf.fs.Func("item", "an `ITEM` to pin: tool/NAME, prompt/NAME, resourceTemplate/URI, uiResource/URI or\ninstructions (repeatable)", func(v string) error {
		items = append(items, v)
		return nil
	})
	if err := cf.parse(args); err != nil {
		return err
	}
	if backend == "" {
		return errors.New("pins approve: --backend is required")
	}
	getenv, stdout, stderr := inv.getenv, inv.stdout, inv.stderr
	cfg, err := cf.load(getenv)
	if err != nil {
		return err
	}
	st, sealer, err := tofuAdmin(cfg, backend, getenv)
	if err != nil {
		return err
	}
	defer st.Close()
	want, err := parseItems(items)
	if err != nil {
		return err
	}
	current, err := fetchPins(ctx, cfg, getenv, backend)
	if err != nil {
		return err
	}
	warnInvisible(stderr, current)
	cur := current.Backends[backend]
	w := manifestWriter{pinAdmin: a, st: st, sealer: sealer, backend: backend}
	n, err := approveAll(ctx, w, cfg.Pins, cur, want, stdout)
	if err != nil {
		return err
	}
	if len(want) > 0 {
		var missing []string
		for ref := range want {
			missing = append(missing, fmt.Sprintf("%s %q", ref.kind, ref.key))
		}
		sort.Strings(missing)
		return fmt.Errorf("pins approve: not listed by %s now (nothing written for them): %s", backend, strings.Join(missing, ", "))
	}
	fmt.Fprintf(stdout, "approved %d change(s) to the pins of %s; replicas use them from their next fetch of its lists a minute or more after they last read the pins\n", n, backend)
	return nil
}

// approveKind makes the manifest of one kind with the approved items of the one stored (s,
// possibly nil) and returns it with the report of each change; none when nothing changes.
// want's entries of kind were picked (and removed) by the caller.
func approveKind(w manifestWriter, pc *pins.Config, kind pins.Kind, cur *pins.BackendPins, picked []string,
	want map[itemRef]bool, s storedManifests) (*pins.Manifest, []string, error) {
	var report []string
	old := s.ms[kind]
	switch {
	case s.err != nil && want != nil:
		return nil, nil, fmt.Errorf("%w; approve the whole backend (without --item) to pin it again", s.err)
	case old == nil:
		old = &pins.Manifest{Backend: w.backend, Kind: kind, Pins: map[string]*pins.Definition{}}
	}
	next := &pins.Manifest{Backend: w.backend, Kind: kind, Pins: map[string]*pins.Definition{}}
	if want != nil {
		maps.Copy(next.Pins, old.Pins)
	}
	for _, k := range picked {
		d := cur.Get(kind, k)
		next.Pins[k] = d
		if c := pins.Classify(old.Pins[k], d); !c.Empty() {
			report = append(report, fmt.Sprintf("pinned %s %q (%s)", kind, k, c))
		}
	}
	for _, k := range old.Keys() {
		if next.Pins[k] == nil {
			report = append(report, fmt.Sprintf("unpinned %s %q (no longer listed)", kind, k))
		}
	}
	if len(report) == 0 && s.ms[kind] != nil && s.err == nil {
		return nil, nil, nil
	}
	return next, report, pc.Fits(next)
}

// approveAll writes the backend's record once with the approved items of every kind, and
// reports each change: a replica sees all of the approval or none of it. The changes are made
// of the record as the write finds it: pins a replica's first contact or another approval
// stored meanwhile stay (manifestWriter.update).
func approveAll(ctx context.Context, w manifestWriter, pc *pins.Config, cur *pins.BackendPins, want map[itemRef]bool, out io.Writer) (int, error) {
	picked := map[pins.Kind][]string{}
	for _, kind := range pins.Kinds() {
		for _, k := range cur.Keys(kind) {
			if ref := (itemRef{kind, k}); want == nil || want[ref] {
				picked[kind] = append(picked[kind], k)
				delete(want, ref)
			}
		}
	}
	var report []string
	_, err := w.update(ctx, func(s storedManifests) (map[pins.Kind]*pins.Manifest, error) {
		report = report[:0]
		next := maps.Clone(s.ms)
		if next == nil {
			next = map[pins.Kind]*pins.Manifest{}
		}
		changed := false
		for _, kind := range pins.Kinds() {
			m, lines, err := approveKind(w, pc, kind, cur, picked[kind], want, s)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", kind, err)
			}
			if m != nil {
				next[kind], changed = m, true
				report = append(report, lines...)
			}
		}
		if !changed {
			return nil, nil
		}
		return next, nil
	})
	if err != nil {
		return 0, fmt.Errorf("pins approve: %w", err)
	}
	for _, line := range report {
		fmt.Fprintln(out, line)
	}
	return len(report), nil
}

func (a pinAdmin) reseal(ctx context.Context, inv invocation, args []string) error {
	cf := newConfigFlags("pins reseal", "Seal every trust-on-first-use record in the shared store again under the newest of mrtr.keys.", inv)
	cf.noListener = true
	if err := cf.parse(args); err != nil {
		return err
	}
	getenv, stdout := inv.getenv, inv.stdout
	cfg, err := cf.load(getenv)
	if err != nil {
		return err
	}
	n := 0
	for _, backend := range cfg.upstreamNames() {
		if cfg.Pins == nil || cfg.Pins.ModeFor(backend) != pins.ModeTOFU {
			continue
		}
		st, sealer, err := tofuAdmin(cfg, backend, getenv)
		if err != nil {
			return err
		}
		w := manifestWriter{pinAdmin: a, st: st, sealer: sealer, backend: backend}
		wrote, err := w.update(ctx, func(s storedManifests) (map[pins.Kind]*pins.Manifest, error) {
			if len(s.ms) == 0 {
				return nil, s.err // nothing written when there is none
			}
			return s.ms, s.err // sealed again as it is
		})
		st.Close()
		if err != nil {
			return fmt.Errorf("pins reseal: %s: %w", backend, err)
		}
		if wrote {
			n++
		}
	}
	fmt.Fprintf(stdout, "sealed %d record(s) of pins under the newest key\n", n)
	return nil
}

// manifestWriter changes one backend's trust-on-first-use record in the shared store.
type manifestWriter struct {
	pinAdmin
	st      store.Store
	sealer  pins.Sealer
	backend string
}

// storedManifests is a backend's record as a command read it, a manifest per kind: ms is
// empty when the store holds none (found false) or it does not open (err, wrapping
// pins.ErrManifest). Without a record, ms holds the per-kind records of earlier releases.
type storedManifests struct {
	ms    map[pins.Kind]*pins.Manifest
	found bool
	err   error
}

// update writes the record change makes of the one stored (nothing when change returns none),
// once, every kind together, only while the store still holds what change was given: a
// replica's first contact, another operator's approval or reseal that wrote in between is read
// again and change called again with it, so no pin they stored is overwritten. It gives up
// after manifestAttempts such races. wrote reports whether it wrote.
func (w manifestWriter) update(ctx context.Context, change func(storedManifests) (map[pins.Kind]*pins.Manifest, error)) (wrote bool, err error) {
	key := pins.ManifestsKey(w.backend)
	for range manifestAttempts {
		raw, found, ms, err := pins.ReadManifests(ctx, w.st.Get, w.sealer, w.backend)
		s := storedManifests{ms: ms, found: found}
		switch {
		case errors.Is(err, pins.ErrManifest):
			s.ms, s.err = nil, err
		case err != nil:
			return false, fmt.Errorf("reading the pins of %s: %w", w.backend, err)
		}
		next, err := change(s)
		if err != nil || next == nil {
			return false, err
		}
		sealed, err := pins.SealManifests(w.sealer, w.backend, next)
		if err != nil {
			return false, err
		}
		if w.beforeWrite != nil {
			w.beforeWrite(key)
		}
		if found {
			wrote, err = w.st.Swap(ctx, key, raw, sealed)
		} else {
			// Without expiry, as first contact writes it.
			wrote, _, err = w.st.SetNX(ctx, key, sealed, 0)
		}
		if err != nil {
			return false, fmt.Errorf("writing the pins of %s: %w", w.backend, err)
		}
		if wrote {
			return true, nil
		}
	}
	return false, fmt.Errorf("%w: the pins of %s were written by someone else (a replica's first contact, another approve or reseal) "+
		"%d times between this command's read and its write; nothing was written: run it again", errManifestBusy, w.backend, manifestAttempts)
}

// notTOFU says why backend is not one whose trust-on-first-use pins an operator's command can
// change, by what the configuration makes of it; nil when it is.
func notTOFU(cfg *Config, backend string) error {
	names := cfg.upstreamNames()
	switch {
	case !slices.Contains(names, backend):
		return fmt.Errorf("pins: no backend named %q (the configured backends: %s)", backend, strings.Join(names, ", "))
	case cfg.Pins == nil:
		return fmt.Errorf("pins: backend %q is not pinned (the configuration has no pins block): there is nothing to approve", backend)
	}
	switch cfg.Pins.ModeFor(backend) {
	case pins.ModeTOFU:
		return nil
	case pins.ModeOff:
		return fmt.Errorf("pins: backend %q is not pinned (its pins mode is off): there is nothing to approve", backend)
	}
	return fmt.Errorf("pins: backend %q is in lockfile mode: pin it with 'gateway pins write'", backend)
}

// tofuAdmin opens the shared store and the manifests' sealer for an operator's command on a
// backend in tofu mode.
func tofuAdmin(cfg *Config, backend string, getenv func(string) string) (store.Store, pins.Sealer, error) {
	if err := notTOFU(cfg, backend); err != nil {
		return nil, nil, err
	}
	if !cfg.Redis.enabled() {
		return nil, nil, errors.New("pins: approving needs the shared store (redis): without it each replica keeps its pins in memory, and a restart pins what it lists first")
	}
	sealer, err := pinSealer(cfg, getenv)
	if err != nil {
		return nil, nil, err
	}
	quiet := slog.New(slog.DiscardHandler)
	useRedisLogger(quiet) // a failure is this command's error, not the client's pool messages too
	st, err := cfg.Redis.newStore(getenv, quiet, prometheus.NewRegistry())
	if err != nil {
		return nil, nil, err
	}
	return st, sealer, nil
}

// itemRef names one item of a backend on the command line.
type itemRef struct {
	kind pins.Kind
	key  string
}

// parseItems reads --item values: tool/NAME, prompt/NAME, resourceTemplate/URI, uiResource/URI or
// instructions. None: nil (the whole backend).
func parseItems(items []string) (map[itemRef]bool, error) {
	if len(items) == 0 {
		return nil, nil
	}
	out := map[itemRef]bool{}
	for _, it := range items {
		if it == string(pins.KindInstructions) {
			out[itemRef{pins.KindInstructions, ""}] = true
			continue
		}
		kind, key, ok := strings.Cut(it, "/")
		if !ok || key == "" || pins.Kind(kind) == pins.KindInstructions || !pins.Kind(kind).Valid() {
			return nil, fmt.Errorf("pins approve: --item %q: want tool/NAME, prompt/NAME, resourceTemplate/URI, uiResource/URI or instructions", it)
		}
		// A template or UI resource may be named in any spelling of its URI: it is pinned under
		// its normal form (pins.ItemKey).
		out[itemRef{pins.Kind(kind), pins.ItemKey(pins.Kind(kind), key)}] = true
	}
	return out, nil
}
