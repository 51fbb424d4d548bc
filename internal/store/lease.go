package store

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"time"
)

// leaseScript takes up to ARGV[4] tokens at once from a GCRA bucket, after giving back ARGV[5]
// tokens a replica leased earlier and did not spend. It is gcraScript generalised from one token
// to k: k tokens pass at now when now >= tat + k×interval − burst×interval, so at most
// burst − ceil((tat − now) / interval) tokens are available. ARGV: interval (µs), burst, now (µs,
// or 0 for the server's TIME), want (≥ 1), refund (≥ 0). Returns {granted, remaining,
// retryAfter µs, resetAfter µs}; granted is 0 when not even one token is available. KEYS and
// the last ARGV (the marker's life, ms) as gcraScript's: a copy of a lease that finds its
// marker returns the marker's answer, taking nothing and giving nothing back again.
//
// A refund moves the theoretical arrival time back by refund × interval and never below now (a
// bucket holds at most burst tokens), so it only returns tokens that were taken and not spent.
const leaseScript = chargeLua + `
local again = seen()
if again then return again end
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local want = tonumber(ARGV[4])
local refund = tonumber(ARGV[5])
if now <= 0 then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local tat = tonumber(redis.call('GET', KEYS[1])) or 0
if refund > 0 then tat = tat - refund * interval end
if tat < now then tat = now end
local debt = tat - now
local owed = (debt - debt % interval) / interval
if debt % interval > 0 then owed = owed + 1 end
local avail = burst - owed
if avail < 1 then
  if refund > 0 then
    redis.call('SET', KEYS[1], string.format('%d', tat), 'PX', math.max(1, math.ceil((tat - now) / 1000)))
    return charged({0, 0, tat + interval - burst * interval - now, tat - now}, ARGV[6])
  end
  return {0, 0, tat + interval - burst * interval - now, tat - now}
end
local granted = want
if avail < granted then granted = avail end
local newtat = tat + granted * interval
redis.call('SET', KEYS[1], string.format('%d', newtat), 'PX', math.ceil((newtat - now) / 1000))
return charged({granted, avail - granted, 0, newtat - now}, ARGV[6])
`

// Leaser takes several rate-limit tokens from a shared bucket in one round trip. The Redis store
// implements it; Leased builds local budgets on it.
type Leaser interface {
	// Lease gives back refund tokens taken earlier and not spent, then takes up to want tokens
	// (want ≥ 1) from the bucket for key under limit, atomically across replicas. granted is
	// how many were taken (0 when the bucket had none: the decision then says when to retry).
	Lease(ctx context.Context, key string, limit Limit, want, refund int) (granted int, d RateDecision, err error)
}

// Lease implements Leaser with one Lua script: one round trip, whatever want is.
func (r *Redis) Lease(ctx context.Context, key string, limit Limit, want, refund int) (int, RateDecision, error) {
	g, err := newGCRA(limit)
	if err != nil {
		return 0, RateDecision{}, err
	}
	if want < 1 || int64(want) > g.burst || refund < 0 || int64(refund) > g.burst {
		return 0, RateDecision{}, fmt.Errorf("%w: lease of %d tokens (refund %d) outside 1..%d", ErrInvalidLimit, want, refund, g.burst)
	}
	var now int64
	if r.now != nil {
		now = r.now().UnixMicro()
	}
	probe, err := r.admit()
	if err != nil {
		return 0, RateDecision{}, err
	}
	vals, err := r.lease.Run(ctx, r.client, r.charges.keys(key, r.token),
		g.interval, g.burst, now, want, refund, r.charges.ttl.Milliseconds()).Int64Slice()
	if err = r.done(probe, err); err != nil {
		return 0, RateDecision{}, err
	}
	if len(vals) != 4 || vals[0] < 0 || vals[0] > int64(want) {
		return 0, RateDecision{}, fmt.Errorf("%w: lease script returned %v", ErrUnavailable, vals)
	}
	res := gcraResult{allowed: vals[0] > 0, remaining: vals[1], retryAfter: vals[2], resetAfter: vals[3]}
	return int(vals[0]), res.decision(limit), nil
}

// Defaults and bounds for LeaseOptions.
const (
	// DefaultLeaseMax is the most tokens a replica leases from one bucket at once. A limit's
	// lease is also at most burst ÷ LeaseBurstDivisor, so this cap only matters for bursts of
	// 512 and more; there, 64 rather than 16 took a busy bucket's Redis round trips from one
	// call in 8 to one in 32, which the scaled-out benchmark needed (docs/performance.md).
	DefaultLeaseMax = 64
	// MaxLeaseMax bounds LeaseOptions.Max.
	MaxLeaseMax = 1024
	// LeaseBurstDivisor keeps a lease at most burst ÷ LeaseBurstDivisor tokens, so that small
	// limits (burst below 2 × LeaseBurstDivisor) are never leased and stay exact.
	LeaseBurstDivisor = 8
	// DefaultLeaseTTL is how long a replica may spend a lease before it gives the rest back.
	DefaultLeaseTTL = time.Second
	// DefaultLeaseKeys caps the buckets a replica holds leases on.
	DefaultLeaseKeys = 65_536
	// leaseShards is the number of independently locked partitions of the lease table.
	leaseShards = 64
	// leaseSweepInterval limits how often a full shard scans itself for entries to drop.
	leaseSweepInterval = 100 * time.Millisecond
)

// LeaseOptions configures NewLeased. The zero value means the defaults.
type LeaseOptions struct {
	// Max is the most tokens leased from one bucket at once; 0 means DefaultLeaseMax. The lease
	// of a limit is min(Max, burst ÷ LeaseBurstDivisor); a lease of 1 is not a lease (every
	// call asks the store).
	Max int
	// TTL is how long leased tokens may be spent; the unspent rest is given back with the next
	// lease of the same bucket. 0 means DefaultLeaseTTL.
	TTL time.Duration
	// MaxKeys caps the buckets with a live lease; beyond it calls ask the store one token at a
	// time (exact, as without leases). 0 means DefaultLeaseKeys.
	MaxKeys int
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
}

// Leased is a rate limiter that spends locally a share leased from a shared bucket: a replica
// takes up to LeaseSize tokens in one round trip and admits that many calls without waiting for
// the store again; when half is spent, one call tops the lease up to LeaseSize (asking only for
// what was spent) while the others spend on. Every admitted call was paid for in the shared bucket beforehand, so over any
// stretch of time that starts with no leases outstanding the replicas together never admit more
// than the limit; what leasing adds is timing: tokens leased before a window and spent inside it
// come on top of what the bucket admits in that window. Each replica holds at most one lease of
// LeaseSize tokens per bucket, so N replicas admit at most N × LeaseSize more than the limit in
// any window. Refusals always come from the shared bucket, never from a local guess.
//
// Leased never fails open or closed by itself: when the store cannot answer, the error is
// returned and the caller applies its rule; tokens already leased are still spent.
type Leased struct {
	store   Leaser
	opts    LeaseOptions // as given, for Keeps
	max     int
	ttl     time.Duration
	perShrd int
	now     func() time.Time
	shards  [leaseShards]leaseShard
}

// leaseShard is one locked partition of the lease table.
type leaseShard struct {
	mu      sync.Mutex
	entries map[leaseKey]*leaseEntry
	// swept is when makeRoom last scanned the full shard (Unix µs), so that a shard full of live
	// leases is scanned at most once per leaseSweepInterval rather than on every new key.
	swept int64
	// Pads the shard to its own cache line so neighbouring locks do not contend.
	_ [32]byte
}

// leaseKey identifies a bucket by the digest of its key and its limit, so that one key used
// under two limits keeps two leases, like the store keeps one bucket per key.
type leaseKey struct {
	sum   [32]byte
	limit Limit
}

// leaseEntry is one bucket's local budget; guarded by its shard's lock.
type leaseEntry struct {
	tokens  int           // leased and not yet spent
	expires int64         // Unix µs after which tokens may no longer be spent, only given back
	refill  chan struct{} // non-nil while one caller asks the store; closed when it is done
	last    RateDecision  // the store's answer to the last lease, for Remaining and ResetAfter
}

// NewLeased returns a limiter leasing from s.
func NewLeased(s Leaser, opts LeaseOptions) (*Leased, error) {
	if opts.Max < 0 || opts.Max > MaxLeaseMax {
		return nil, fmt.Errorf("store: lease max %d out of range 0..%d", opts.Max, MaxLeaseMax)
	}
	if opts.TTL < 0 || opts.MaxKeys < 0 {
		return nil, fmt.Errorf("store: lease ttl and maxKeys must not be negative")
	}
	l := &Leased{
		store: s,
		opts:  opts,
		max:   orDefault(opts.Max, DefaultLeaseMax),
		ttl:   opts.TTL,
		now:   opts.Now,
	}
	if l.ttl == 0 {
		l.ttl = DefaultLeaseTTL
	}
	if l.now == nil {
		l.now = time.Now
	}
	l.perShrd = max(1, (orDefault(opts.MaxKeys, DefaultLeaseKeys)+leaseShards-1)/leaseShards)
	for i := range l.shards {
		l.shards[i].entries = make(map[leaseKey]*leaseEntry)
	}
	return l, nil
}

// Keeps reports whether l leases from s with opts, so that a configuration reload can keep l,
// and with it the tokens its replica leased and has not spent yet, rather than build a new
// limiter that would lease again while the old leases lapse unspent (an under-admission of up
// to one lease per bucket after every reload). Leases are kept per key and limit, so a bucket
// whose limit changed starts a new lease; the old one lapses after the lease TTL.
func (l *Leased) Keeps(s Leaser, opts LeaseOptions) bool {
	return l != nil && l.store == s && l.opts.Max == opts.Max && l.opts.TTL == opts.TTL && l.opts.MaxKeys == opts.MaxKeys
}

// LeaseSize is how many tokens a replica leases at once from a bucket under limit: Max, but at
// most burst ÷ LeaseBurstDivisor, and at least 1 (no lease: every call asks the store).
func (l *Leased) LeaseSize(limit Limit) int {
	return max(1, min(l.max, limit.burst()/LeaseBurstDivisor))
}

// Allow takes one token for key under limit: from the local lease when it has one, otherwise
// from the shared bucket, leasing more at the same time.
func (l *Leased) Allow(ctx context.Context, key string, limit Limit) (RateDecision, error) {
	if err := limit.Validate(); err != nil {
		return RateDecision{}, err
	}
	size := l.LeaseSize(limit)
	if size <= 1 {
		_, d, err := l.store.Lease(ctx, key, limit, 1, 0)
		return d, err
	}
	k := leaseKey{sum: digest(key), limit: limit}
	sh := &l.shards[binary.LittleEndian.Uint64(k.sum[:8])%leaseShards]
	for {
		sh.mu.Lock()
		now := l.now().UnixMicro()
		e := sh.entries[k]
		if e == nil {
			if !sh.makeRoom(l.perShrd, now) {
				sh.mu.Unlock()
				// No room for another lease: one token at a time, exact.
				_, d, err := l.store.Lease(ctx, key, limit, 1, 0)
				return d, err
			}
			e = &leaseEntry{}
			sh.entries[k] = e
		}
		if e.tokens > 0 && now < e.expires {
			e.tokens--
			d := e.last
			d.Allowed, d.Remaining, d.RetryAfter = true, d.Remaining+e.tokens, 0
			if e.refill != nil || e.tokens > size/2 {
				sh.mu.Unlock()
				return d, nil
			}
			// Half the lease is spent: this call tops it up to size before the rest runs out,
			// so that the calls after it spend on instead of all waiting for the next lease.
			// The top-up asks for what was spent, so the lease never holds more than size.
			want := size - e.tokens
			done := make(chan struct{})
			e.refill = done
			sh.mu.Unlock()
			l.topUp(ctx, sh, e, done, key, limit, want)
			return d, nil
		}
		if wait := e.refill; wait != nil {
			// Another call is leasing for this bucket; one lease per bucket and replica keeps
			// the overshoot bound, so wait for it rather than lease a second time.
			sh.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return RateDecision{}, fmt.Errorf("%w: %w", ErrUnavailable, ctx.Err())
			}
		}
		refund := e.tokens // expired, unspent: given back with this lease
		e.tokens = 0
		done := make(chan struct{})
		e.refill = done
		sh.mu.Unlock()

		granted, d, err := l.store.Lease(ctx, key, limit, size, refund)

		sh.mu.Lock()
		e.refill = nil
		close(done)
		switch {
		case err != nil:
			// Whether the refund reached the store is unknown; keeping it would risk giving
			// it back twice, so it is dropped (the bucket refills by itself).
		case granted > 0:
			e.tokens = granted - 1
			e.expires = l.now().UnixMicro() + l.ttl.Microseconds()
			e.last = d
			d.Remaining += e.tokens
		}
		sh.mu.Unlock()
		return d, err
	}
}

// topUp adds up to want tokens to the live lease e; the caller has taken its own token already
// and set e.refill to done. A failure is not the caller's: the next call that finds the lease
// spent asks the store itself and meets the failure there (and the fail-open or fail-closed
// rule).
func (l *Leased) topUp(ctx context.Context, sh *leaseShard, e *leaseEntry, done chan struct{}, key string, limit Limit, want int) {
	granted, d, err := l.store.Lease(ctx, key, limit, want, 0)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	e.refill = nil
	close(done)
	if err != nil || granted == 0 {
		return
	}
	e.tokens += granted
	e.expires = l.now().UnixMicro() + l.ttl.Microseconds()
	e.last = d
}

// makeRoom reports whether the shard may hold one more entry, first dropping entries that hold
// nothing: no unspent tokens, or only expired ones (given up: the shared bucket refills by
// itself), and no lease in flight. The caller holds sh.mu.
func (sh *leaseShard) makeRoom(limit int, now int64) bool {
	if len(sh.entries) < limit {
		return true
	}
	if now-sh.swept < leaseSweepInterval.Microseconds() {
		return false
	}
	sh.swept = now
	for k, e := range sh.entries {
		if e.refill == nil && (e.tokens == 0 || now >= e.expires) {
			delete(sh.entries, k)
		}
	}
	return len(sh.entries) < limit
}
