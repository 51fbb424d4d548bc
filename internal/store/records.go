package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/redis/go-redis/v9"
)

// Records keeps small records grouped by owner, one per name, with an index of the owners of
// each name: the storage of the per-user token vault (internal/vault), where the owner is a
// digest of a caller's identity and the name a backend. What an owner holds is bounded
// (PutRecord's budget), the owners of one name can be listed (revoking every record of a
// backend) and counted (the vault's size), and records are replaced or removed only while
// they still hold what the caller read (SwapRecord, DeleteRecord), so a refresh that ends
// after a disconnect does not bring the record back.
//
// Owners are kept as given in the index: pass a digest, not an identity. Records do not expire.
// Both Memory and Redis implement it; every failure of Redis wraps ErrUnavailable.
type Records interface {
	// GetRecord returns owner's record under name, and false when there is none.
	GetRecord(ctx context.Context, owner, name string) ([]byte, bool, error)
	// PutRecord stores value as owner's record under name, replacing any, unless owner would
	// then hold more than b.Count records or more than b.Bytes bytes of them: stored is then
	// false and nothing changes.
	PutRecord(ctx context.Context, owner, name string, value []byte, b Budget) (stored bool, err error)
	// AddRecord is PutRecord only while owner holds no record under name: otherwise it fails
	// with ErrRecordExists and nothing changes. Two writers that each found no record (two
	// first connects completing together) so learn which of them came second.
	AddRecord(ctx context.Context, owner, name string, value []byte, b Budget) (stored bool, err error)
	// SwapRecord replaces owner's record under name with value only while it still holds old
	// (byte for byte); swapped is false otherwise, the record absent included.
	SwapRecord(ctx context.Context, owner, name string, old, value []byte) (swapped bool, err error)
	// DeleteRecord removes owner's record under name; with old set, only while it still
	// holds old. removed reports whether a record went.
	DeleteRecord(ctx context.Context, owner, name string, old []byte) (removed bool, err error)
	// OwnerRecords returns every record of owner, by name.
	OwnerRecords(ctx context.Context, owner string) (map[string][]byte, error)
	// NameOwners calls fn with the owners holding a record under name, in batches, until fn
	// fails or every owner was listed. fn may delete records as it goes.
	NameOwners(ctx context.Context, name string, fn func(owners []string) error) error
	// CountRecords returns how many owners hold a record under name.
	CountRecords(ctx context.Context, name string) (int64, error)
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
// refresh or a revocation).
type memRecords struct {
	mu     sync.Mutex
	owners map[string]map[string][]byte
	names  map[string]map[string]struct{}
}

func (m *Memory) records() (*memRecords, error) {
	if m.closed.Load() {
		return nil, errClosed()
	}
	m.recOnce.Do(func() {
		m.rec = &memRecords{owners: map[string]map[string][]byte{}, names: map[string]map[string]struct{}{}}
	})
	return m.rec, nil
}

// GetRecord implements Records.
func (m *Memory) GetRecord(_ context.Context, owner, name string) ([]byte, bool, error) {
	r, err := m.records()
	if err != nil {
		return nil, false, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := r.owners[owner][name]
	return bytes.Clone(v), ok, nil
}

// PutRecord implements Records. Records count against the value pool's bytes (MaxValueBytes).
func (m *Memory) PutRecord(_ context.Context, owner, name string, value []byte, b Budget) (bool, error) {
	return m.putRecord(owner, name, value, b, false)
}

// AddRecord implements Records.
func (m *Memory) AddRecord(_ context.Context, owner, name string, value []byte, b Budget) (bool, error) {
	return m.putRecord(owner, name, value, b, true)
}

func (m *Memory) putRecord(owner, name string, value []byte, b Budget, onlyNew bool) (bool, error) {
	if err := checkRecordBudget(value, b); err != nil {
		return false, err
	}
	r, err := m.records()
	if err != nil {
		return false, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	held := r.owners[owner]
	if _, had := held[name]; had && onlyNew {
		return false, ErrRecordExists
	}
	count, size := 1, int64(len(value))
	for n, v := range held {
		if n != name {
			count++
			size += int64(len(v))
		}
	}
	if count > b.Count || size > b.Bytes {
		return false, nil
	}
	old, had := held[name]
	delta := int64(len(value)) - int64(len(old))
	if !had {
		delta += recordOverhead
	}
	if err := m.takeRecordBytes(delta); err != nil {
		return false, err
	}
	if held == nil {
		held = map[string][]byte{}
		r.owners[owner] = held
	}
	held[name] = bytes.Clone(value)
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
func (m *Memory) SwapRecord(_ context.Context, owner, name string, old, value []byte) (bool, error) {
	r, err := m.records()
	if err != nil {
		return false, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	cur, ok := r.owners[owner][name]
	if !ok || !bytes.Equal(cur, old) {
		return false, nil
	}
	if err := m.takeRecordBytes(int64(len(value)) - int64(len(cur))); err != nil {
		return false, err
	}
	r.owners[owner][name] = bytes.Clone(value)
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
	if !ok || (old != nil && !bytes.Equal(cur, old)) {
		return false, nil
	}
	m.bytes.Add(-int64(len(cur)) - recordOverhead)
	delete(r.owners[owner], name)
	if len(r.owners[owner]) == 0 {
		delete(r.owners, owner)
	}
	delete(r.names[name], owner)
	if len(r.names[name]) == 0 {
		delete(r.names, name)
	}
	return true, nil
}

// OwnerRecords implements Records.
func (m *Memory) OwnerRecords(_ context.Context, owner string) (map[string][]byte, error) {
	r, err := m.records()
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string][]byte, len(r.owners[owner]))
	for n, v := range r.owners[owner] {
		out[n] = bytes.Clone(v)
	}
	return out, nil
}

// NameOwners implements Records. The owners are listed as they were when it was called.
func (m *Memory) NameOwners(ctx context.Context, name string, fn func(owners []string) error) error {
	r, err := m.records()
	if err != nil {
		return err
	}
	r.mu.Lock()
	all := make([]string, 0, len(r.names[name]))
	for o := range r.names[name] {
		all = append(all, o)
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
func (m *Memory) CountRecords(_ context.Context, name string) (int64, error) {
	r, err := m.records()
	if err != nil {
		return 0, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return int64(len(r.names[name])), nil
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

// Redis layout of Records: one hash per owner (field: name, value: the record) and one set per
// name (its owners). Both carry the hash tag {rec}, so the scripts that change a hash and a set
// together run in one slot of a Cluster.
const (
	recOwnerTag = "{rec}:o:"
	recNameTag  = "{rec}:n:"
)

// recPutScript is PutRecord and AddRecord. KEYS: owner's hash, name's set. ARGV: name, value,
// owner, max count, max bytes, "1" to store only while owner has no record under name. Returns 1
// when stored, 0 over the budget, -1 when a record is there (AddRecord).
const recPutScript = `
if ARGV[6] == '1' and redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
  return -1
end
local count, bytes = 1, string.len(ARGV[2])
for _, f in ipairs(redis.call('HKEYS', KEYS[1])) do
  if f ~= ARGV[1] then
    count = count + 1
    bytes = bytes + redis.call('HSTRLEN', KEYS[1], f)
  end
end
if count > tonumber(ARGV[4]) or bytes > tonumber(ARGV[5]) then
  return 0
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('SADD', KEYS[2], ARGV[3])
return 1
`

// recSwapScript is SwapRecord. KEYS: owner's hash. ARGV: name, old, value.
const recSwapScript = `
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then
  return 0
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return 1
`

// recDeleteScript is DeleteRecord. KEYS: owner's hash, name's set. ARGV: name, owner, "1" to
// compare, old.
const recDeleteScript = `
if ARGV[3] == '1' and redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[4] then
  return 0
end
local n = redis.call('HDEL', KEYS[1], ARGV[1])
if n == 1 then
  redis.call('SREM', KEYS[2], ARGV[2])
end
return n
`

func (r *Redis) recOwnerKey(owner string) string { return r.prefix + recOwnerTag + b64Digest(owner) }
func (r *Redis) recNameKey(name string) string   { return r.prefix + recNameTag + b64Digest(name) }

// GetRecord implements Records.
func (r *Redis) GetRecord(ctx context.Context, owner, name string) ([]byte, bool, error) {
	probe, err := r.admit()
	if err != nil {
		return nil, false, err
	}
	v, err := r.client.HGet(ctx, r.recOwnerKey(owner), name).Bytes()
	if errors.Is(err, redis.Nil) {
		r.brk.done(probe, outcomeOK)
		return nil, false, nil
	}
	if err = r.done(probe, err); err != nil {
		return nil, false, err
	}
	return v, true, nil
}

// PutRecord implements Records with one script.
func (r *Redis) PutRecord(ctx context.Context, owner, name string, value []byte, b Budget) (bool, error) {
	return r.putRecord(ctx, owner, name, value, b, "0")
}

// AddRecord implements Records with PutRecord's script.
func (r *Redis) AddRecord(ctx context.Context, owner, name string, value []byte, b Budget) (bool, error) {
	return r.putRecord(ctx, owner, name, value, b, "1")
}

func (r *Redis) putRecord(ctx context.Context, owner, name string, value []byte, b Budget, onlyNew string) (bool, error) {
	if err := checkRecordBudget(value, b); err != nil {
		return false, err
	}
	probe, err := r.admit()
	if err != nil {
		return false, err
	}
	n, err := r.recPut.Run(ctx, r.client, []string{r.recOwnerKey(owner), r.recNameKey(name)},
		name, value, owner, b.Count, b.Bytes, onlyNew).Int64()
	if err = r.done(probe, err); err != nil {
		return false, err
	}
	if n < 0 {
		return false, ErrRecordExists
	}
	return n == 1, nil
}

// SwapRecord implements Records with one script.
func (r *Redis) SwapRecord(ctx context.Context, owner, name string, old, value []byte) (bool, error) {
	probe, err := r.admit()
	if err != nil {
		return false, err
	}
	n, err := r.recSwap.Run(ctx, r.client, []string{r.recOwnerKey(owner)}, name, old, value).Int64()
	if err = r.done(probe, err); err != nil {
		return false, err
	}
	return n == 1, nil
}

// DeleteRecord implements Records with one script.
func (r *Redis) DeleteRecord(ctx context.Context, owner, name string, old []byte) (bool, error) {
	probe, err := r.admit()
	if err != nil {
		return false, err
	}
	compare := "0"
	if old != nil {
		compare = "1"
	}
	n, err := r.recDelete.Run(ctx, r.client, []string{r.recOwnerKey(owner), r.recNameKey(name)},
		name, owner, compare, old).Int64()
	if err = r.done(probe, err); err != nil {
		return false, err
	}
	return n == 1, nil
}

// OwnerRecords implements Records.
func (r *Redis) OwnerRecords(ctx context.Context, owner string) (map[string][]byte, error) {
	probe, err := r.admit()
	if err != nil {
		return nil, err
	}
	all, err := r.client.HGetAll(ctx, r.recOwnerKey(owner)).Result()
	if err = r.done(probe, err); err != nil {
		return nil, err
	}
	out := make(map[string][]byte, len(all))
	for n, v := range all {
		out[n] = []byte(v)
	}
	return out, nil
}

// NameOwners implements Records with SSCAN: an owner added or removed meanwhile may be listed
// or not, every other one is listed at least once.
func (r *Redis) NameOwners(ctx context.Context, name string, fn func(owners []string) error) error {
	var cursor uint64
	for {
		probe, err := r.admit()
		if err != nil {
			return err
		}
		owners, next, err := r.client.SScan(ctx, r.recNameKey(name), cursor, "", nameBatch).Result()
		if err = r.done(probe, err); err != nil {
			return err
		}
		if len(owners) > 0 {
			if err := fn(owners); err != nil {
				return err
			}
		}
		if next == 0 {
			return nil
		}
		cursor = next
	}
}

// CountRecords implements Records.
func (r *Redis) CountRecords(ctx context.Context, name string) (int64, error) {
	probe, err := r.admit()
	if err != nil {
		return 0, err
	}
	n, err := r.client.SCard(ctx, r.recNameKey(name)).Result()
	if err = r.done(probe, err); err != nil {
		return 0, err
	}
	return n, nil
}
