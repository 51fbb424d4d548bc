package upstreams

import (
	"context"
	"errors"

	"github.com/mcp-gateway/gateway/internal/era"
	"github.com/mcp-gateway/gateway/upstreams/backend"
)

// Probe is what one backend answered when the operator checked it (gateway check-config
// --online).
type Probe struct {
	// Modern reports a backend that speaks 2026-07-28; false, a pre-2026 backend reached
	// through initialize and a session.
	Modern bool
	// Protocol is the revision spoken to it: 2026-07-28, or the one offered (or pinned) in
	// initialize.
	Protocol string
	// Tools is the number of tools its complete tools/list holds; 0 for a per-user backend.
	Tools int
	// PerUser reports a per-user OAuth backend: it lists its tools only to a connected user's
	// token, which an operator's check does not have, so they are not listed.
	PerUser bool
	// NeedsUser reports a per-user backend that refused even server/discover without a user's
	// token (401): Modern and Protocol are then unknown.
	NeedsUser bool
}

// Probe asks upstream for server/discover, learning its protocol era as the first call would,
// then follows its tools/list to the end, directly, as Definitions does: no cache, no caller
// token (a backend that needs token exchange answers as it does to the gateway's own probes).
func (r *Registry) Probe(ctx context.Context, upstream string) (*Probe, error) {
	b, err := r.backend(upstream)
	if err != nil {
		return nil, err
	}
	if _, err := b.Discover(ctx); err != nil {
		if b.PerUser() && errors.Is(err, backend.ErrUserTokenNeeded) {
			// It answered 401 as a per-user backend does to a request without a user's token:
			// it is up, and it speaks only to connected users.
			return &Probe{PerUser: true, NeedsUser: true}, nil
		}
		return nil, err
	}
	p := &Probe{Modern: b.Era() != era.Legacy, Protocol: b.Protocol(), PerUser: b.PerUser()}
	if p.PerUser {
		return p, nil
	}
	tools, err := r.catalog.RawList(ctx, b, MethodToolsList)
	if err != nil {
		return p, err
	}
	p.Tools = len(tools)
	return p, nil
}
