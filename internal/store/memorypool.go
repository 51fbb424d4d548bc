package store

import (
	"errors"
	"fmt"
	"sync/atomic"
)

// The memory store's pools: each kind of state counts against its own cap per shard, and the
// value pool also against one byte budget across the shards (memory.go, MemoryOptions).

// errBytesFull marks an ErrFull of the value pool's bytes: sweeping other shards may help.
var errBytesFull = errors.New("store: value bytes full")

// pool is the pool k's entries count against: hold budgets are values, Replay's ids and
// counters single-use entries.
func (k kind) pool() kind {
	switch k {
	case kindHold:
		return kindValue
	case kindReplay, kindReplayOwner:
		return kindOnce
	}
	return k
}

// put stores e under k in sh, sweeping expired entries to keep the shard under the cap of k's
// pool (and the store under its value bytes). The caller holds sh.mu.
func (m *Memory) put(sh *shard, k memKey, e memEntry, now int64) error {
	err := sh.put(k, e, now, m.caps[k.kind.pool()], m.maxBytes)
	if err != nil && !errors.Is(err, errBytesFull) {
		// A write refused for bytes is counted by retryFull, once, after its retry.
		m.full[k.kind.pool()].Add(1)
	}
	return err
}

func (sh *shard) put(k memKey, e memEntry, now int64, limit int, maxBytes int64) error {
	sh.sweep(now, sweepBatch)
	if err := sh.admit(k, e, limit, maxBytes); err != nil {
		if now-sh.lastFullSweep < fullSweepInterval.Microseconds() {
			return err
		}
		sh.lastFullSweep = now
		sh.sweep(now, len(sh.entries))
		if err := sh.admit(k, e, limit, maxBytes); err != nil {
			return err
		}
	}
	if _, exists := sh.entries[k]; !exists {
		sh.n[k.kind.pool()]++
	}
	sh.entries[k] = e
	return nil
}

// admit checks that e fits under k: a new entry under its pool's cap, and a value's bytes
// (the difference to the entry it replaces) under the store's budget, which it then takes.
func (sh *shard) admit(k memKey, e memEntry, limit int, maxBytes int64) error {
	old, exists := sh.entries[k]
	if !exists && sh.n[k.kind.pool()] >= limit {
		return fmt.Errorf("%w: %w: %d entries per shard", ErrUnavailable, ErrFull, limit)
	}
	if k.kind.pool() != kindValue {
		return nil
	}
	delta := e.cost()
	if exists {
		delta -= old.cost()
	}
	if !takeBytes(sh.bytes, delta, maxBytes) {
		return fmt.Errorf("%w: %w: %w: %d bytes", ErrUnavailable, ErrFull, errBytesFull, maxBytes)
	}
	return nil
}

// takeBytes moves the value bytes counter by delta, refusing a growth past maxBytes (a shrink
// always passes). The check and the move are one step, so writers under different locks (the
// shards, the records) never take the counter past its bound together.
func takeBytes(counter *atomic.Int64, delta, maxBytes int64) bool {
	for {
		cur := counter.Load()
		if delta > 0 && cur+delta > maxBytes {
			return false
		}
		if counter.CompareAndSwap(cur, cur+delta) {
			return true
		}
	}
}

// del removes k, keeping the counts.
func (sh *shard) del(k memKey) {
	e, ok := sh.entries[k]
	if !ok {
		return
	}
	delete(sh.entries, k)
	sh.n[k.kind.pool()]--
	if k.kind.pool() == kindValue {
		sh.bytes.Add(-e.cost())
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

// retryFull runs write, and once more after sweeping every shard if it failed because the
// value bytes were full: expired values elsewhere still count until a sweep finds them, and
// writes to their shards may never come. Such sweeps run at most once per fullSweepInterval.
func (m *Memory) retryFull(write func() error) error {
	err := write()
	if !errors.Is(err, errBytesFull) {
		return err
	}
	now := m.now().UnixMicro()
	last := m.lastGlobalSweep.Load()
	if now-last >= fullSweepInterval.Microseconds() && m.lastGlobalSweep.CompareAndSwap(last, now) {
		for i := range m.shards {
			sh := &m.shards[i]
			sh.mu.Lock()
			sh.sweep(now, len(sh.entries))
			sh.mu.Unlock()
		}
		err = write()
	}
	if errors.Is(err, errBytesFull) {
		m.full[kindValue].Add(1)
	}
	return err
}
