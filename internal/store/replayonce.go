package store

import (
	"context"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"
)

// ReplayOnce is a Replay that also claims a single-use key (Store.UseOnce's) in the same step.
// Memory and Redis implement it.
type ReplayOnce interface {
	Replay
	// FirstUseOnce is FirstUse of owner's id together with UseOnce of once, as one atomic
	// step: both are recorded, or neither is. UseAgain when either was recorded before;
	// UseOverBudget (nothing recorded) as FirstUse. A store failing during the step leaves
	// neither, so the caller's retry is not refused as a replay of a use that never was. In
	// a Redis Cluster the two keys lie in different hash slots, which no script reaches at
	// once: there it is FirstUse, then UseOnce, and a failure between the two leaves the id
	// recorded so that a later claim of the same id and once goes on to the single-use key,
	// which decides (Redis's onceToken).
	FirstUseOnce(ctx context.Context, owner, id, once string, ttl time.Duration, b ReplayBudget) (Use, error)
}

var (
	_ ReplayOnce = (*Memory)(nil)
	_ ReplayOnce = (*Redis)(nil)
)

// FirstUseOnce implements ReplayOnce under the locks of every shard the keys live in, taken in
// shard order.
func (m *Memory) FirstUseOnce(_ context.Context, owner, id, once string, ttl time.Duration, b ReplayBudget) (Use, error) {
	if err := checkReplay(ttl, b); err != nil {
		return 0, err
	}
	idKey, ownerKey := replayIDKey(owner, id), replayOwnerKey(owner)
	onceKey := memKey{kind: kindOnce, sum: digest(once)}
	shards, now, err := m.lockAll(idKey, ownerKey, onceKey)
	if err != nil {
		return 0, err
	}
	defer func() {
		for _, sh := range shards {
			sh.mu.Unlock()
		}
	}()
	shardOf := func(k memKey) *shard { return &m.shards[m.shardIndex(k)] }
	live := func(k memKey) (memEntry, bool) {
		e, ok := shardOf(k).entries[k]
		return e, ok && e.expires > now
	}
	if _, used := live(onceKey); used {
		return UseAgain, nil
	}
	if _, used := live(idKey); used {
		return UseAgain, nil
	}
	count, open := live(ownerKey)
	if !open {
		count = memEntry{expires: now + micros(b.Window)}
	}
	if count.tat >= int64(b.Count) {
		return UseOverBudget, nil
	}
	count.tat++
	record := memEntry{expires: now + micros(ttl)}
	if err := m.put(shardOf(idKey), idKey, record, now); err != nil {
		return 0, err
	}
	if err := m.put(shardOf(onceKey), onceKey, record, now); err != nil {
		shardOf(idKey).del(idKey)
		return 0, err
	}
	if err := m.put(shardOf(ownerKey), ownerKey, count, now); err != nil {
		shardOf(idKey).del(idKey)
		shardOf(onceKey).del(onceKey)
		return 0, err
	}
	return UseFirst, nil
}

// lockAll locks the shards of keys, each once, in shard order (so that two callers never wait
// for each other), and returns them with the current time in Unix microseconds.
func (m *Memory) lockAll(keys ...memKey) ([]*shard, int64, error) {
	if m.closed.Load() {
		return nil, 0, errClosed()
	}
	idx := make([]uint64, 0, len(keys))
	for _, k := range keys {
		idx = append(idx, m.shardIndex(k))
	}
	slices.Sort(idx)
	idx = slices.Compact(idx)
	shards := make([]*shard, 0, len(idx))
	for _, i := range idx {
		sh := &m.shards[i]
		sh.mu.Lock()
		shards = append(shards, sh)
	}
	return shards, m.now().UnixMicro(), nil
}

// cluster is whether r talks to a Redis Cluster.
func (r *Redis) cluster() bool {
	_, ok := r.client.(*redis.ClusterClient)
	return ok
}

// replayOnceScript is replayScript that also claims KEYS[3], a single-use key (UseOnce's), in
// the same script: both are set or neither. ARGV as replayScript's; both keys hold the call's
// token, and a single-use key holding it was claimed by this call's earlier attempt.
const replayOnceScript = `
local function record()
` + replayScript + `
end
local held = redis.call('GET', KEYS[3])
if held then
  if held == ARGV[4] then
    return 1
  end
  return 0
end
local n = record()
if n == 1 then
  redis.call('SET', KEYS[3], ARGV[4], 'PX', ARGV[1])
end
return n
`

// FirstUseOnce implements ReplayOnce with one Lua script. With RedisConfig.WaitReplicas the
// use counts only once enough replicas acknowledged it, and both keys are taken back when they
// did not. In a Cluster it is FirstUse, then UseOnce (see ReplayOnce), and the single-use key
// decides (see onceToken).
func (r *Redis) FirstUseOnce(ctx context.Context, owner, id, once string, ttl time.Duration, b ReplayBudget) (Use, error) {
	if err := checkReplay(ttl, b); err != nil {
		return 0, err
	}
	probe, err := r.admit()
	if err != nil {
		return 0, err
	}
	if !r.cluster() {
		keys := append(replayKeys(r.prefix, owner, id), redisKey(r.prefix, kindOnce, once))
		tok := r.token()
		return r.recordUse(ctx, probe, r.replayOnce, keys, replayArgs(ttl, b, tok), tok)
	}
	tok := onceToken(once)
	u, err := r.recordUse(ctx, probe, r.replay, replayKeys(r.prefix, owner, id), replayArgs(ttl, b, tok), tok)
	if err != nil || u != UseFirst {
		return u, err
	}
	first, err := r.UseOnce(ctx, once, ttl)
	switch {
	case err != nil:
		return 0, err
	case !first:
		return UseAgain, nil
	}
	return UseFirst, nil
}

// onceToken is what a Cluster's FirstUseOnce records under the id: the same for every attempt
// to consume once, where other writes record a token of their own call (Redis.token). A Cluster
// keeps the id and the single-use key in different hash slots and writes them one after the
// other; a store failing between the two left the id recorded and the key not, and the retry
// the failure invited (503, Retry-After) was refused as a replay of a use that never was. An
// attempt that finds the id holding once's token follows one that recorded it and then failed,
// or races one: both go on to the single-use key, which exactly one of them claims. An id
// recorded for another once, or by a replica of the previous release (a call's own token),
// is still a replay. The ":" keeps it apart from every call's token (rand.Text and base 36).
func onceToken(once string) string { return "once:" + b64Digest(once) }
