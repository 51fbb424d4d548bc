package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/mcp-gateway/gateway/internal/configerr"
	"github.com/mcp-gateway/gateway/internal/pins"
	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/metrics"
)

// pinStoreTimeout bounds one trust-on-first-use store command, so that a list waits at most
// this long for a store that does not answer before it serves what it verified before.
const pinStoreTimeout = 2 * time.Second

// tofuStore keeps trust-on-first-use pins in the shared store without expiry: one sealed
// record per backend, whose manifest of a kind also records that first contact happened.
type tofuStore struct{ s store.Store }

// Get implements pins.TOFUStore.
func (t tofuStore) Get(ctx context.Context, key string) ([]byte, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, pinStoreTimeout)
	defer cancel()
	return t.s.Get(ctx, key)
}

// SetNX implements pins.TOFUStore.
func (t tofuStore) SetNX(ctx context.Context, key string, value []byte) (bool, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, pinStoreTimeout)
	defer cancel()
	return t.s.SetNX(ctx, key, value, 0)
}

// Swap implements pins.TOFUStore.
func (t tofuStore) Swap(ctx context.Context, key string, old, value []byte) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, pinStoreTimeout)
	defer cancel()
	return t.s.Swap(ctx, key, old, value)
}

// newPinGuard builds tool-definition pinning from the pins section: nil when the section is
// absent. The lock file is loaded once, here, when the guard reads it (pins.Config.LoadsLock);
// a lock file that does not load fails the start rather than serving unpinned. With Redis, began is when
// its memory began (the epoch guard's marker), by which the guard tells a store that lost its
// data; prev is the guard of the set a reload replaces (nil at start-up), whose pins it keeps.
func newPinGuard(cfg *Config, getenv func(string) string, st store.Store, rec *metrics.Recorder, log *slog.Logger,
	began func(context.Context) (time.Time, error), prev *pins.Guard) (*pins.Guard, error) {
	if cfg.Pins == nil {
		return nil, nil
	}
	names := cfg.upstreamNames()
	var lock *pins.Lock
	if cfg.Pins.LoadsLock(names) {
		l, err := pins.LoadLock(cfg.Pins.LockFile)
		if err != nil {
			return nil, fmt.Errorf("pins.lockFile: %w", err)
		}
		lock = l
	}
	var sealer pins.Sealer
	if cfg.Pins.AnyTOFU(names) {
		s, err := pinSealer(cfg, getenv)
		if err != nil {
			return nil, err
		}
		sealer = s
		if !cfg.Redis.enabled() {
			log.Warn("pins: trust on first use without a shared store: each replica pins the first definitions it sees itself; configure redis for replicas to agree")
		}
	}
	return pins.NewGuard(pins.GuardOptions{
		Config:   cfg.Pins,
		Lock:     lock,
		Store:    tofuStore{st},
		Sealer:   sealer,
		Backends: names,
		Logger:   log,
		OnDrift:  rec.PinDrift,
		Began:    began,
		Previous: prev,
		// Items withheld while a first contact waits for the restore window are not drift.
		OnRestoreWait: func(b string) { metrics.PinRestoreWait(rec, b) },
	})
}

// storeBegan is when the shared store's memory began, for pinning (newPinGuard): nil without
// Redis, where the store's memory is the process's own.
func (g *gateway) storeBegan(cfg *Config) func(context.Context) (time.Time, error) {
	if !cfg.Redis.enabled() {
		return nil
	}
	return func(ctx context.Context) (time.Time, error) {
		ctx, cancel := context.WithTimeout(ctx, pinStoreTimeout)
		defer cancel()
		return g.replays.Began(ctx)
	}
}

// validatePinKeys: trust-on-first-use pins kept in Redis are sealed, and every replica must
// open what the others sealed, so they need the configured keys (pinSealer refuses to start
// without them; the check says so before).
func (c *Config) validatePinKeys() []error {
	if !c.Redis.enabled() || len(c.MRTR.Keys) > 0 {
		return nil
	}
	for _, n := range c.upstreamNames() {
		if c.Pins.ModeFor(n) == pins.ModeTOFU {
			return []error{configerr.At("mrtr.keys", "required: backend %q is pinned on first use (pins mode tofu) with redis: the pins are sealed, and every replica must open the ones the others sealed", n)}
		}
	}
	return nil
}

// pinSealer seals trust-on-first-use manifests with the mrtr.keys ring, derived for their own
// purpose and allowed to be as large as the pins bounds make a manifest. With a shared store
// the keys must be configured: a per-process key would make every other replica's pins
// unverifiable.
func pinSealer(cfg *Config, getenv func(string) string) (pins.Sealer, error) {
	if cfg.Redis.enabled() && len(cfg.MRTR.Keys) == 0 {
		return nil, errors.New("pins: trust on first use with redis needs mrtr.keys: the pins are sealed, and every replica must open the ones the others sealed")
	}
	keys := cfg.MRTR
	keys.MaxTokenBytes = cfg.Pins.MaxSealedBytes()
	ring, _, err := keys.keyRing(getenv)
	if err != nil {
		return nil, err
	}
	return ring.Sealer(pins.PurposeManifest), nil
}
