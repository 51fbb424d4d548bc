package store

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis layout of Records: one hash per owner, which holds each record under its name and the
// record's idle and absolute deadlines (Unix ms) under recIdle+name and recAbsolute+name, and
// one sorted set per name: its owners, each scored with its record's idle deadline. The owner's
// hash expires (PEXPIREAT) at the latest idle deadline it holds, so the records of an owner
// nobody reads again leave Redis by themselves; a sorted set drops the entries whose deadline
// passed whenever it is written, read or counted. Every key carries the hash tag {rec}, so the
// scripts that change a hash and a set together run in one slot of a Cluster.
//
// Before records expired, a name's owners were a plain set (recOldNameTag) and a record had no
// deadlines: such a record is given its deadlines, starting then, when it is first met (read,
// listed by its name, or counted), and its owner moves to the sorted set; nothing is lost on
// the upgrade.
const (
	recOwnerTag   = "{rec}:o:"
	recNameTag    = "{rec}:z:"
	recOldNameTag = "{rec}:n:"
	// recIdle and recAbsolute prefix a record's deadlines in its owner's hash: a NUL, which
	// no name the vault stores (a backend name) holds.
	recIdle     = "\x00i:"
	recAbsolute = "\x00a:"
)

// recLua is what the scripts share. KEYS: owner's hash, name's sorted set, name's old set.
// live(name, owner, now, idle, absolute) returns the record and its deadlines, removing it (and
// its index entry) when it expired; a record of before deadlines gets them (starting now) and
// its owner moves from the old set. keep(name, owner, value, i, a) writes a record with its
// deadlines, its index entry and the hash's expiry.
const recLua = `
local function live(name, owner, now, idle, absolute)
  local rec = redis.call('HGET', KEYS[1], name)
  if not rec then return nil end
  local i = tonumber(redis.call('HGET', KEYS[1], '` + recIdle + `' .. name))
  local a = tonumber(redis.call('HGET', KEYS[1], '` + recAbsolute + `' .. name))
  if not a then
    a = now + absolute
    i = math.min(now + idle, a)
    redis.call('HSET', KEYS[1], '` + recIdle + `' .. name, i, '` + recAbsolute + `' .. name, a)
    redis.call('SREM', KEYS[3], owner)
    redis.call('ZADD', KEYS[2], i, owner)
    if redis.call('PEXPIRETIME', KEYS[1]) < i then redis.call('PEXPIREAT', KEYS[1], i) end
  elseif i <= now then
    redis.call('HDEL', KEYS[1], name, '` + recIdle + `' .. name, '` + recAbsolute + `' .. name)
    redis.call('ZREM', KEYS[2], owner)
    return nil
  end
  return rec, i, a
end
local function keep(name, owner, value, i, a)
  redis.call('HSET', KEYS[1], name, value, '` + recIdle + `' .. name, i, '` + recAbsolute + `' .. name, a)
  redis.call('ZADD', KEYS[2], i, owner)
  redis.call('SREM', KEYS[3], owner)
  if redis.call('PEXPIRETIME', KEYS[1]) < i then redis.call('PEXPIREAT', KEYS[1], i) end
end
`

// recGetScript is GetRecord. ARGV: name, owner, now, idle, absolute, slack (ms). A read moves
// the idle deadline when it gains more than slack.
const recGetScript = recLua + `
local now, idle = tonumber(ARGV[3]), tonumber(ARGV[4])
local rec, i, a = live(ARGV[1], ARGV[2], now, idle, tonumber(ARGV[5]))
if not rec then return false end
local want = math.min(now + idle, a)
if want - i > tonumber(ARGV[6]) then keep(ARGV[1], ARGV[2], rec, want, a) end
return rec
`

// recPutScript is PutRecord and AddRecord. ARGV: name, value, owner, max count, max bytes,
// "1" to store only while owner has no live record under name, now, idle, absolute. Returns
// 1 when stored, 0 over the budget, -1 when a record is there (AddRecord). The owner's other
// records that expired are removed first (their index entries go with their sets' pruning).
const recPutScript = recLua + `
local now, idle, absolute = tonumber(ARGV[7]), tonumber(ARGV[8]), tonumber(ARGV[9])
if live(ARGV[1], ARGV[3], now, idle, absolute) and ARGV[6] == '1' then
  return -1
end
local count, bytes = 1, string.len(ARGV[2])
for _, f in ipairs(redis.call('HKEYS', KEYS[1])) do
  if f ~= ARGV[1] and string.byte(f, 1) ~= 0 then
    local i = tonumber(redis.call('HGET', KEYS[1], '` + recIdle + `' .. f))
    if i and i <= now then
      redis.call('HDEL', KEYS[1], f, '` + recIdle + `' .. f, '` + recAbsolute + `' .. f)
    else
      count = count + 1
      bytes = bytes + redis.call('HSTRLEN', KEYS[1], f)
    end
  end
end
if count > tonumber(ARGV[4]) or bytes > tonumber(ARGV[5]) then
  return 0
end
local a = now + absolute
keep(ARGV[1], ARGV[3], ARGV[2], math.min(now + idle, a), a)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
return 1
`

// recSwapScript is SwapRecord. ARGV: name, owner, old, value, now, idle, absolute.
const recSwapScript = recLua + `
local now, idle = tonumber(ARGV[5]), tonumber(ARGV[6])
local rec, i, a = live(ARGV[1], ARGV[2], now, idle, tonumber(ARGV[7]))
if rec ~= ARGV[3] then
  return 0
end
keep(ARGV[1], ARGV[2], ARGV[4], math.min(now + idle, a), a)
return 1
`

// recDeleteScript is DeleteRecord. ARGV: name, owner, "1" to compare, old.
const recDeleteScript = `
if ARGV[3] == '1' and redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[4] then
  return 0
end
local n = redis.call('HDEL', KEYS[1], ARGV[1], '` + recIdle + `' .. ARGV[1], '` + recAbsolute + `' .. ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[2])
redis.call('SREM', KEYS[3], ARGV[2])
if n > 0 then return 1 end
return 0
`

// recAdoptScript gives the records of before deadlines their deadlines, for the owners of
// one name's old set. KEYS: the owners' hashes, then the name's sorted set and old set (last
// two). ARGV: name, now, idle, absolute, then the owners (in KEYS' order).
const recAdoptScript = `
local n = #KEYS - 2
local z, old = KEYS[n + 1], KEYS[n + 2]
local name, now, idle, absolute = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
for k = 1, n do
  local h, owner = KEYS[k], ARGV[4 + k]
  if redis.call('HEXISTS', h, name) == 1 and not redis.call('HGET', h, '` + recAbsolute + `' .. name) then
    local a = now + absolute
    local i = math.min(now + idle, a)
    redis.call('HSET', h, '` + recIdle + `' .. name, i, '` + recAbsolute + `' .. name, a)
    redis.call('ZADD', z, i, owner)
    if redis.call('PEXPIRETIME', h) < i then redis.call('PEXPIREAT', h, i) end
  elseif redis.call('HEXISTS', h, name) == 1 then
    redis.call('ZADD', z, 'NX', tonumber(redis.call('HGET', h, '` + recIdle + `' .. name)), owner)
  end
  redis.call('SREM', old, owner)
end
return n
`

func (r *Redis) recOwnerKey(owner string) string { return r.prefix + recOwnerTag + b64Digest(owner) }

// recNameKeys are name's sorted set and old set.
func (r *Redis) recNameKeys(name string) (string, string) {
	d := b64Digest(name)
	return r.prefix + recNameTag + d, r.prefix + recOldNameTag + d
}

func (r *Redis) recKeys(owner, name string) []string {
	z, old := r.recNameKeys(name)
	return []string{r.recOwnerKey(owner), z, old}
}

func ms(t time.Time) int64 { return t.UnixMilli() }

// GetRecord implements Records with one script.
func (r *Redis) GetRecord(ctx context.Context, owner, name string, life RecordLife) ([]byte, bool, error) {
	if err := life.valid(); err != nil {
		return nil, false, err
	}
	probe, err := r.admit()
	if err != nil {
		return nil, false, err
	}
	v, err := r.recGet.Run(ctx, r.client, r.recKeys(owner, name), name, owner, ms(life.Now),
		life.Idle.Milliseconds(), life.Absolute.Milliseconds(), (life.Idle / touchSlack).Milliseconds()).Text()
	if errors.Is(err, redis.Nil) {
		r.brk.done(probe, outcomeOK)
		return nil, false, nil
	}
	if err = r.done(probe, err); err != nil {
		return nil, false, err
	}
	return []byte(v), true, nil
}

// PutRecord implements Records with one script.
func (r *Redis) PutRecord(ctx context.Context, owner, name string, value []byte, b Budget, life RecordLife) (bool, error) {
	return r.putRecord(ctx, owner, name, value, b, life, "0")
}

// AddRecord implements Records with PutRecord's script.
func (r *Redis) AddRecord(ctx context.Context, owner, name string, value []byte, b Budget, life RecordLife) (bool, error) {
	return r.putRecord(ctx, owner, name, value, b, life, "1")
}

func (r *Redis) putRecord(ctx context.Context, owner, name string, value []byte, b Budget, life RecordLife, onlyNew string) (bool, error) {
	if err := checkRecordBudget(value, b); err != nil {
		return false, err
	}
	if err := life.valid(); err != nil {
		return false, err
	}
	probe, err := r.admit()
	if err != nil {
		return false, err
	}
	n, err := r.recPut.Run(ctx, r.client, r.recKeys(owner, name), name, value, owner, b.Count, b.Bytes, onlyNew,
		ms(life.Now), life.Idle.Milliseconds(), life.Absolute.Milliseconds()).Int64()
	if err = r.done(probe, err); err != nil {
		return false, err
	}
	if n < 0 {
		return false, ErrRecordExists
	}
	return n == 1, nil
}

// SwapRecord implements Records with one script.
func (r *Redis) SwapRecord(ctx context.Context, owner, name string, old, value []byte, life RecordLife) (bool, error) {
	if err := life.valid(); err != nil {
		return false, err
	}
	probe, err := r.admit()
	if err != nil {
		return false, err
	}
	n, err := r.recSwap.Run(ctx, r.client, r.recKeys(owner, name), name, owner, old, value,
		ms(life.Now), life.Idle.Milliseconds(), life.Absolute.Milliseconds()).Int64()
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
	n, err := r.recDelete.Run(ctx, r.client, r.recKeys(owner, name), name, owner, compare, old).Int64()
	if err = r.done(probe, err); err != nil {
		return false, err
	}
	return n == 1, nil
}

// OwnerRecords implements Records: the records whose idle deadline is after now, and those of
// before deadlines (GetRecord gives them theirs).
func (r *Redis) OwnerRecords(ctx context.Context, owner string, life RecordLife) (map[string][]byte, error) {
	now := life.Now
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
		if strings.HasPrefix(n, "\x00") {
			continue
		}
		if i, ok := all[recIdle+n]; ok {
			if d, err := strconv.ParseInt(i, 10, 64); err != nil || d <= ms(now) {
				continue
			}
		}
		out[n] = []byte(v)
	}
	return out, nil
}

// NameOwners implements Records: the old set's owners are adopted first (in batches), then
// the sorted set is pruned and scanned with ZSCAN: an owner added or removed meanwhile may be
// listed or not, every other one is listed at least once.
func (r *Redis) NameOwners(ctx context.Context, name string, life RecordLife, fn func(owners []string) error) error {
	now := life.Now
	if err := r.adopt(ctx, name, life); err != nil {
		return err
	}
	z, _ := r.recNameKeys(name)
	var cursor uint64
	for {
		probe, err := r.admit()
		if err != nil {
			return err
		}
		pairs, next, err := r.client.ZScan(ctx, z, cursor, "", nameBatch).Result()
		if err = r.done(probe, err); err != nil {
			return err
		}
		owners := make([]string, 0, len(pairs)/2)
		for k := 0; k+1 < len(pairs); k += 2 {
			if d, err := strconv.ParseFloat(pairs[k+1], 64); err == nil && int64(d) > ms(now) {
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

// CountRecords implements Records: the sorted set is pruned, then counted; the old set's owners
// are adopted first, so the records nobody meets any more still get deadlines.
func (r *Redis) CountRecords(ctx context.Context, name string, life RecordLife) (int64, error) {
	now := life.Now
	if err := r.adopt(ctx, name, life); err != nil {
		return 0, err
	}
	z, _ := r.recNameKeys(name)
	probe, err := r.admit()
	if err != nil {
		return 0, err
	}
	pipe := r.client.TxPipeline()
	pipe.ZRemRangeByScore(ctx, z, "-inf", strconv.FormatInt(ms(now), 10))
	count := pipe.ZCount(ctx, z, "("+strconv.FormatInt(ms(now), 10), "+inf")
	_, err = pipe.Exec(ctx)
	if err = r.done(probe, err); err != nil {
		return 0, err
	}
	return count.Val(), nil
}

// adopt moves the owners of name's old set (from before records expired) to its sorted set,
// giving their records deadlines that start now, in batches: after it the old set is gone.
func (r *Redis) adopt(ctx context.Context, name string, life RecordLife) error {
	if err := life.valid(); err != nil {
		return err
	}
	z, old := r.recNameKeys(name)
	for {
		probe, err := r.admit()
		if err != nil {
			return err
		}
		owners, err := r.client.SRandMemberN(ctx, old, nameBatch).Result()
		if err = r.done(probe, err); err != nil || len(owners) == 0 {
			return err
		}
		keys := make([]string, 0, len(owners)+2)
		args := make([]any, 0, len(owners)+4)
		args = append(args, name, ms(life.Now), life.Idle.Milliseconds(), life.Absolute.Milliseconds())
		for _, o := range owners {
			keys = append(keys, r.recOwnerKey(o))
			args = append(args, o)
		}
		keys = append(keys, z, old)
		if probe, err = r.admit(); err != nil {
			return err
		}
		err = r.recAdopt.Run(ctx, r.client, keys, args...).Err()
		if err = r.done(probe, err); err != nil {
			return err
		}
	}
}
