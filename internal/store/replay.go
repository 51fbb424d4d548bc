package store

import (
	"context"
	"encoding/base64"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Use is the answer of Replay.FirstUse.
type Use int

const (
	// UseFirst: the id was not used within its lifetime; it is recorded now.
	UseFirst Use = iota + 1
	// UseAgain: the id was used before and its record is live: a replay.
	UseAgain
	// UseOverBudget: the owner has recorded its budget of ids in the current window; nothing
	// is recorded.
	UseOverBudget
)

// ReplayBudget bounds the ids one owner records (Replay.FirstUse).
type ReplayBudget struct {
	// Count is the most first uses an owner records per Window; at least 1.
	Count int
	// Window is the length of the fixed window Count applies to, started by the owner's first
	// use. With ids that live at most Window, an owner holds at most 2×Count live ids.
	Window time.Duration
}

// Replay refuses a second use of an id within its lifetime, atomically across replicas when
// shared, and bounds how many ids one owner (a caller) can make the store keep, so that no
// client can fill it. DPoP proofs' jti are its ids (RFC 9449 §11.1). Memory and Redis implement
// it.
type Replay interface {
	// FirstUse records owner's id for ttl unless it is recorded already (UseAgain) or owner has
	// used up b (UseOverBudget). A replay costs the owner nothing from b. Errors wrap
	// ErrUnavailable; the caller fails closed.
	FirstUse(ctx context.Context, owner, id string, ttl time.Duration, b ReplayBudget) (Use, error)
	// BudgetReset is how long until owner's budget window ends and its count starts again:
	// when an owner refused with UseOverBudget can record ids again; 0 when it has no window
	// open. Errors wrap ErrUnavailable.
	BudgetReset(ctx context.Context, owner string) (time.Duration, error)
}

// ReplayGetter is a Replay that also reads a value in the same round trip (memory and Redis
// implement it).
type ReplayGetter interface {
	Replay
	// FirstUseGet is FirstUse, then Get of key (a Store key) on the same store, in one round
	// trip where the store allows it: a caller that checks each first use against a marker
	// the store keeps (when its memory began) reads both at the cost of one. The value is read
	// after the id is recorded. Errors as FirstUse's.
	FirstUseGet(ctx context.Context, owner, id string, ttl time.Duration, b ReplayBudget, key string) (u Use, value []byte, found bool, err error)
}

var (
	_ ReplayGetter = (*Memory)(nil)
	_ ReplayGetter = (*Redis)(nil)
)

func checkReplay(ttl time.Duration, b ReplayBudget) error {
	if ttl <= 0 || b.Window <= 0 {
		return ErrInvalidTTL
	}
	if b.Count < 1 {
		return fmt.Errorf("%w: replay budget %+v", ErrInvalidBudget, b)
	}
	return nil
}

// replayIDKey is the memory key of owner's id; replayOwnerKey that of owner's counter.
func replayIDKey(owner, id string) memKey {
	return memKey{kind: kindReplay, sum: digest(owner + "\x00" + id)}
}

func replayOwnerKey(owner string) memKey { return memKey{kind: kindReplayOwner, sum: digest(owner)} }

// FirstUse implements Replay. The id is recorded first and taken back when the owner is over its
// budget, as the Redis script does, so that a replay never counts.
func (m *Memory) FirstUse(_ context.Context, owner, id string, ttl time.Duration, b ReplayBudget) (Use, error) {
	if err := checkReplay(ttl, b); err != nil {
		return 0, err
	}
	k := replayIDKey(owner, id)
	fresh, err := m.recordID(k, ttl)
	if err != nil {
		return 0, err
	}
	if !fresh {
		return UseAgain, nil
	}
	ok, err := m.countOwner(replayOwnerKey(owner), b)
	if err == nil && ok {
		return UseFirst, nil
	}
	if sh, _, lerr := m.lock(k); lerr == nil {
		sh.del(k)
		sh.mu.Unlock()
	}
	if err != nil {
		return 0, err
	}
	return UseOverBudget, nil
}

// FirstUseGet implements ReplayGetter: in one process there is no round trip to save.
func (m *Memory) FirstUseGet(ctx context.Context, owner, id string, ttl time.Duration, b ReplayBudget, key string) (Use, []byte, bool, error) {
	u, err := m.FirstUse(ctx, owner, id, ttl, b)
	if err != nil {
		return 0, nil, false, err
	}
	v, ok, err := m.Get(ctx, key)
	return u, v, ok, err
}

// BudgetReset implements Replay: what is left of the owner's counter entry.
func (m *Memory) BudgetReset(_ context.Context, owner string) (time.Duration, error) {
	k := replayOwnerKey(owner)
	sh, now, err := m.lock(k)
	if err != nil {
		return 0, err
	}
	defer sh.mu.Unlock()
	e, ok := sh.entries[k]
	if !ok || e.expires <= now {
		return 0, nil
	}
	return time.Duration(e.expires-now) * time.Microsecond, nil
}

func (m *Memory) recordID(k memKey, ttl time.Duration) (bool, error) {
	sh, now, err := m.lock(k)
	if err != nil {
		return false, err
	}
	defer sh.mu.Unlock()
	if e, ok := sh.entries[k]; ok && e.expires > now {
		return false, nil
	}
	return true, m.put(sh, k, memEntry{expires: now + micros(ttl)}, now)
}

// countOwner adds one to the owner's count in its window (the entry's tat), false when that
// would pass b.Count.
func (m *Memory) countOwner(k memKey, b ReplayBudget) (bool, error) {
	sh, now, err := m.lock(k)
	if err != nil {
		return false, err
	}
	defer sh.mu.Unlock()
	e, ok := sh.entries[k]
	if !ok || e.expires <= now {
		e = memEntry{expires: now + micros(b.Window)}
	}
	if e.tat >= int64(b.Count) {
		return false, nil
	}
	e.tat++
	return true, m.put(sh, k, e, now)
}

// replayScript is FirstUse next to the keys: KEYS[1] the id, KEYS[2] the owner's counter (one
// hash slot, see replayKeys). ARGV: ttl (ms), window (ms), count, the call's token (Redis.token).
// Returns 1 first use, 0 a replay, 2 over budget. An id holding this call's own token was
// recorded by this call's earlier attempt (see Redis.token): a first use, not a replay.
const replayScript = `
if not redis.call('SET', KEYS[1], ARGV[4], 'NX', 'PX', ARGV[1]) then
  if redis.call('GET', KEYS[1]) == ARGV[4] then
    return 1
  end
  return 0
end
local n = redis.call('INCR', KEYS[2])
if n == 1 then
  redis.call('PEXPIRE', KEYS[2], ARGV[2])
end
if n > tonumber(ARGV[3]) then
  redis.call('DEL', KEYS[1])
  return 2
end
return 1
`

// replayGetScript is replayScript followed by a GET of KEYS[3], for FirstUseGet: it returns
// {result, value or false}.
const replayGetScript = `
local function record()
` + replayScript + `
end
return {record(), redis.call('GET', KEYS[3])}
`

// replayKeys are the Redis keys of owner's id and counter. The owner's digest is their hash tag,
// so a Cluster keeps both in one slot, as a script needs.
func replayKeys(prefix, owner, id string) []string {
	i := digest(owner + "\x00" + id)
	tag := replayOwnerTag(prefix, owner)
	return []string{tag + ":" + base64.RawURLEncoding.EncodeToString(i[:]), tag}
}

// BudgetFrees is how long until owner's replay budget frees, for a refusal's Retry-After: what
// r.BudgetReset says, asked only on the refused path, or a whole window when the store cannot
// say, after which the budget is certainly free.
func BudgetFrees(ctx context.Context, r interface {
	BudgetReset(ctx context.Context, owner string) (time.Duration, error)
}, owner string, window time.Duration) time.Duration {
	left, err := r.BudgetReset(ctx, owner)
	if err != nil {
		return window
	}
	return left
}

// replayOwnerTag is the Redis key of owner's counter, the hash tag of its ids' keys.
func replayOwnerTag(prefix, owner string) string {
	o := digest(owner)
	return prefix + kindReplay.redisTag() + "{" + base64.RawURLEncoding.EncodeToString(o[:]) + "}"
}

// BudgetReset implements Replay: the time to live of the owner's counter (the script sets it
// with the window's first use).
func (r *Redis) BudgetReset(ctx context.Context, owner string) (time.Duration, error) {
	probe, err := r.admit()
	if err != nil {
		return 0, err
	}
	d, err := r.client.PTTL(ctx, replayOwnerTag(r.prefix, owner)).Result()
	if err = r.done(probe, err); err != nil {
		return 0, err
	}
	return max(d, 0), nil // -1 and -2 (no expiry, no key): no window open
}

// FirstUse implements Replay with one Lua script; with RedisConfig.WaitReplicas a first use
// counts only once enough replicas acknowledged it, as for UseOnce.
func (r *Redis) FirstUse(ctx context.Context, owner, id string, ttl time.Duration, b ReplayBudget) (Use, error) {
	if err := checkReplay(ttl, b); err != nil {
		return 0, err
	}
	probe, err := r.admit()
	if err != nil {
		return 0, err
	}
	tok := r.token()
	return r.recordUse(ctx, probe, r.replay, replayKeys(r.prefix, owner, id), replayArgs(ttl, b, tok), tok)
}

// FirstUseGet implements ReplayGetter. On one Redis server or a Sentinel-managed one it is one script,
// one round trip. In a Cluster the value's key lies in another hash slot than the id's, which
// one script cannot reach, and with RedisConfig.WaitReplicas the first use must be acknowledged
// on its own: there it is FirstUse, then Get.
func (r *Redis) FirstUseGet(ctx context.Context, owner, id string, ttl time.Duration, b ReplayBudget, key string) (Use, []byte, bool, error) {
	if _, cluster := r.client.(*redis.ClusterClient); cluster || r.waitReplicas > 0 {
		u, err := r.FirstUse(ctx, owner, id, ttl, b)
		if err != nil {
			return 0, nil, false, err
		}
		v, ok, err := r.Get(ctx, key)
		return u, v, ok, err
	}
	if err := checkReplay(ttl, b); err != nil {
		return 0, nil, false, err
	}
	probe, err := r.admit()
	if err != nil {
		return 0, nil, false, err
	}
	keys := append(replayKeys(r.prefix, owner, id), redisKey(r.prefix, kindValue, key))
	vals, err := r.replayGet.Run(ctx, r.client, keys, replayArgs(ttl, b, r.token())...).Slice()
	if err = r.done(probe, err); err != nil {
		return 0, nil, false, err
	}
	if len(vals) != 2 {
		return 0, nil, false, fmt.Errorf("%w: replay script returned %v", ErrUnavailable, vals)
	}
	n, ok := vals[0].(int64)
	if !ok {
		return 0, nil, false, fmt.Errorf("%w: replay script returned %v", ErrUnavailable, vals)
	}
	// A nil reply (false in Lua) arrives as nil: the key is missing.
	v, found := vals[1].(string)
	return replayUse(n), []byte(v), found, nil
}

// replayArgs are the ARGV of replayScript and the scripts built on it.
func replayArgs(ttl time.Duration, b ReplayBudget, token string) []any {
	return []any{ceilMillis(ttl).Milliseconds(), ceilMillis(b.Window).Milliseconds(), b.Count, token}
}

func replayUse(n int64) Use {
	switch n {
	case 1:
		return UseFirst
	case 2:
		return UseOverBudget
	}
	return UseAgain
}

// recordUse runs script, replayScript or one built on it, on keys with args, whose token is
// tok; probe is admit's. With RedisConfig.WaitReplicas the script is followed by WAIT on the
// keys' primary, in one pipeline, and a first use fewer replicas than configured hold is taken
// back (every key the script set but the owner's counter, keys[1], while it holds tok) and
// refused (fail closed).
func (r *Redis) recordUse(ctx context.Context, probe bool, script *redis.Script, keys []string, args []any, tok string) (Use, error) {
	if r.waitReplicas <= 0 {
		n, err := script.Run(ctx, r.client, keys, args...).Int64()
		if err = r.done(probe, err); err != nil {
			return 0, err
		}
		return replayUse(n), nil
	}
	var c redis.Cmdable = r.client
	if cc, ok := r.client.(*redis.ClusterClient); ok {
		node, err := cc.MasterForKey(ctx, keys[0])
		if err != nil {
			return 0, r.done(probe, err)
		}
		c = node
	}
	var run *redis.Cmd
	var wait *redis.Cmd
	_, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		run = script.Eval(ctx, p, keys, args...)
		wait = p.Do(ctx, "wait", r.waitReplicas, r.waitTimeout.Milliseconds())
		return nil
	})
	if err = r.done(probe, err); err != nil {
		return 0, err
	}
	n, err := run.Int64()
	if err != nil {
		return 0, r.wrap(err)
	}
	if u := replayUse(n); u != UseFirst {
		return u, nil
	}
	acked, err := wait.Int64()
	if err == nil && acked >= int64(r.waitReplicas) {
		return UseFirst, nil
	}
	takeBack(ctx, c, tok, append([]string{keys[0]}, keys[2:]...)...)
	if err != nil {
		return 0, r.wrap(err)
	}
	return 0, fmt.Errorf("%w: %w: %d of %d replicas within %v", ErrUnavailable, ErrNotReplicated, acked, r.waitReplicas, r.waitTimeout)
}
