package gateway

import (
	"fmt"

	"github.com/mcp-gateway/gateway/internal/configerr"
	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/mcphttp"
)

// RateLimitConfig is the `rateLimit:` block. Per caller × tool limits are written on policy rules
// (`rateLimit: "60/m burst 10"`); this block adds a limit on each caller's total and says what
// happens when the store cannot answer.
type RateLimitConfig struct {
	// PerCaller limits every caller's requests (without authentication, every client
	// address's: docs/client-bounds.md), e.g. "600/m burst 100". Empty: no
	// per-caller limit.
	PerCaller string `yaml:"perCaller"`
	// FailClosed refuses requests (503, retryable) when the store cannot be reached. Default
	// false: rate limits protect capacity, not security, so they fail open.
	FailClosed bool `yaml:"failClosed"`
	// Lease is how many tokens a replica takes from a shared (Redis) bucket at once and spends
	// locally, at most burst ÷ 8 per limit: one Redis round trip per lease rather than per call.
	// N replicas can then admit up to N leases more than a limit in any window (docs/scaling.md).
	// 0 means store.DefaultLeaseMax (64); 1 turns leasing off, so every call asks Redis and the
	// limits are exact. The in-memory store is not leased from: it is local already. A reload
	// that changes it leases afresh: the tokens the replica had leased and not spent are not
	// given back, so for one window a caller may be limited up to one lease per bucket early.
	Lease int `yaml:"lease"`
}

// compileRateLimits parses every limit once, at start-up, so no request parses one. prev is the
// leasing limiter of the configuration this one replaces (nil at start-up): it is kept when the
// lease settings are unchanged, with the tokens it leased and has not spent (store.Leased.Keeps).
// When they changed, prev's unspent tokens stay spent in the shared bucket: at most one lease
// per bucket (the lease size, at most burst ÷ 8), which the bucket refills at the limit's own
// rate like any spent token, within one window (TestLeasedReplacedStrandsAtMostOneLease). Giving
// them back would need every bucket's key, which the lease table keeps only as a digest.
func (c *Config) compileRateLimits(st store.Store, prev *store.Leased) (mcphttp.RateLimits, error) {
	rl := mcphttp.RateLimits{Store: st, FailOpen: !c.RateLimit.FailClosed, Rules: map[string]store.Limit{}}
	if c.RateLimit.Lease < 0 || c.RateLimit.Lease > store.MaxLeaseMax {
		return rl, configerr.At("rateLimit.lease", "%d: want 0 (the default) to %d", c.RateLimit.Lease, store.MaxLeaseMax)
	}
	if leaser, ok := st.(store.Leaser); ok && c.RateLimit.Lease != 1 {
		opts := store.LeaseOptions{Max: c.RateLimit.Lease}
		if prev.Keeps(leaser, opts) {
			rl.Store = prev
		} else {
			leased, err := store.NewLeased(leaser, opts)
			if err != nil {
				return rl, configerr.At("rateLimit.lease", "%w", err)
			}
			rl.Store = leased
		}
	}
	if c.RateLimit.PerCaller != "" {
		l, err := store.ParseLimit(c.RateLimit.PerCaller)
		if err != nil {
			return rl, configerr.At("rateLimit.perCaller", "%w", err)
		}
		rl.PerCaller = &l
	}
	for i, r := range c.Auth.Policy.Rules {
		if r.RateLimit == "" {
			continue
		}
		l, err := store.ParseLimit(r.RateLimit)
		if err != nil {
			return rl, configerr.At(fmt.Sprintf("auth.policy.rules[%d].rateLimit", i), "%w", err)
		}
		rl.Rules[r.RateLimit] = l
	}
	return rl, nil
}
