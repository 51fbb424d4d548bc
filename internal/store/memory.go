package store

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults for MemoryOptions.
const (
	// DefaultMaxEntries caps the live nonces and values of a memory store.
	DefaultMaxEntries = 1_000_000
	// DefaultMaxRateEntries caps the live rate-limit buckets of a memory store.
	DefaultMaxRateEntries = 250_000
	// DefaultShards is the number of independently locked partitions.
	DefaultShards = 64
	// MaxShards bounds MemoryOptions.Shards.
	MaxShards = 1 << 16
	// sweepBatch is how many entries each write inspects for expiry, so that
	// expired entries go away without a background goroutine.
	sweepBatch = 8
	// fullSweepInterval limits how often a full shard scans itself for
	// expired entries, so a store full of live entries does not pay O(n) on
	// every write.
	fullSweepInterval = time.Second
)

// MemoryOptions configures NewMemory. The zero value is ready to use.
type MemoryOptions struct {
	// Now returns the current time. nil means time.Now; tests inject a fake
	// clock to move expiry and rate-limit refill forward.
	Now func() time.Time
	// MaxEntries caps live single-use nonces and values together, split
	// evenly across shards. 0 means DefaultMaxEntries. When a shard is full of
	// unexpired entries, writes fail with ErrFull rather than evicting a nonce
	// that still guards against replay.
	MaxEntries int
	// MaxRateEntries caps live rate-limit buckets, in a pool of their own so
	// that a flood of buckets (one per caller and tool) cannot make
	// confirmations fail, nor a flood of nonces switch rate limits off. 0
	// means DefaultMaxRateEntries. When a shard's buckets are full, Allow
	// fails with ErrFull (and ErrUnavailable): the caller applies its
	// fail-open or fail-closed rule, as for an unreachable Redis. A bucket
	// lives only until it is full again, at most Burst × Period/Rate.
	MaxRateEntries int
	// Shards is the number of independently locked partitions, rounded up to
	// a power of two. 0 means DefaultShards; at most MaxShards.
	Shards int
}

// Validate reports every problem with o.
func (o MemoryOptions) Validate() error {
	var errs []error
	if o.MaxEntries < 0 {
		errs = append(errs, fmt.Errorf("store: memory maxEntries %d is negative", o.MaxEntries))
	}
	if o.MaxRateEntries < 0 {
		errs = append(errs, fmt.Errorf("store: memory maxRateEntries %d is negative", o.MaxRateEntries))
	}
	if o.Shards < 0 || o.Shards > MaxShards {
		errs = append(errs, fmt.Errorf("store: memory shards %d out of range 0..%d", o.Shards, MaxShards))
	}
	return errors.Join(errs...)
}

// Memory is the in-process Store: the default for a single replica. Expired
// entries are swept incrementally on writes; there is no background goroutine.
type Memory struct {
	now      func() time.Time
	shards   []shard
	mask     uint64
	perShard int
	// ratePerShard caps each shard's rate-limit buckets, counted apart from perShard.
	ratePerShard int
	closed       atomic.Bool
	full         [kindValue + 1]atomic.Uint64
}

var _ Store = (*Memory)(nil)

type memKey struct {
	kind kind
	sum  [32]byte
}

// memEntry is one nonce, bucket or cached value; times in Unix microseconds.
type memEntry struct {
	expires int64
	tat     int64
	value   []byte
}

type shard struct {
	mu            sync.Mutex
	entries       map[memKey]memEntry
	lastFullSweep int64
	rate          int // entries of kindRate; the rest count against perShard
	// Pads the shard to its own cache line so neighbouring locks do not
	// contend through false sharing.
	_ [32]byte
}

// NewMemory returns an empty in-memory store.
func NewMemory(opts MemoryOptions) (*Memory, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	maxEntries := opts.MaxEntries
	if maxEntries == 0 {
		maxEntries = DefaultMaxEntries
	}
	n := opts.Shards
	if n == 0 {
		n = DefaultShards
	}
	n = 1 << bits.Len(uint(n-1))
	m := &Memory{
		now:      now,
		shards:   make([]shard, n),
		mask:     uint64(n - 1),
		perShard: max(1, (maxEntries+n-1)/n),
	}
	m.ratePerShard = max(1, (orDefault(opts.MaxRateEntries, DefaultMaxRateEntries)+n-1)/n)
	for i := range m.shards {
		m.shards[i].entries = make(map[memKey]memEntry)
	}
	return m, nil
}

// UseOnce implements Store.
func (m *Memory) UseOnce(_ context.Context, key string, ttl time.Duration) (bool, error) {
	if ttl <= 0 {
		return false, ErrInvalidTTL
	}
	k := memKey{kind: kindOnce, sum: digest(key)}
	sh, now, err := m.lock(k)
	if err != nil {
		return false, err
	}
	defer sh.mu.Unlock()
	if e, ok := sh.entries[k]; ok && e.expires > now {
		return false, nil
	}
	if err := m.put(sh, k, memEntry{expires: now + micros(ttl)}, now); err != nil {
		return false, err
	}
	return true, nil
}

// Allow implements Store.
func (m *Memory) Allow(_ context.Context, key string, limit Limit) (RateDecision, error) {
	g, err := newGCRA(limit)
	if err != nil {
		return RateDecision{}, err
	}
	k := memKey{kind: kindRate, sum: digest(key)}
	sh, now, err := m.lock(k)
	if err != nil {
		return RateDecision{}, err
	}
	defer sh.mu.Unlock()
	var stored int64
	if e, ok := sh.entries[k]; ok && e.expires > now {
		stored = e.tat
	}
	r := g.step(stored, now)
	if r.allowed {
		// The bucket is full again at the new TAT, so the entry can expire then.
		if err := m.put(sh, k, memEntry{expires: r.tat, tat: r.tat}, now); err != nil {
			return RateDecision{}, err
		}
	}
	return r.decision(limit), nil
}

// Get implements Store.
func (m *Memory) Get(_ context.Context, key string) ([]byte, bool, error) {
	k := memKey{kind: kindValue, sum: digest(key)}
	sh, now, err := m.lock(k)
	if err != nil {
		return nil, false, err
	}
	defer sh.mu.Unlock()
	e, ok := sh.entries[k]
	if !ok {
		return nil, false, nil
	}
	if e.expires <= now {
		sh.del(k)
		return nil, false, nil
	}
	return append([]byte(nil), e.value...), true, nil
}

// Set implements Store.
func (m *Memory) Set(_ context.Context, key string, value []byte, ttl time.Duration) error {
	if ttl <= 0 {
		return ErrInvalidTTL
	}
	k := memKey{kind: kindValue, sum: digest(key)}
	v := append([]byte(nil), value...)
	sh, now, err := m.lock(k)
	if err != nil {
		return err
	}
	defer sh.mu.Unlock()
	return m.put(sh, k, memEntry{expires: now + micros(ttl), value: v}, now)
}

// SetNX implements Store. A value without expiry counts against MaxEntries
// like any other until the store is closed.
func (m *Memory) SetNX(_ context.Context, key string, value []byte, ttl time.Duration) (bool, []byte, error) {
	if ttl < 0 {
		return false, nil, ErrInvalidTTL
	}
	k := memKey{kind: kindValue, sum: digest(key)}
	sh, now, err := m.lock(k)
	if err != nil {
		return false, nil, err
	}
	defer sh.mu.Unlock()
	if e, ok := sh.entries[k]; ok && e.expires > now {
		return false, append([]byte(nil), e.value...), nil
	}
	expires := int64(math.MaxInt64)
	if ttl > 0 {
		expires = now + micros(ttl)
	}
	if err := m.put(sh, k, memEntry{expires: expires, value: append([]byte(nil), value...)}, now); err != nil {
		return false, nil, err
	}
	return true, nil, nil
}

// Ping implements Store; it fails only after Close.
func (m *Memory) Ping(context.Context) error {
	if m.closed.Load() {
		return errClosed()
	}
	return nil
}

// Close implements Store. It drops all entries.
func (m *Memory) Close() error {
	if m.closed.Swap(true) {
		return nil
	}
	for i := range m.shards {
		sh := &m.shards[i]
		sh.mu.Lock()
		clear(sh.entries)
		sh.rate = 0
		sh.mu.Unlock()
	}
	return nil
}

// Len reports the number of entries held, expired ones not yet swept included.
func (m *Memory) Len() int {
	n := 0
	for i := range m.shards {
		sh := &m.shards[i]
		sh.mu.Lock()
		n += len(sh.entries)
		sh.mu.Unlock()
	}
	return n
}

// errClosed is the error every operation returns after Close.
func errClosed() error { return fmt.Errorf("%w: %w", ErrUnavailable, ErrClosed) }

// lock returns k's shard locked, and the current time in Unix microseconds.
func (m *Memory) lock(k memKey) (*shard, int64, error) {
	if m.closed.Load() {
		return nil, 0, errClosed()
	}
	sh := &m.shards[binary.LittleEndian.Uint64(k.sum[:8])&m.mask]
	sh.mu.Lock()
	return sh, m.now().UnixMicro(), nil
}

// FullErrors reports how many writes of each kind failed with ErrFull:
// single-use nonces, rate-limit buckets and values.
func (m *Memory) FullErrors() (nonces, buckets, values uint64) {
	return m.full[kindOnce].Load(), m.full[kindRate].Load(), m.full[kindValue].Load()
}

// put stores e under k in sh, sweeping expired entries to keep the shard
// under the cap of k's pool. The caller holds sh.mu.
func (m *Memory) put(sh *shard, k memKey, e memEntry, now int64) error {
	if err := sh.put(k, e, now, m.perShard, m.ratePerShard); err != nil {
		m.full[k.kind].Add(1)
		return err
	}
	return nil
}

func (sh *shard) put(k memKey, e memEntry, now int64, limit, rateLimit int) error {
	sh.sweep(now, sweepBatch)
	if _, exists := sh.entries[k]; !exists && sh.atCap(k.kind, limit, rateLimit) {
		if now-sh.lastFullSweep >= fullSweepInterval.Microseconds() {
			sh.lastFullSweep = now
			sh.sweep(now, len(sh.entries))
		}
		if sh.atCap(k.kind, limit, rateLimit) {
			if k.kind == kindRate {
				limit = rateLimit
			}
			return fmt.Errorf("%w: %w: %d entries per shard", ErrUnavailable, ErrFull, limit)
		}
	}
	if _, exists := sh.entries[k]; !exists && k.kind == kindRate {
		sh.rate++
	}
	sh.entries[k] = e
	return nil
}

// atCap reports whether the pool of kind is full in sh.
func (sh *shard) atCap(kind kind, limit, rateLimit int) bool {
	if kind == kindRate {
		return sh.rate >= rateLimit
	}
	return len(sh.entries)-sh.rate >= limit
}

// del removes k, keeping the bucket count.
func (sh *shard) del(k memKey) {
	if _, ok := sh.entries[k]; ok {
		delete(sh.entries, k)
		if k.kind == kindRate {
			sh.rate--
		}
	}
}

// sweep inspects up to n entries and deletes the expired ones. Go randomizes
// map iteration order, so repeated small batches sample the whole shard.
func (sh *shard) sweep(now int64, n int) {
	for k, e := range sh.entries {
		if n <= 0 {
			return
		}
		n--
		if e.expires <= now {
			sh.del(k)
		}
	}
}

// micros converts a positive duration to microseconds, rounding up so that a
// sub-microsecond TTL still lasts one tick.
func micros(d time.Duration) int64 {
	return int64((d + time.Microsecond - 1) / time.Microsecond)
}
