package upstreams

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/mcp-gateway/gateway/internal/pins"
)

// minKickGap is the least time between two probes triggered by failed calls, so a backend that
// is down for every call is not probed once per call.
const minKickGap = time.Second

// Status is one backend's health as the last probe or call saw it. Its JSON (the detail of
// /readyz) has lower-case keys (MarshalJSON).
type Status struct {
	// Name is the configured backend name.
	Name string
	// URL is the backend endpoint without user info or query (which may hold secrets).
	URL string
	// Up reports whether the last probe or call succeeded. False until the first one finishes.
	// A failed call charged to one authenticated caller does not make it false (the caller's
	// arguments may be the cause); it makes the prober look soon, and the probe decides.
	Up bool
	// LastError describes the last failure while down; empty when up.
	LastError string
	// CheckedAt is when Up last changed or a probe last finished; zero before any.
	CheckedAt time.Time
	// Pins is the backend's tool-definition pinning state; nil when it is not pinned.
	Pins *pins.BackendState `json:",omitempty"`
}

// MarshalJSON writes s with the lower-case keys every other JSON of the gateway uses (name,
// url, up, lastError, checkedAt, pins) and, beside them with the same values, the capitalised
// keys /readyz carried first (Name, URL, Up, LastError, CheckedAt, Pins): deprecated, kept so
// that a script or dashboard reading them does not break silently. Since both spellings carry
// the same value, a case-insensitive decoder gets it whichever it reads.
func (s Status) MarshalJSON() ([]byte, error) {
	type capitalised Status // the deprecated keys: the field names; no MarshalJSON, no recursion
	return json.Marshal(struct {
		capitalised
		Name      string             `json:"name"`
		URL       string             `json:"url"`
		Up        bool               `json:"up"`
		LastError string             `json:"lastError"`
		CheckedAt time.Time          `json:"checkedAt"`
		Pins      *pins.BackendState `json:"pins,omitempty"`
	}{capitalised(s), s.Name, s.URL, s.Up, s.LastError, s.CheckedAt, s.Pins})
}

// Health reports each backend, in configuration order.
func (r *Registry) Health() []Status {
	out := make([]Status, len(r.backends))
	for i, b := range r.backends {
		up, lastErr, checkedAt := b.Health()
		out[i] = Status{Name: b.Name(), URL: b.SafeURL(), Up: up, LastError: lastErr, CheckedAt: checkedAt,
			Pins: r.catalog.Guard().State(b.Name())}
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

// probe checks every backend (or only those that are down or suspect: backend.NeedsProbe) in
// parallel and waits for all.
func (r *Registry) probe(ctx context.Context, downOnly bool) {
	var wg sync.WaitGroup
	for _, b := range r.backends {
		if downOnly && !b.NeedsProbe() {
			continue
		}
		wg.Go(func() { _ = b.Check(ctx) }) // a failure is logged and recorded by the backend
	}
	wg.Wait()
}
