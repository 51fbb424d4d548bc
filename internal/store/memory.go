package store

import (
	"bytes"
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
	// DefaultMaxNonces caps the live single-use nonces of a memory store.
	DefaultMaxNonces = 1_000_000
	// DefaultMaxValues caps the live values (and hold budgets) of a memory store.
	DefaultMaxValues = 250_000
	// DefaultMaxValueBytes caps the bytes of the live values of a memory store.
	DefaultMaxValueBytes = 256 << 20
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
	// entryOverhead is what a value costs besides its bytes (key, entry, map slot), counted
	// against MaxValueBytes so that many small values weigh too.
	entryOverhead = 96
)

// MemoryOptions configures NewMemory. The zero value is ready to use.
//
// The store keeps four kinds of state in pools of their own, so that no kind can crowd out
// another: single-use nonces (what confirmations need to refuse replays), values (with the
// budgets of Hold), and rate-limit buckets. When a pool is full, writes of its kind fail with
// ErrFull (and ErrUnavailable) rather than evict anything still live.
type MemoryOptions struct {
	// Now returns the current time. nil means time.Now; tests inject a fake
	// clock to move expiry and rate-limit refill forward.
	Now func() time.Time
	// MaxNonces caps live single-use nonces, split evenly across shards. 0
	// means DefaultMaxNonces. When a shard is full of unexpired nonces,
	// UseOnce fails with ErrFull rather than evicting a nonce that still
	// guards against replay.
	MaxNonces int
	// MaxValues caps live values and hold budgets, split evenly across
	// shards. 0 means DefaultMaxValues.
	MaxValues int
	// MaxValueBytes caps the bytes of live values and hold budgets, across
	// all shards, each counted with its key and bookkeeping. 0 means
	// DefaultMaxValueBytes.
	MaxValueBytes int64
	// MaxRateEntries caps live rate-limit buckets. 0 means
	// DefaultMaxRateEntries. When a shard's buckets are full, Allow fails
	// with ErrFull (and ErrUnavailable): the caller applies its fail-open or
	// fail-closed rule, as for an unreachable Redis. A bucket lives only
	// until it is full again, at most Burst × Period/Rate.
	MaxRateEntries int
	// Shards is the number of independently locked partitions, rounded up to
	// a power of two. 0 means DefaultShards; at most MaxShards.
	Shards int
}

// Validate reports every problem with o.
func (o MemoryOptions) Validate() error {
	var errs []error
	for _, c := range []struct {
		name string
		v    int64
	}{{"maxNonces", int64(o.MaxNonces)}, {"maxValues", int64(o.MaxValues)}, {"maxValueBytes", o.MaxValueBytes},
		{"maxRateEntries", int64(o.MaxRateEntries)}} {
		if c.v < 0 {
			errs = append(errs, fmt.Errorf("store: memory %s %d is negative", c.name, c.v))
		}
	}
	if o.Shards < 0 || o.Shards > MaxShards {
		errs = append(errs, fmt.Errorf("store: memory shards %d out of range 0..%d", o.Shards, MaxShards))
	}
	return errors.Join(errs...)
}

// Memory is the in-process Store: the default for a single replica. Expired
// entries are swept incrementally on writes; there is no background goroutine.
type Memory struct {
	now    func() time.Time
	shards []shard
	mask   uint64
	// caps are each pool's entries per shard, by kind.
	caps [kindHold + 1]int
	// bytes are the value pool's bytes, across shards; maxBytes bounds them.
	bytes    atomic.Int64
	maxBytes int64
	// lastGlobalSweep (Unix µs) limits sweeps of every shard for expired values' bytes.
	lastGlobalSweep atomic.Int64
	closed          atomic.Bool
	full            [kindHold + 1]atomic.Uint64
	// rec holds the Records (records.go), made on first use.
	recOnce sync.Once
	rec     *memRecords
}

var _ Store = (*Memory)(nil)

type memKey struct {
	kind kind
	sum  [32]byte
}

// memEntry is one nonce, bucket, value or hold budget; times in Unix microseconds.
type memEntry struct {
	expires int64
	tat     int64
	value   []byte
	held    []heldItem
}

// cost is what e weighs against the value pool's bytes.
func (e memEntry) cost() int64 {
	return entryOverhead + int64(len(e.value)) + int64(len(e.held))*heldItemBytes
}

type shard struct {
	mu            sync.Mutex
	entries       map[memKey]memEntry
	lastFullSweep int64
	n             [kindHold + 1]int // live entries by kind
	bytes         *atomic.Int64     // the store's value bytes
	// Pads the shard to its own cache line so neighbouring locks do not
	// contend through false sharing.
	_ [8]byte
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
	n := opts.Shards
	if n == 0 {
		n = DefaultShards
	}
	n = 1 << bits.Len(uint(n-1))
	m := &Memory{now: now, shards: make([]shard, n), mask: uint64(n - 1),
		maxBytes: orDefault(opts.MaxValueBytes, DefaultMaxValueBytes)}
	perShard := func(total int) int { return max(1, (total+n-1)/n) }
	m.caps[kindOnce] = perShard(orDefault(opts.MaxNonces, DefaultMaxNonces))
	m.caps[kindRate] = perShard(orDefault(opts.MaxRateEntries, DefaultMaxRateEntries))
	m.caps[kindValue] = perShard(orDefault(opts.MaxValues, DefaultMaxValues))
	for i := range m.shards {
		m.shards[i].entries = make(map[memKey]memEntry)
		m.shards[i].bytes = &m.bytes
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
	return m.retryFull(func() error {
		sh, now, err := m.lock(k)
		if err != nil {
			return err
		}
		defer sh.mu.Unlock()
		return m.put(sh, k, memEntry{expires: now + micros(ttl), value: v}, now)
	})
}

// SetNX implements Store. A value without expiry counts against MaxValues
// and MaxValueBytes like any other until it is deleted or the store closed.
func (m *Memory) SetNX(_ context.Context, key string, value []byte, ttl time.Duration) (bool, []byte, error) {
	if ttl < 0 {
		return false, nil, ErrInvalidTTL
	}
	k := memKey{kind: kindValue, sum: digest(key)}
	v := append([]byte(nil), value...)
	var stored bool
	var current []byte
	err := m.retryFull(func() error {
		sh, now, err := m.lock(k)
		if err != nil {
			return err
		}
		defer sh.mu.Unlock()
		if e, ok := sh.entries[k]; ok && e.expires > now {
			if bytes.Equal(e.value, value) {
				stored = true
				return nil
			}
			current = append([]byte(nil), e.value...)
			return nil
		}
		expires := int64(math.MaxInt64)
		if ttl > 0 {
			expires = now + micros(ttl)
		}
		stored = true
		return m.put(sh, k, memEntry{expires: expires, value: v}, now)
	})
	if err != nil {
		return false, nil, err
	}
	return stored, current, nil
}

// Delete implements Store.
func (m *Memory) Delete(_ context.Context, key string) error {
	k := memKey{kind: kindValue, sum: digest(key)}
	sh, _, err := m.lock(k)
	if err != nil {
		return err
	}
	defer sh.mu.Unlock()
	sh.del(k)
	return nil
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
		for k := range sh.entries {
			sh.del(k)
		}
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

// ValueBytes reports the bytes the value pool holds (values and hold budgets with their
// bookkeeping), expired ones not yet swept included.
func (m *Memory) ValueBytes() int64 { return m.bytes.Load() }

// errClosed is the error every operation returns after Close.
func errClosed() error { return fmt.Errorf("%w: %w", ErrUnavailable, ErrClosed) }

// lock returns k's shard locked, and the current time in Unix microseconds.
func (m *Memory) lock(k memKey) (*shard, int64, error) {
	if m.closed.Load() {
		return nil, 0, errClosed()
	}
	sh := &m.shards[m.shardIndex(k)]
	sh.mu.Lock()
	return sh, m.now().UnixMicro(), nil
}

// shardIndex is the index of k's shard.
func (m *Memory) shardIndex(k memKey) uint64 { return binary.LittleEndian.Uint64(k.sum[:8]) & m.mask }

// FullErrors reports how many writes of each pool failed with ErrFull:
// single-use nonces, rate-limit buckets and values (hold budgets included).
func (m *Memory) FullErrors() (nonces, buckets, values uint64) {
	return m.full[kindOnce].Load(), m.full[kindRate].Load(), m.full[kindValue].Load()
}

// micros converts a positive duration to microseconds, rounding up so that a
// sub-microsecond TTL still lasts one tick.
func micros(d time.Duration) int64 {
	return int64((d + time.Microsecond - 1) / time.Microsecond)
}
