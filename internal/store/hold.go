package store

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strconv"
	"time"
)

// heldItemBytes is what one held item costs the memory store's value pool.
const heldItemBytes = 64

// heldItem is one item of a hold budget in the memory store; expires in Unix microseconds.
type heldItem struct {
	sum     [16]byte
	size    int64
	expires int64
}

// itemSum hashes an item name: like keys, items may be ids or come from hostile input and are
// never stored in clear.
func itemSum(item string) [16]byte {
	sum := sha256.Sum256([]byte("hold item\x00" + item))
	return [16]byte(sum[:16])
}

func checkHold(size int64, ttl time.Duration, b Budget) error {
	if ttl <= 0 {
		return ErrInvalidTTL
	}
	if size < 0 || b.Count < 1 || b.Bytes < 1 {
		return fmt.Errorf("%w: size %d, budget %+v", ErrInvalidBudget, size, b)
	}
	return nil
}

// Hold implements Store.
func (m *Memory) Hold(_ context.Context, key, item string, size int64, ttl time.Duration, b Budget) (bool, error) {
	if err := checkHold(size, ttl, b); err != nil {
		return false, err
	}
	k := memKey{kind: kindHold, sum: digest(key)}
	id := itemSum(item)
	var held bool
	err := m.retryFull(func() error {
		sh, now, err := m.lock(k)
		if err != nil {
			return err
		}
		defer sh.mu.Unlock()
		live := sh.liveHolds(k, now, id)
		var bytes int64
		for _, h := range live {
			bytes += h.size
		}
		if len(live)+1 > b.Count || bytes+size > b.Bytes {
			held = false
			return nil
		}
		live = append(live, heldItem{sum: id, size: size, expires: now + micros(ttl)})
		held = true
		return m.put(sh, k, memEntry{expires: latest(live), held: live}, now)
	})
	return held && err == nil, err
}

// Release implements Store.
func (m *Memory) Release(_ context.Context, key, item string) error {
	k := memKey{kind: kindHold, sum: digest(key)}
	sh, now, err := m.lock(k)
	if err != nil {
		return err
	}
	defer sh.mu.Unlock()
	live := sh.liveHolds(k, now, itemSum(item))
	if len(live) == 0 {
		sh.del(k)
		return nil
	}
	// Smaller than before: it always fits.
	return m.put(sh, k, memEntry{expires: latest(live), held: live}, now)
}

// liveHolds returns a copy of the unexpired items of the budget k, without item id.
func (sh *shard) liveHolds(k memKey, now int64, id [16]byte) []heldItem {
	e, ok := sh.entries[k]
	if !ok || e.expires <= now {
		return nil
	}
	live := make([]heldItem, 0, len(e.held)+1)
	for _, h := range e.held {
		if h.expires > now && h.sum != id {
			live = append(live, h)
		}
	}
	return live
}

// latest is when the last of items expires: the budget's own expiry.
func latest(items []heldItem) int64 {
	var t int64
	for _, h := range items {
		t = max(t, h.expires)
	}
	return t
}

// holdScript is Hold next to the budget, so replicas never interleave a read and a write of
// it. The budget is a sorted set scored by expiry (ms) whose members are "item|size"; expired
// members are dropped first. ARGV: item, size, ttl (ms), max count, max bytes, now (ms, or 0
// for the server's TIME). Returns 1 when held, 0 when the budget has no room.
const holdScript = `
local now = tonumber(ARGV[6])
if now <= 0 then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local me = ARGV[1] .. '|'
local count, bytes = 0, 0
for _, m in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  if string.sub(m, 1, #me) == me then
    redis.call('ZREM', KEYS[1], m)
  else
    count = count + 1
    bytes = bytes + tonumber(string.sub(m, #me + 1))
  end
end
local size, ttl = tonumber(ARGV[2]), tonumber(ARGV[3])
if count + 1 > tonumber(ARGV[4]) or bytes + size > tonumber(ARGV[5]) then
  return 0
end
redis.call('ZADD', KEYS[1], now + ttl, me .. ARGV[2])
if redis.call('PTTL', KEYS[1]) < ttl then
  redis.call('PEXPIRE', KEYS[1], ttl)
end
return 1
`

// releaseScript removes item's member from the budget. ARGV: item.
const releaseScript = `
local me = ARGV[1] .. '|'
for _, m in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  if string.sub(m, 1, #me) == me then
    redis.call('ZREM', KEYS[1], m)
  end
end
return 1
`

// holdMember is an item's name in a Redis budget: its hash, base64url, so every member has
// the same length.
func holdMember(item string) string {
	sum := itemSum(item)
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// Hold implements Store with one Lua script.
func (r *Redis) Hold(ctx context.Context, key, item string, size int64, ttl time.Duration, b Budget) (bool, error) {
	if err := checkHold(size, ttl, b); err != nil {
		return false, err
	}
	var now int64
	if r.now != nil {
		now = r.now().UnixMilli()
	}
	probe, err := r.admit()
	if err != nil {
		return false, err
	}
	n, err := r.hold.Run(ctx, r.client, []string{redisKey(r.prefix, kindHold, key)}, holdMember(item),
		strconv.FormatInt(size, 10), ceilMillis(ttl).Milliseconds(), b.Count, b.Bytes, now).Int64()
	if err = r.done(probe, err); err != nil {
		return false, err
	}
	return n == 1, nil
}

// Release implements Store with one Lua script.
func (r *Redis) Release(ctx context.Context, key, item string) error {
	probe, err := r.admit()
	if err != nil {
		return err
	}
	return r.done(probe, r.release.Run(ctx, r.client, []string{redisKey(r.prefix, kindHold, key)}, holdMember(item)).Err())
}

// Delete implements Store.
func (r *Redis) Delete(ctx context.Context, key string) error {
	probe, err := r.admit()
	if err != nil {
		return err
	}
	return r.done(probe, r.client.Del(ctx, redisKey(r.prefix, kindValue, key)).Err())
}
