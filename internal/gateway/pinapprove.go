package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcp-gateway/gateway/internal/pins"
	"github.com/mcp-gateway/gateway/internal/store"
)

// approvedTTL is the lifetime an approval writes a manifest with: the store's Set needs one,
// and a manifest must outlive any deployment (first contact is recorded by its existence).
const approvedTTL = 100 * 365 * 24 * time.Hour

// approvePins is 'gateway pins approve --backend NAME [--item KIND/NAME]…': the operator pins,
// in the shared store, the definitions a trust-on-first-use backend lists now: the named items
// (added to its pins), or without --item its whole current lists (which replace its pins).
// A replica uses them from its first fetch of that backend's list a minute or more after it
// last read the pins.
func approvePins(ctx context.Context, inv invocation, args []string) error {
	cf := newConfigFlags("pins approve", "Pin, in the shared store, what a trust-on-first-use backend lists now: the items named\n"+
		"by --item, or without --item its whole lists (which replace its pins).", inv)
	var backend string
	cf.fs.StringVar(&backend, "backend", "", "the trust-on-first-use backend to approve (required)")
	var items []string
	cf.fs.Func("item", "an item to pin: tool/NAME, prompt/NAME, resourceTemplate/URI, uiResource/URI or\ninstructions (repeatable)", func(v string) error {
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
	n := 0
	for _, kind := range pins.Kinds {
		changed, err := approveKind(ctx, st, sealer, cfg.Pins, backend, kind, cur, want, stdout)
		if err != nil {
			return err
		}
		n += changed
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

// approveKind writes the manifest of one kind with the approved items and reports each change.
// want's entries of kind are removed as they are found.
func approveKind(ctx context.Context, st store.Store, sealer pins.Sealer, pc *pins.Config, backend string, kind pins.Kind,
	cur *pins.BackendPins, want map[itemRef]bool, out io.Writer) (int, error) {
	key := pins.ManifestKey(backend, kind)
	old := &pins.Manifest{Backend: backend, Kind: kind, Pins: map[string]*pins.Definition{}}
	raw, found, err := st.Get(ctx, key)
	if err != nil {
		return 0, fmt.Errorf("pins approve: reading the pins of %s %s: %w", backend, kind, err)
	}
	broken := false
	if found {
		m, err := pins.OpenManifest(sealer, backend, kind, raw)
		switch {
		case err != nil && want != nil:
			return 0, fmt.Errorf("pins approve: %w; approve the whole backend (without --item) to pin it again", err)
		case err != nil:
			broken = true // replaced by the current list below
		default:
			old = m
		}
	}
	next := &pins.Manifest{Backend: backend, Kind: kind, Pins: map[string]*pins.Definition{}}
	if want != nil {
		for k, d := range old.Pins {
			next.Pins[k] = d
		}
	}
	changed := 0
	for _, k := range cur.Keys(kind) {
		ref := itemRef{kind, k}
		if want != nil && !want[ref] {
			continue
		}
		delete(want, ref)
		d := cur.Get(kind, k)
		next.Pins[k] = d
		if s := pins.Classify(old.Pins[k], d); !s.Empty() {
			fmt.Fprintf(out, "pinned %s %q (%s)\n", kind, k, s)
			changed++
		}
	}
	for _, k := range old.Keys() {
		if next.Pins[k] == nil {
			fmt.Fprintf(out, "unpinned %s %q (no longer listed)\n", kind, k)
			changed++
		}
	}
	if changed == 0 && found && !broken {
		return 0, nil
	}
	if err := pc.Fits(next); err != nil {
		return 0, fmt.Errorf("pins approve: %w", err)
	}
	sealed, err := pins.SealManifest(sealer, next)
	if err == nil {
		err = st.Set(ctx, key, sealed, approvedTTL)
	}
	if err != nil {
		return 0, fmt.Errorf("pins approve: writing the pins of %s %s: %w", backend, kind, err)
	}
	return changed, nil
}

// resealPins is 'gateway pins reseal': every trust-on-first-use manifest in the store is opened
// and sealed again under the newest key, unchanged, so that an older key can leave mrtr.keys.
func resealPins(ctx context.Context, inv invocation, args []string) error {
	cf := newConfigFlags("pins reseal", "Seal every trust-on-first-use record in the shared store again under the newest of mrtr.keys.", inv)
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
		for _, kind := range pins.Kinds {
			key := pins.ManifestKey(backend, kind)
			raw, found, err := st.Get(ctx, key)
			var m *pins.Manifest
			if err == nil && found {
				if m, err = pins.OpenManifest(sealer, backend, kind, raw); err == nil {
					var sealed []byte
					if sealed, err = pins.SealManifest(sealer, m); err == nil {
						err = st.Set(ctx, key, sealed, approvedTTL)
						n++
					}
				}
			}
			if err != nil {
				st.Close()
				return fmt.Errorf("pins reseal: %s %s: %w", backend, kind, err)
			}
		}
		st.Close()
	}
	fmt.Fprintf(stdout, "sealed %d record(s) of pins under the newest key\n", n)
	return nil
}

// tofuAdmin opens the shared store and the manifests' sealer for an operator's command on a
// backend in tofu mode.
func tofuAdmin(cfg *Config, backend string, getenv func(string) string) (store.Store, pins.Sealer, error) {
	if cfg.Pins == nil || cfg.Pins.ModeFor(backend) != pins.ModeTOFU {
		return nil, nil, fmt.Errorf("pins: backend %q is not in tofu mode (in lockfile mode, pin with 'gateway pins write')", backend)
	}
	if !cfg.Redis.enabled() {
		return nil, nil, errors.New("pins: approving needs the shared store (redis): without it each replica keeps its pins in memory, and a restart pins what it lists first")
	}
	sealer, err := pinSealer(cfg, getenv)
	if err != nil {
		return nil, nil, err
	}
	st, err := cfg.Redis.newStore(getenv, slog.New(slog.DiscardHandler), prometheus.NewRegistry())
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
		if !ok || key == "" || pins.Kind(kind) == pins.KindInstructions || !slices.Contains(pins.Kinds, pins.Kind(kind)) {
			return nil, fmt.Errorf("pins approve: --item %q: want tool/NAME, prompt/NAME, resourceTemplate/URI, uiResource/URI or instructions", it)
		}
		// A template or UI resource may be named in any spelling of its URI: it is pinned under
		// its normal form (pins.ItemKey).
		out[itemRef{pins.Kind(kind), pins.ItemKey(pins.Kind(kind), key)}] = true
	}
	return out, nil
}
