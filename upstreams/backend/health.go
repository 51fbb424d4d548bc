package backend

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-gateway/gateway/internal/configerr"
	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
)

// health is a backend's state. Successful calls only read an atomic flag when nothing changes,
// keeping the hot path free of locks.
type health struct {
	isUp atomic.Bool
	// suspect: a request charged to one caller failed since the last probe. Its failure does
	// not mark the backend down (that caller's arguments may be the cause, and the health
	// every caller and operator sees is not one caller's to change), but the prober is asked
	// to look (NeedsProbe), and its answer decides.
	suspect   atomic.Bool
	mu        sync.Mutex
	lastErr   string
	checkedAt time.Time
	// onChange, when set, hears every change of up (and the first probe's result), under mu;
	// it must not block (Env.OnHealth).
	onChange func(up bool)
	reported bool
}

func (h *health) up(now func() time.Time) {
	if h.isUp.Load() {
		return
	}
	h.set(now(), nil)
}

func (h *health) down(now time.Time, err error) { h.set(now, err) }

func (h *health) set(now time.Time, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.onChange != nil && (!h.reported || h.isUp.Load() != (err == nil)) {
		h.reported = true
		h.onChange(err == nil)
	}
	h.isUp.Store(err == nil)
	h.lastErr = ""
	if err != nil {
		h.lastErr = configerr.RedactURLs(err.Error()) // shown in /readyz
	}
	h.checkedAt = now
}

// Health is the backend's health as the last probe or call saw it (a call charged to one caller
// only when it succeeded: health.suspect): up is false until the first
// one finishes; lastErr describes the last failure while down; checkedAt is when up last
// changed or a probe last finished (zero before any).
func (b *Backend) Health() (up bool, lastErr string, checkedAt time.Time) {
	h := &b.health
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.isUp.Load(), h.lastErr, h.checkedAt
}

// NeedsProbe reports, without taking a lock, whether the prober should look at the backend
// when kicked: it is down, or a caller's request failed since the last probe (health.suspect).
func (b *Backend) NeedsProbe() bool { return !b.health.isUp.Load() || b.health.suspect.Load() }

// Check is the health probe: server/discover (a pre-2026 backend is pinged on a session
// instead, and asked server/discover to notice a change of era), which also refreshes the
// cached capabilities. A failure is logged unless ctx ended or the backend is rate limiting
// (its 429, or the wait one asked for, which the probe waits out unsent).
func (b *Backend) Check(ctx context.Context) error {
	b.health.suspect.Store(false)
	d, err := b.fetchDiscover(ctx, nil, true)
	if err == nil {
		b.disc.store(d, b.env.Now())
		b.health.set(b.env.Now(), nil)
	} else if ctx.Err() == nil && !errors.Is(err, context.Canceled) && !errors.Is(err, wire.ErrRateLimited) {
		// A 429 is an answer (the backend is up), logged once per wait (noteRateLimit).
		b.env.Log.Warn("upstream health probe failed", "upstream", b.name, "error", err.Error())
	}
	return err
}
