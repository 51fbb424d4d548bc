package gateway

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/mcp-gateway/gateway/internal/pins"
	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/metrics"
)

// pinStoreTimeout bounds one trust-on-first-use store command, so that a list waits at most
// this long for a store that does not answer before it fails closed.
const pinStoreTimeout = 2 * time.Second

// tofuStore keeps trust-on-first-use pins in the shared store without expiry: a pin that
// expired would silently trust whatever the backend lists next.
type tofuStore struct{ s store.Store }

// SetNX implements pins.TOFUStore.
func (t tofuStore) SetNX(ctx context.Context, key string, value []byte) (bool, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, pinStoreTimeout)
	defer cancel()
	return t.s.SetNX(ctx, key, value, 0)
}

// newPinGuard builds tool-definition pinning from the pins section: nil when the section is
// absent. The lock file is loaded once, here, when any backend is in lockfile mode; a lock file
// that does not load fails the start rather than serving unpinned.
func newPinGuard(cfg *Config, st store.Store, rec *metrics.Recorder, log *slog.Logger) (*pins.Guard, error) {
	if cfg.Pins == nil {
		return nil, nil
	}
	names := cfg.upstreamNames()
	var lock *pins.Lock
	tofu := false
	for _, n := range names {
		switch cfg.Pins.ModeFor(n) {
		case pins.ModeLockfile:
			if lock == nil {
				l, err := pins.LoadLock(cfg.Pins.LockFile)
				if err != nil {
					return nil, fmt.Errorf("pins.lockFile: %w", err)
				}
				lock = l
			}
		case pins.ModeTOFU:
			tofu = true
		}
	}
	if tofu && !cfg.Redis.enabled() {
		log.Warn("pins: trust on first use without a shared store: each replica pins the first definition it sees itself; configure redis for replicas to agree")
	}
	return pins.NewGuard(pins.GuardOptions{
		Config:   cfg.Pins,
		Lock:     lock,
		Store:    tofuStore{st},
		Backends: names,
		Logger:   log,
		OnDrift:  rec.PinDrift,
	})
}
