package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Records keeps small records grouped by owner, one per name, with an index of the owners of
// each name: the storage of the per-user token vault (internal/vault), where the owner is a
// digest of a caller's identity and the name a backend. What an owner holds is bounded
// (PutRecord's budget), the owners of one name can be listed (revoking every record of a
// backend) and counted (the vault's size), and records are replaced or removed only while
// they still hold what the caller read (SwapRecord, DeleteRecord), so a refresh that ends
// after a disconnect does not bring the record back.
//
// Records expire (RecordLife): Idle after their last use (a read with GetRecord, a put or a
// swap) and at most Absolute after they were put, whether or not anyone reads them again, so
// the records of a caller who never comes back (deleted at its identity provider) go by
// themselves, and so do their entries in the index. An expired record is absent to every
// method; an index entry may outlive its record (a reader finds no record and moves on).
//
// Owners are kept as given in the index: pass a digest, not an identity. Both Memory and
// Redis implement it; every failure of Redis wraps ErrUnavailable.
type Records interface {
	// GetRecord returns owner's live record under name, and false when there is none; a
	// read is a use: the record's idle deadline moves on (within its absolute one).
	GetRecord(ctx context.Context, owner, name string, life RecordLife) ([]byte, bool, error)
	// PutRecord stores value as owner's record under name, replacing any, unless owner would
	// then hold more than b.Count records or more than b.Bytes bytes of them: stored is then
	// false and nothing changes. Its lifetimes start now.
	PutRecord(ctx context.Context, owner, name string, value []byte, b Budget, life RecordLife) (stored bool, err error)
	// AddRecord is PutRecord only while owner holds no record under name: otherwise it fails
	// with ErrRecordExists and nothing changes. Two writers that each found no record (two
	// first connects completing together) so learn which of them came second. A record that
	// already holds value byte for byte counts as stored (see SwapRecord).
	AddRecord(ctx context.Context, owner, name string, value []byte, b Budget, life RecordLife) (stored bool, err error)
	// SwapRecord replaces owner's record under name with value only while it still holds old
	// (byte for byte); swapped is false otherwise, the record absent or expired included. A
	// swap is a use; the absolute deadline stays the put's. A record that already holds value
	// counts as swapped: a write sent again after its answer was lost (Redis stalled past the
	// read timeout, and the client retried) finds its own first attempt's record, and must
	// not answer that another writer came first. Callers write values no other write repeats
	// (the vault seals each under a fresh nonce).
	SwapRecord(ctx context.Context, owner, name string, old, value []byte, life RecordLife) (swapped bool, err error)
	// DeleteRecord removes owner's record under name; with old set, only while it still
	// holds old. removed reports whether a record went.
	DeleteRecord(ctx context.Context, owner, name string, old []byte) (removed bool, err error)
	// OwnerRecords returns every live record of owner, by name. It is not a use.
	OwnerRecords(ctx context.Context, owner string, life RecordLife) (map[string][]byte, error)
	// NameOwners calls fn with the owners holding a record under name, in batches, until fn
	// fails or every owner was listed; it may list an owner whose record expired. fn may
	// delete records as it goes.
	NameOwners(ctx context.Context, name string, life RecordLife, fn func(owners []string) error) error
	// CountRecords returns how many owners hold a live record under name.
	CountRecords(ctx context.Context, name string, life RecordLife) (int64, error)
}

// RecordLife is how long records live: Idle after their last use, at most Absolute after they
// were put. Now is the caller's clock (the vault's), so every replica and the tests decide
// alike.
type RecordLife struct {
	Now            time.Time
	Idle, Absolute time.Duration
}

// touchSlack is the share of Idle a record's idle deadline may lag behind: a read moves the
// deadline only when it would gain more than Idle/touchSlack, so a record read on every call
// is written about once per Idle/64 (11 hours for 30 days), not on every call.
const touchSlack = 64

func (l RecordLife) valid() error {
	if l.Now.IsZero() || l.Idle <= 0 || l.Absolute <= 0 {
		return fmt.Errorf("%w: record lifetimes %+v", ErrInvalidBudget, l)
	}
	return nil
}

// deadlines returns the idle and absolute deadlines of a record put now.
func (l RecordLife) deadlines() (idle, absolute time.Time) {
	absolute = l.Now.Add(l.Absolute)
	return minTime(l.Now.Add(l.Idle), absolute), absolute
}

// touched returns the idle deadline of a record used now whose deadlines are idle and
// absolute, and whether it moved (by more than the slack).
func (l RecordLife) touched(idle, absolute time.Time) (time.Time, bool) {
	want := minTime(l.Now.Add(l.Idle), absolute)
	return want, want.Sub(idle) > l.Idle/touchSlack
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

var (
	_ Records = (*Memory)(nil)
	_ Records = (*Redis)(nil)
)

// ErrRecordTooLarge is returned by PutRecord for a record larger than its budget's Bytes on its
// own: no owner could ever hold it.
var ErrRecordTooLarge = errors.New("store: record larger than its budget")

// ErrRecordExists is returned by AddRecord when the owner holds a record under the name.
var ErrRecordExists = errors.New("store: a record is there already")

// recordOverhead is what a record costs the memory store's value pool besides its bytes.
const recordOverhead = 96

// nameBatch is how many owners NameOwners hands over at once.
const nameBatch = 256

// memRecords is the Memory store's Records: one map of owners and one index, under one lock
// (records are read once per call to a per-user backend and written only by a consent, a
// refresh or a revocation). Expired records are removed when met and, for those nobody meets,
// by a sweep of everything at most once per Idle/touchSlack.
type memRecords struct {
	mu        sync.Mutex
	owners    map[string]map[string]*memRecord
	names     map[string]map[string]struct{}
	nextSweep time.Time
}

type memRecord struct {
	value          []byte
	idle, absolute time.Time
}

func (r *memRecord) live(now time.Time) bool { return now.Before(r.idle) }

func (m *Memory) records() (*memRecords, error) {
	if m.closed.Load() {
		return nil, errClosed()
	}
	m.recOnce.Do(func() {
		m.rec = &memRecords{owners: map[string]map[string]*memRecord{}, names: map[string]map[string]struct{}{}}
	})
	return m.rec, nil
}

// lockedRecords returns the records locked, swept when due; the caller unlocks.
func (m *Memory) lockedRecords(now time.Time, idle time.Duration) (*memRecords, error) {
	r, err := m.records()
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	if !now.Before(r.nextSweep) {
		m.sweepRecords(r, now)
		r.nextSweep = now.Add(max(idle/touchSlack, time.Minute))
	}
	return r, nil
}

func (m *Memory) sweepRecords(r *memRecords, now time.Time) {
	for owner, held := range r.owners {
		for name, rec := range held {
			if !rec.live(now) {
				m.removeRecord(r, owner, name)
			}
		}
	}
}

// live returns owner's record under name when it is live, removing it when it expired.
func (m *Memory) liveRecord(r *memRecords, owner, name string, now time.Time) *memRecord {
	rec, ok := r.owners[owner][name]
	if !ok {
		return nil
	}
	if !rec.live(now) {
		m.removeRecord(r, owner, name)
		return nil
	}
	return rec
}

func (m *Memory) removeRecord(r *memRecords, owner, name string) {
	rec := r.owners[owner][name]
	m.bytes.Add(-int64(len(rec.value)) - recordOverhead)
	delete(r.owners[owner], name)
	if len(r.owners[owner]) == 0 {
		delete(r.owners, owner)
	}
	delete(r.names[name], owner)
	if len(r.names[name]) == 0 {
		delete(r.names, name)
	}
}

// GetRecord implements Records.
func (m *Memory) GetRecord(_ context.Context, owner, name string, life RecordLife) ([]byte, bool, error) {
	if err := life.valid(); err != nil {
		return nil, false, err
	}
	r, err := m.lockedRecords(life.Now, life.Idle)
	if err != nil {
		return nil, false, err
	}
	defer r.mu.Unlock()
	rec := m.liveRecord(r, owner, name, life.Now)
	if rec == nil {
		return nil, false, nil
	}
	if idle, moved := life.touched(rec.idle, rec.absolute); moved {
		rec.idle = idle
	}
	return bytes.Clone(rec.value), true, nil
}

// PutRecord implements Records. Records count against the value pool's bytes (MaxValueBytes).
func (m *Memory) PutRecord(_ context.Context, owner, name string, value []byte, b Budget, life RecordLife) (bool, error) {
	return m.putRecord(owner, name, value, b, life, false)
}

// AddRecord implements Records.
func (m *Memory) AddRecord(_ context.Context, owner, name string, value []byte, b Budget, life RecordLife) (bool, error) {
	return m.putRecord(owner, name, value, b, life, true)
}

func (m *Memory) putRecord(owner, name string, value []byte, b Budget, life RecordLife, onlyNew bool) (bool, error) {
	if err := checkRecordBudget(value, b); err != nil {
		return false, err
	}
	if err := life.valid(); err != nil {
		return false, err
	}
	r, err := m.lockedRecords(life.Now, life.Idle)
	if err != nil {
		return false, err
	}
	defer r.mu.Unlock()
	old := m.liveRecord(r, owner, name, life.Now)
	if old != nil && onlyNew {
		if bytes.Equal(old.value, value) {
			return true, nil
		}
		return false, ErrRecordExists
	}
	count, size := 1, int64(len(value))
	for n := range r.owners[owner] {
		if rec := m.liveRecord(r, owner, n, life.Now); rec != nil && n != name {
			count++
			size += int64(len(rec.value))
		}
	}
	if count > b.Count || size > b.Bytes {
		return false, nil
	}
	delta := int64(len(value)) + recordOverhead
	if old != nil {
		delta -= int64(len(old.value)) + recordOverhead
	}
	if err := m.takeRecordBytes(delta); err != nil {
		return false, err
	}
	held := r.owners[owner]
	if held == nil {
		held = map[string]*memRecord{}
		r.owners[owner] = held
	}
	idle, absolute := life.deadlines()
	held[name] = &memRecord{value: bytes.Clone(value), idle: idle, absolute: absolute}
	idx := r.names[name]
	if idx == nil {
		idx = map[string]struct{}{}
		r.names[name] = idx
	}
	idx[owner] = struct{}{}
	return true, nil
}

// SwapRecord implements Records. A record that grows counts against the value pool's bytes
// as in PutRecord: past MaxValueBytes the swap fails with ErrFull and nothing changes.
func (m *Memory) SwapRecord(_ context.Context, owner, name string, old, value []byte, life RecordLife) (bool, error) {
	if err := life.valid(); err != nil {
		return false, err
	}
	r, err := m.lockedRecords(life.Now, life.Idle)
	if err != nil {
		return false, err
	}
	defer r.mu.Unlock()
	cur := m.liveRecord(r, owner, name, life.Now)
	if cur == nil || !bytes.Equal(cur.value, old) && !bytes.Equal(cur.value, value) {
		return false, nil
	}
	if err := m.takeRecordBytes(int64(len(value)) - int64(len(cur.value))); err != nil {
		return false, err
	}
	cur.value = bytes.Clone(value)
	cur.idle, _ = life.touched(cur.idle, cur.absolute)
	return true, nil
}

// DeleteRecord implements Records.
func (m *Memory) DeleteRecord(_ context.Context, owner, name string, old []byte) (bool, error) {
	r, err := m.records()
	if err != nil {
		return false, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	cur, ok := r.owners[owner][name]
	if !ok || (old != nil && !bytes.Equal(cur.value, old)) {
		return false, nil
	}
	m.removeRecord(r, owner, name)
	return true, nil
}

// OwnerRecords implements Records.
func (m *Memory) OwnerRecords(_ context.Context, owner string, life RecordLife) (map[string][]byte, error) {
	now := life.Now
	r, err := m.lockedRecords(now, life.Idle)
	if err != nil {
		return nil, err
	}
	defer r.mu.Unlock()
	out := make(map[string][]byte, len(r.owners[owner]))
	for n := range r.owners[owner] {
		if rec := m.liveRecord(r, owner, n, now); rec != nil {
			out[n] = bytes.Clone(rec.value)
		}
	}
	return out, nil
}

// NameOwners implements Records. The owners are listed as they were when it was called.
func (m *Memory) NameOwners(ctx context.Context, name string, life RecordLife, fn func(owners []string) error) error {
	now := life.Now
	r, err := m.records()
	if err != nil {
		return err
	}
	r.mu.Lock()
	all := make([]string, 0, len(r.names[name]))
	for o := range r.names[name] {
		if m.liveRecord(r, o, name, now) != nil {
			all = append(all, o)
		}
	}
	r.mu.Unlock()
	for len(all) > 0 {
		n := min(len(all), nameBatch)
		if err := fn(all[:n]); err != nil {
			return err
		}
		all = all[n:]
	}
	return ctx.Err()
}

// CountRecords implements Records.
func (m *Memory) CountRecords(_ context.Context, name string, life RecordLife) (int64, error) {
	now := life.Now
	r, err := m.lockedRecords(now, life.Idle)
	if err != nil {
		return 0, err
	}
	defer r.mu.Unlock()
	n := int64(0)
	for o := range r.names[name] {
		if m.liveRecord(r, o, name, now) != nil {
			n++
		}
	}
	return n, nil
}

// takeRecordBytes moves the value pool's bytes by delta, refusing a growth past MaxValueBytes
// (a shrink always passes). Called under the records' lock.
func (m *Memory) takeRecordBytes(delta int64) error {
	if !takeBytes(&m.bytes, delta, m.maxBytes) {
		m.full[kindValue].Add(1)
		return fmt.Errorf("%w: %w: value bytes", ErrUnavailable, ErrFull)
	}
	return nil
}

func checkRecordBudget(value []byte, b Budget) error {
	if b.Count < 1 || b.Bytes < 1 {
		return fmt.Errorf("%w: budget %+v", ErrInvalidBudget, b)
	}
	if int64(len(value)) > b.Bytes {
		return ErrRecordTooLarge
	}
	return nil
}
