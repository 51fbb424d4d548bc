package store

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis layout of Records. Each owner's records are one hash, keyed with a hash tag of its own
// ({<digest of the owner>}), so the owners spread over a Cluster's slots and every script
// touches that one key: a record under its name, its idle and absolute deadlines (Unix ms)
// under recIdle+name and recAbsolute+name, and for a name removed lately a tombstone under
// recGone+name. The hash expires (PEXPIREAT) at the latest idle deadline it holds, so the
// records of an owner nobody reads again leave Redis by themselves.
//
// Each name's owners are a sorted set of their own slot, scored with (at least) the record's
// idle deadline; it drops the entries whose deadline passed whenever it is counted or listed.
// It is written apart from the records (another slot), in an order that keeps every live record
// listed: an entry is added or raised before the record is written or its deadline moved, and
// a put adds it again after; an entry may outlive its record (readers find no record and move
// on) until its score passes. Beside the set, in its slot, a hash holds for each owner the
// mark of the put that last indexed it (its call's token and its absolute deadline), which the
// put also writes beside its record (recMark): a removal takes the entry only while the mark
// there is the removed record's, so a put of the same owner and name by another replica, landing
// between the removal's two steps, keeps its entry (recUnindexScript).
//
// The previous layout put every record in one slot ({rec}: a hash per owner of bare records, a
// set per name of owners). Its records are moved into the new layout when their owner is met
// (a read that finds nothing, a put, a listing) and, for those nobody meets, when their name is
// counted or listed; their deadlines start then. A removal leaves a tombstone for moveWindow,
// so a move that read the old record before the removal does not bring it back.
const (
	recOwnerTag = "urec:{"
	recNameTag  = "urecn:{"
	// recOldOwnerTag and recOldNameTag are the previous layout's keys.
	recOldOwnerTag = "{rec}:o:"
	recOldNameTag  = "{rec}:n:"
	// recIdle, recAbsolute and recGone prefix a record's deadlines and tombstone in its
	// owner's hash: a NUL, which no name the vault stores (a backend name) holds.
	recIdle     = "\x00i:"
	recAbsolute = "\x00a:"
	recGone     = "\x00d:"
	// recGoneBy prefixes the token of the call that removed a record (recDeleteScript);
	// replicas of earlier releases skip it as they skip every NUL field.
	recGoneBy = "\x00b:"
	// recMark prefixes the mark of the put that wrote a record (see recUnindexScript). It
	// stays after the record goes, until the next put or move under the name.
	recMark = "\x00m:"
	// recMarksSuffix and recSweepSuffix make the keys of a name's marks and of their next
	// sweep from its index's key: the same hash tag, so the same slot.
	recMarksSuffix = "m"
	recSweepSuffix = "s"
	// moveWindow is how long a tombstone stops a move: far longer than one move runs.
	moveWindow = 10 * time.Minute
)

// recGetScript is GetRecord. KEYS: owner's hash. ARGV: name, now, idle, slack (ms). Returns
// nil, or the record and the idle deadline a use moves it to (0: not worth a write); an
// expired record is removed.
const recGetScript = `
local name, now = ARGV[1], tonumber(ARGV[2])
local rec = redis.call('HGET', KEYS[1], name)
if not rec then return false end
local i = tonumber(redis.call('HGET', KEYS[1], '` + recIdle + `' .. name))
if not i or i <= now then
  redis.call('HDEL', KEYS[1], name, '` + recIdle + `' .. name, '` + recAbsolute + `' .. name)
  return false
end
local want = math.min(now + tonumber(ARGV[3]), tonumber(redis.call('HGET', KEYS[1], '` + recAbsolute + `' .. name)))
if want - i <= tonumber(ARGV[4]) then want = 0 end
return {rec, want}
`

// recTouchScript moves a live record's idle deadline to ARGV[2] (never back). KEYS: owner's
// hash. ARGV: name, deadline.
const recTouchScript = `
local i = tonumber(redis.call('HGET', KEYS[1], '` + recIdle + `' .. ARGV[1]))
local want = tonumber(ARGV[2])
if i and i < want then
  redis.call('HSET', KEYS[1], '` + recIdle + `' .. ARGV[1], want)
  if redis.call('PEXPIRETIME', KEYS[1]) < want then redis.call('PEXPIREAT', KEYS[1], want) end
end
return 0
`

// recPutScript is PutRecord and AddRecord. KEYS: owner's hash. ARGV: name, value, max count,
// max bytes, "1" to store only while owner has no live record under name, now, idle, absolute,
// the put's mark (recIndexScript).
// Returns 1 when stored, 0 over the budget, -1 when a record is there (AddRecord) that is not
// value (value itself: this call's earlier attempt stored it, see Records.SwapRecord). The
// owner's records that expired are removed first.
const recPutScript = `
local name, now = ARGV[1], tonumber(ARGV[6])
local function expired(f)
  local i = tonumber(redis.call('HGET', KEYS[1], '` + recIdle + `' .. f))
  return not i or i <= now
end
if ARGV[5] == '1' and redis.call('HEXISTS', KEYS[1], name) == 1 and not expired(name) then
  if redis.call('HGET', KEYS[1], name) == ARGV[2] then
    return 1
  end
  return -1
end
local count, bytes = 1, string.len(ARGV[2])
for _, f in ipairs(redis.call('HKEYS', KEYS[1])) do
  if f ~= name and string.byte(f, 1) ~= 0 then
    if expired(f) then
      redis.call('HDEL', KEYS[1], f, '` + recIdle + `' .. f, '` + recAbsolute + `' .. f)
    else
      count = count + 1
      bytes = bytes + redis.call('HSTRLEN', KEYS[1], f)
    end
  end
end
if count > tonumber(ARGV[3]) or bytes > tonumber(ARGV[4]) then
  return 0
end
local a = now + tonumber(ARGV[8])
local i = math.min(now + tonumber(ARGV[7]), a)
redis.call('HSET', KEYS[1], name, ARGV[2], '` + recIdle + `' .. name, i, '` + recAbsolute + `' .. name, a, '` + recMark + `' .. name, ARGV[9])
redis.call('HDEL', KEYS[1], '` + recGone + `' .. name, '` + recGoneBy + `' .. name)
if redis.call('PEXPIRETIME', KEYS[1]) < i then redis.call('PEXPIREAT', KEYS[1], i) end
return 1
`

// recSwapScript is SwapRecord. KEYS: owner's hash. ARGV: name, old, value, now, idle.
// Returns the record's new idle deadline, 0 when it was not swapped. A record holding value
// was swapped by this call's earlier attempt (see Records.SwapRecord): it is swapped again.
const recSwapScript = `
local name, now = ARGV[1], tonumber(ARGV[4])
local i = tonumber(redis.call('HGET', KEYS[1], '` + recIdle + `' .. name))
local cur = redis.call('HGET', KEYS[1], name)
if (cur ~= ARGV[2] and cur ~= ARGV[3]) or not i or i <= now then
  return 0
end
local want = math.max(i, math.min(now + tonumber(ARGV[5]), tonumber(redis.call('HGET', KEYS[1], '` + recAbsolute + `' .. name))))
redis.call('HSET', KEYS[1], name, ARGV[3], '` + recIdle + `' .. name, want)
if redis.call('PEXPIRETIME', KEYS[1]) < want then redis.call('PEXPIREAT', KEYS[1], want) end
return want
`

// serverMs is the Redis server's clock in ms: a tombstone is written and read by different
// replicas, whose clocks the vault's own clock need not agree with.
const serverMs = `
local t = redis.call('TIME')
local servernow = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`

// recDeleteScript is DeleteRecord. KEYS: owner's hash. ARGV: name, "1" to compare, old,
// tombstone lifetime (ms), the call's token (Redis.token). It leaves a tombstone, so that a
// move of the previous layout's record, begun before, does not bring it back, and beside it
// the token of the call that removed the record: a name without a record whose remover holds
// this call's token was removed by this call's earlier attempt, and counts as removed. Returns
// 1 when removed (else 0) and the mark of the last put under name (empty for none).
const recDeleteScript = serverMs + `
local name = ARGV[1]
local cur = redis.call('HGET', KEYS[1], name)
local mark = redis.call('HGET', KEYS[1], '` + recMark + `' .. name) or ''
if not cur and redis.call('HGET', KEYS[1], '` + recGoneBy + `' .. name) == ARGV[5] then
  return {1, mark}
end
if ARGV[2] == '1' and cur ~= ARGV[3] then
  return {0, mark}
end
local n = redis.call('HDEL', KEYS[1], name, '` + recIdle + `' .. name, '` + recAbsolute + `' .. name)
redis.call('HSET', KEYS[1], '` + recGone + `' .. name, servernow, '` + recGoneBy + `' .. name, ARGV[5])
local gone = servernow + tonumber(ARGV[4])
if redis.call('PEXPIRETIME', KEYS[1]) < gone then redis.call('PEXPIREAT', KEYS[1], gone) end
if n > 0 then return {1, mark} end
return {0, mark}
`

// recIndexScript is a put's first index write. KEYS: name's index, name's marks. ARGV: owner,
// idle deadline, the put's mark: its call's token and absolute deadline (ms), which no other
// put repeats. The owner's entry is added or raised (ZADD GT) and its mark set, in one step.
const recIndexScript = `
redis.call('ZADD', KEYS[1], 'GT', ARGV[2], ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
return 0
`

// recUnindexScript is a removal's index step. KEYS: name's index, name's marks. ARGV: owner,
// the mark the removal found beside the record. The entry goes only while the owner's mark is
// that one: a put since (another replica's, landing between the record's removal and this)
// marked the entry anew, and it stays with that put's record. An entry no put of this release
// marked (written before it, or by a move) has the empty mark.
const recUnindexScript = `
if (redis.call('HGET', KEYS[2], ARGV[1]) or '') ~= ARGV[2] then return 0 end
redis.call('HDEL', KEYS[2], ARGV[1])
return redis.call('ZREM', KEYS[1], ARGV[1])
`

// recUnindexOldScript is a removal's step in the previous layout. KEYS: the old hash, the old
// set. ARGV: owner, name, "1" to compare, old. The record goes when it is (or, without
// comparing, whatever it is), and the owner leaves the set only when no record stays: the
// listing goes with the record, never without it.
const recUnindexOldScript = `
local cur = redis.call('HGET', KEYS[1], ARGV[2])
if cur and (ARGV[3] ~= '1' or cur == ARGV[4]) then
  redis.call('HDEL', KEYS[1], ARGV[2])
  cur = false
end
if not cur then redis.call('SREM', KEYS[2], ARGV[1]) end
return 0
`

// recCountScript is CountRecords. KEYS: name's index, name's marks, the time of the marks'
// next sweep. ARGV: now, the time between sweeps (ms). The entries whose deadline passed go,
// then the others are counted. When a sweep is due, the marks whose absolute deadline passed
// go too (no record they mark can be live): a sweep reads every mark, so it runs at most once
// per period, not on every count (the vault-size metric counts on every scrape).
const recCountScript = `
local now = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local due = tonumber(redis.call('GET', KEYS[3]))
if not due or due <= now then
  local marks = redis.call('HGETALL', KEYS[2])
  for k = 1, #marks, 2 do
    local a = tonumber(string.match(marks[k + 1], ' (%d+)$'))
    if not a or a <= now then redis.call('HDEL', KEYS[2], marks[k]) end
  end
  redis.call('SET', KEYS[3], now + tonumber(ARGV[2]), 'PX', 2 * tonumber(ARGV[2]))
end
return redis.call('ZCOUNT', KEYS[1], '(' .. now, '+inf')
`

// recAdoptScript writes records of the previous layout into an owner's hash, each only where
// the owner has no record under its name and no tombstone newer than moveWindow. KEYS: owner's
// hash. ARGV: now, idle, absolute, window, then name and record pairs.
const recAdoptScript = serverMs + `
local now = tonumber(ARGV[1])
local a = now + tonumber(ARGV[3])
local i = math.min(now + tonumber(ARGV[2]), a)
local n = 0
for k = 5, #ARGV, 2 do
  local name, rec = ARGV[k], ARGV[k + 1]
  local gone = tonumber(redis.call('HGET', KEYS[1], '` + recGone + `' .. name))
  if redis.call('HEXISTS', KEYS[1], name) == 0 and not (gone and servernow - gone < tonumber(ARGV[4])) then
    redis.call('HSET', KEYS[1], name, rec, '` + recIdle + `' .. name, i, '` + recAbsolute + `' .. name, a)
    redis.call('HDEL', KEYS[1], '` + recMark + `' .. name)
    n = n + 1
  end
end
if n > 0 and redis.call('PEXPIRETIME', KEYS[1]) < i then redis.call('PEXPIREAT', KEYS[1], i) end
return n
`

// recDropOldScript removes the previous layout's records that still hold what was moved.
// KEYS: the old hash. ARGV: name and record pairs.
const recDropOldScript = `
for k = 1, #ARGV, 2 do
  if redis.call('HGET', KEYS[1], ARGV[k]) == ARGV[k + 1] then
    redis.call('HDEL', KEYS[1], ARGV[k])
  end
end
return 0
`

// redisRecords holds the Redis store's Records helpers (the store's own methods are its
// interfaces').
type redisRecords struct{ *Redis }

func (r redisRecords) ownerKey(owner string) string {
	return r.prefix + recOwnerTag + b64Digest(owner) + "}"
}

func (r redisRecords) nameKey(name string) string {
	return r.prefix + recNameTag + b64Digest(name) + "}"
}

func (r redisRecords) marksKey(name string) string {
	return r.nameKey(name) + recMarksSuffix
}

func (r redisRecords) oldOwnerKey(owner string) string {
	return r.prefix + recOldOwnerTag + b64Digest(owner)
}

func (r redisRecords) oldNameKey(name string) string {
	return r.prefix + recOldNameTag + b64Digest(name)
}

func ms(t time.Time) int64 { return t.UnixMilli() }

// run runs one command or script through the breaker.
func (r redisRecords) run(do func() error) error {
	probe, err := r.admit()
	if err != nil {
		return err
	}
	err = do()
	if errors.Is(err, redis.Nil) {
		r.brk.done(probe, outcomeOK)
		return err
	}
	return r.done(probe, err)
}

// index adds owner to name's sorted set with score deadline, or raises it there.
func (r redisRecords) index(ctx context.Context, name, owner string, deadline int64) error {
	return r.run(func() error {
		return r.client.ZAddGT(ctx, r.nameKey(name), redis.Z{Score: float64(deadline), Member: owner}).Err()
	})
}

// GetRecord implements Records: one script, two more round trips when the read moves the
// idle deadline (the index first), one more when the owner has nothing (a record of the
// previous layout is moved, then read).
func (s *Redis) GetRecord(ctx context.Context, owner, name string, life RecordLife) ([]byte, bool, error) {
	r := redisRecords{s}
	if err := life.valid(); err != nil {
		return nil, false, err
	}
	rec, want, err := r.getRecord(ctx, owner, name, life)
	if errors.Is(err, redis.Nil) {
		moved, merr := r.moveOwner(ctx, owner, life)
		if merr != nil || !moved {
			return nil, false, merr
		}
		rec, want, err = r.getRecord(ctx, owner, name, life)
	}
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if want > 0 {
		// The index before the record: a live record is never scored below its deadline.
		if err := r.index(ctx, name, owner, want); err != nil {
			return rec, true, nil // the use is not recorded; the record is read all the same
		}
		_ = r.run(func() error { return r.recTouch.Run(ctx, r.client, []string{r.ownerKey(owner)}, name, want).Err() })
	}
	return rec, true, nil
}

func (r redisRecords) getRecord(ctx context.Context, owner, name string, life RecordLife) ([]byte, int64, error) {
	var res []any
	err := r.run(func() error {
		var err error
		res, err = r.recGet.Run(ctx, r.client, []string{r.ownerKey(owner)}, name, ms(life.Now),
			life.Idle.Milliseconds(), (life.Idle / touchSlack).Milliseconds()).Slice()
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	rec, _ := res[0].(string)
	want, _ := res[1].(int64)
	return []byte(rec), want, nil
}

// PutRecord implements Records: the index (marked as this put's), the script, the index again
// (so that a removal by a replica of the previous release, which takes the entry whatever its
// mark, leaves the put's record listed).
func (r *Redis) PutRecord(ctx context.Context, owner, name string, value []byte, b Budget, life RecordLife) (bool, error) {
	return redisRecords{r}.putRecord(ctx, owner, name, value, b, life, "0")
}

// AddRecord implements Records as PutRecord does.
func (r *Redis) AddRecord(ctx context.Context, owner, name string, value []byte, b Budget, life RecordLife) (bool, error) {
	return redisRecords{r}.putRecord(ctx, owner, name, value, b, life, "1")
}

func (r redisRecords) putRecord(ctx context.Context, owner, name string, value []byte, b Budget, life RecordLife, onlyNew string) (bool, error) {
	if err := checkRecordBudget(value, b); err != nil {
		return false, err
	}
	if err := life.valid(); err != nil {
		return false, err
	}
	if _, err := r.moveOwner(ctx, owner, life); err != nil {
		return false, err
	}
	deadline, absolute := life.deadlines()
	mark := r.token() + " " + strconv.FormatInt(ms(absolute), 10)
	if err := r.run(func() error {
		return r.recIndex.Run(ctx, r.client, []string{r.nameKey(name), r.marksKey(name)}, owner, ms(deadline), mark).Err()
	}); err != nil {
		return false, err
	}
	var n int64
	err := r.run(func() error {
		var err error
		n, err = r.recPut.Run(ctx, r.client, []string{r.ownerKey(owner)}, name, value, b.Count, b.Bytes, onlyNew,
			ms(life.Now), life.Idle.Milliseconds(), life.Absolute.Milliseconds(), mark).Int64()
		return err
	})
	switch {
	case err != nil:
		return false, err
	case n < 0:
		return false, ErrRecordExists
	case n == 0:
		return false, nil // the entry added stays until its score passes: readers tolerate it
	}
	if err := r.index(ctx, name, owner, ms(deadline)); err != nil {
		return false, err
	}
	return true, nil
}

// SwapRecord implements Records: the script, then the index raised to the deadline the swap
// gave the record (a failure there leaves the entry at the record's previous deadline until
// the next use raises it).
func (s *Redis) SwapRecord(ctx context.Context, owner, name string, old, value []byte, life RecordLife) (bool, error) {
	r := redisRecords{s}
	if err := life.valid(); err != nil {
		return false, err
	}
	var want int64
	err := r.run(func() error {
		var err error
		want, err = r.recSwap.Run(ctx, r.client, []string{r.ownerKey(owner)}, name, old, value,
			ms(life.Now), life.Idle.Milliseconds()).Int64()
		return err
	})
	if err != nil || want == 0 {
		return false, err
	}
	_ = r.index(ctx, name, owner, want)
	return true, nil
}

// DeleteRecord implements Records: the record (leaving a tombstone), then its index entry
// while it is the removed record's (recUnindexScript), and the previous layout's record and
// entry, if any.
func (s *Redis) DeleteRecord(ctx context.Context, owner, name string, old []byte) (bool, error) {
	r := redisRecords{s}
	compare := "0"
	if old != nil {
		compare = "1"
	}
	var res []any
	err := r.run(func() error {
		var err error
		res, err = r.recDelete.Run(ctx, r.client, []string{r.ownerKey(owner)}, name, compare, old,
			moveWindow.Milliseconds(), s.token()).Slice()
		return err
	})
	if err != nil {
		return false, err
	}
	n, _ := res[0].(int64)
	mark, _ := res[1].(string)
	if n == 0 && old != nil {
		return false, nil
	}
	if s.beforeUnindex != nil {
		s.beforeUnindex()
	}
	err = r.run(func() error {
		pipe := r.client.Pipeline()
		pipe.Eval(ctx, recUnindexScript, []string{r.nameKey(name), r.marksKey(name)}, owner, mark)
		pipe.Eval(ctx, recUnindexOldScript, []string{r.oldOwnerKey(owner), r.oldNameKey(name)}, owner, name, compare, old)
		_, err := pipe.Exec(ctx)
		return err
	})
	return n == 1, err
}

// OwnerRecords implements Records: the records whose idle deadline is after now.
func (s *Redis) OwnerRecords(ctx context.Context, owner string, life RecordLife) (map[string][]byte, error) {
	r := redisRecords{s}
	if _, err := r.moveOwner(ctx, owner, life); err != nil {
		return nil, err
	}
	var all map[string]string
	err := r.run(func() error {
		var err error
		all, err = r.client.HGetAll(ctx, r.ownerKey(owner)).Result()
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make(map[string][]byte, len(all))
	for n, v := range all {
		if strings.HasPrefix(n, "\x00") {
			continue
		}
		if d, err := strconv.ParseInt(all[recIdle+n], 10, 64); err == nil && d > ms(life.Now) {
			out[n] = []byte(v)
		}
	}
	return out, nil
}

// NameOwners implements Records: the previous layout's owners of name are moved first, then
// the sorted set is scanned with ZSCAN: an owner added or removed meanwhile may be listed or
// not, every other one is listed at least once.
func (s *Redis) NameOwners(ctx context.Context, name string, life RecordLife, fn func(owners []string) error) error {
	r := redisRecords{s}
	if err := r.moveName(ctx, name, life); err != nil {
		return err
	}
	var cursor uint64
	for {
		var pairs []string
		var next uint64
		err := r.run(func() error {
			var err error
			pairs, next, err = r.client.ZScan(ctx, r.nameKey(name), cursor, "", nameBatch).Result()
			return err
		})
		if err != nil {
			return err
		}
		owners := make([]string, 0, len(pairs)/2)
		for k := 0; k+1 < len(pairs); k += 2 {
			if d, err := strconv.ParseFloat(pairs[k+1], 64); err == nil && int64(d) > ms(life.Now) {
				owners = append(owners, pairs[k])
			}
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

// CountRecords implements Records: the previous layout's owners of name are moved first (so
// the records nobody meets any more get deadlines too), the sorted set and the marks pruned,
// then counted.
func (s *Redis) CountRecords(ctx context.Context, name string, life RecordLife) (int64, error) {
	r := redisRecords{s}
	if err := r.moveName(ctx, name, life); err != nil {
		return 0, err
	}
	var count int64
	err := r.run(func() error {
		var err error
		count, err = r.recCount.Run(ctx, r.client, []string{r.nameKey(name), r.marksKey(name), r.nameKey(name) + recSweepSuffix},
			ms(life.Now), max(life.Idle/touchSlack, time.Minute).Milliseconds()).Int64()
		return err
	})
	if err != nil {
		return 0, err
	}
	return count, nil
}

// moveOwner moves owner's records of the previous layout into the new one: read, indexed,
// written where the owner has none (and no tombstone), then removed from the old hash while
// they still hold what was read. moved reports whether there was anything to move.
func (r redisRecords) moveOwner(ctx context.Context, owner string, life RecordLife) (moved bool, err error) {
	var old map[string]string
	err = r.run(func() error {
		var err error
		old, err = r.client.HGetAll(ctx, r.oldOwnerKey(owner)).Result()
		return err
	})
	if err != nil || len(old) == 0 {
		return false, err
	}
	deadline, _ := life.deadlines()
	pairs := make([]any, 0, 2*len(old))
	adopt := []any{ms(life.Now), life.Idle.Milliseconds(), life.Absolute.Milliseconds(), moveWindow.Milliseconds()}
	for name, rec := range old {
		if err := r.index(ctx, name, owner, ms(deadline)); err != nil {
			return false, err
		}
		pairs = append(pairs, name, rec)
	}
	if err := r.run(func() error {
		return r.recAdopt.Run(ctx, r.client, []string{r.ownerKey(owner)}, append(adopt, pairs...)...).Err()
	}); err != nil {
		return false, err
	}
	err = r.run(func() error {
		pipe := r.client.Pipeline()
		pipe.Eval(ctx, recDropOldScript, []string{r.oldOwnerKey(owner)}, pairs...)
		for name := range old {
			pipe.SRem(ctx, r.oldNameKey(name), owner)
		}
		_, err := pipe.Exec(ctx)
		return err
	})
	return true, err
}

// moveName moves the records of every owner in name's set of the previous layout, in batches:
// after it that set is gone.
func (r redisRecords) moveName(ctx context.Context, name string, life RecordLife) error {
	if err := life.valid(); err != nil {
		return err
	}
	for {
		var owners []string
		err := r.run(func() error {
			var err error
			owners, err = r.client.SRandMemberN(ctx, r.oldNameKey(name), nameBatch).Result()
			return err
		})
		if err != nil || len(owners) == 0 {
			return err
		}
		for _, o := range owners {
			if _, err := r.moveOwner(ctx, o, life); err != nil {
				return err
			}
			if err := r.run(func() error { return r.client.SRem(ctx, r.oldNameKey(name), o).Err() }); err != nil {
				return err
			}
		}
	}
}
