package upstreams

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-gateway/gateway/internal/pins"
)

// minKickGap is the least time between two probes triggered by failed calls, so a backend that
// is down for every call is not probed once per call.
const minKickGap = time.Second

// Status is one backend's health as the last probe or call saw it.
type Status struct {
	// Name is the configured backend name.
	Name string
	// URL is the backend endpoint without user info or query (which may hold secrets).
	URL string
	// Up reports whether the last probe or call succeeded. False until the first one finishes.
	Up bool
	// LastError describes the last failure while down; empty when up.
	LastError string
	// CheckedAt is when Up last changed or a probe last finished; zero before any.
	CheckedAt time.Time
	// Pins is the backend's tool-definition pinning state; nil when it is not pinned.
	Pins *pins.BackendState `json:",omitempty"`
}

// health is a backend's state. Successful calls only read an atomic flag when nothing changes,
// keeping the hot path free of locks.
type health struct {
	isUp      atomic.Bool
	mu        sync.Mutex
	lastErr   string
	checkedAt time.Time
	// onChange, when set, hears every change of up (and the first probe's result), under mu;
	// it must not block (Options.OnHealth).
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
		h.lastErr = err.Error()
	}
	h.checkedAt = now
}

// Health reports each backend, in configuration order.
func (r *Registry) Health() []Status {
	out := make([]Status, len(r.backends))
	for i, b := range r.backends {
		b.health.mu.Lock()
		out[i] = Status{Name: b.name, URL: b.safeURL, Up: b.health.isUp.Load(),
			LastError: b.health.lastErr, CheckedAt: b.health.checkedAt, Pins: r.pins.State(b.name)}
		b.health.mu.Unlock()
	}
	return out
}

// Run probes every backend with server/discover at once, then every health interval, and soon
// after a call to a backend fails, until ctx is done. A probe also refreshes the backend's
// cached capabilities.
func (r *Registry) Run(ctx context.Context) {
	r.probe(ctx, false)
	t := time.NewTicker(r.healthInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r.probe(ctx, false)
		case <-r.kick:
			r.probe(ctx, true)
			select {
			case <-ctx.Done():
				return
			case <-time.After(minKickGap):
			}
		}
	}
}

// probe checks every backend (or only those that are down) in parallel and waits for all.
func (r *Registry) probe(ctx context.Context, downOnly bool) {
	var wg sync.WaitGroup
	for _, b := range r.backends {
		if downOnly && b.health.isUp.Load() {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := r.fetchDiscover(ctx, b, nil, true)
			if err == nil {
				b.disc.store(d, r.now())
				b.health.set(r.now(), nil)
			} else if ctx.Err() == nil && !errors.Is(err, context.Canceled) {
				r.log.Warn("upstream health probe failed", "upstream", b.name, "error", err.Error())
			}
		}()
	}
	wg.Wait()
}
