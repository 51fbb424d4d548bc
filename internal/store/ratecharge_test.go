package store

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
)

// chargeLimit is the limit of the charge tests: one token a minute, so that nothing refills
// while they run, and a burst of 10. chargeInterval is its interval in µs.
var chargeLimit = Limit{Rate: 60, Period: time.Hour, Burst: 10}

const chargeInterval = int64(time.Minute / time.Microsecond)

// charges reads how many tokens key's bucket holds charged at now: its theoretical arrival
// time, read as replicas of every release read it (a decimal integer of µs), less now.
func charges(t *testing.T, c redis.Cmdable, prefix, key string, now time.Time) int64 {
	t.Helper()
	raw, err := c.Get(context.Background(), redisKey(prefix, kindRate, key)).Result()
	if err != nil {
		t.Fatalf("reading the bucket: %v", err)
	}
	tat, err := strconv.ParseInt(raw, 10, 64)
	if err != nil {
		t.Fatalf("the bucket holds %q, not the decimal integer every release reads", raw)
	}
	return (tat - now.UnixMicro()) / chargeInterval
}

// TestRateChargeSurvivesARetriedStall: a rate-limit charge whose answer times out is sent
// again by the client, and a Redis that stalled runs both copies once it wakes. The bucket must
// be charged once, and the answer be the one charge's: before the fix, Allow took two tokens
// (a call could be refused that the limit allowed), a lease twice its tokens, and a lease's
// refund was given back twice (admitting more than the limit). A charge after the stall is a
// charge of its own again.
func TestRateChargeSurvivesARetriedStall(t *testing.T) {
	srv := testredis.Start(t)
	now := time.Now()
	r := newRedisStore(t, RedisConfig{URL: srv.URL(), PoolSize: 1, MaxRetries: 1,
		ReadTimeout: 300 * time.Millisecond, WriteTimeout: 300 * time.Millisecond,
		Breaker: RedisBreaker{Failures: -1}}, WithClock(func() time.Time { return now }))
	stall := &stallOnce{srv: srv}
	r.client.AddHook(stall)
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		script *redis.Script
		before int // tokens the bucket holds charged before the stalled call
		// do is the stalled call; it returns the tokens it was granted and the decision.
		do            func(key string) (int, RateDecision, error)
		granted, want int // the stalled call's grant, and the charges after it
	}{
		{"Allow", r.gcra, 0, func(key string) (int, RateDecision, error) {
			d, err := r.Allow(ctx, key, chargeLimit)
			return map[bool]int{true: 1}[d.Allowed], d, err
		}, 1, 1},
		{"Lease", r.lease, 0, func(key string) (int, RateDecision, error) {
			return r.Lease(ctx, key, chargeLimit, 3, 0)
		}, 3, 3},
		{"LeaseRefund", r.lease, 4, func(key string) (int, RateDecision, error) {
			return r.Lease(ctx, key, chargeLimit, 1, 2) // 4 - 2 + 1
		}, 1, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, key := range []string{"warm-" + tc.name, "stalled-" + tc.name} {
				if tc.before > 0 {
					if n, _, err := r.Lease(ctx, key, chargeLimit, tc.before, 0); err != nil || n != tc.before {
						t.Fatalf("charging %d first: %d %v", tc.before, n, err)
					}
				}
			}
			// Warm: the script is in Redis's cache, so the stalled command is the charge.
			if _, _, err := tc.do("warm-" + tc.name); err != nil {
				t.Fatalf("warm-up: %v", err)
			}
			key := "stalled-" + tc.name
			stalled := stall.arm(runs(tc.script))
			granted, d, err := tc.do(key)
			if !stalled() {
				t.Fatalf("Redis was not stalled and resumed by a retry (err %v)", err)
			}
			if err != nil {
				t.Fatalf("the retry after the stall failed: %v", err)
			}
			if n := charges(t, r.client, r.prefix, key, now); n != int64(tc.want) {
				t.Errorf("the bucket holds %d charges after a call retried by the client, want %d", n, tc.want)
			}
			if granted != tc.granted || d.Remaining != chargeLimit.Burst-tc.want {
				t.Errorf("answered %d granted, %d remaining; want the one charge's %d and %d",
					granted, d.Remaining, tc.granted, chargeLimit.Burst-tc.want)
			}
			if _, err := r.Allow(ctx, key, chargeLimit); err != nil {
				t.Fatal(err)
			}
			if n := charges(t, r.client, r.prefix, key, now); n != int64(tc.want+1) {
				t.Errorf("a call after the stall left %d charges, want %d: each call is a charge of its own", n, tc.want+1)
			}
		})
	}
}

// previousGCRAScript and previousLeaseScript are the rate-limit scripts of the previous
// release, as its replicas run them during a rolling update: one key, the bucket.
const previousGCRAScript = `
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
if now <= 0 then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local tat = tonumber(redis.call('GET', KEYS[1])) or 0
if tat < now then tat = now end
local newtat = tat + interval
local allowat = newtat - burst * interval
if now < allowat then
  return {0, 0, allowat - now, tat - now}
end
redis.call('SET', KEYS[1], string.format('%d', newtat), 'PX', math.ceil((newtat - now) / 1000))
return {1, math.floor((now - allowat) / interval), 0, newtat - now}
`

const previousLeaseScript = `
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local want = tonumber(ARGV[4])
local refund = tonumber(ARGV[5])
if now <= 0 then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local tat = tonumber(redis.call('GET', KEYS[1])) or 0
if refund > 0 then tat = tat - refund * interval end
if tat < now then tat = now end
local debt = tat - now
local owed = (debt - debt % interval) / interval
if debt % interval > 0 then owed = owed + 1 end
local avail = burst - owed
if avail < 1 then
  if refund > 0 then
    redis.call('SET', KEYS[1], string.format('%d', tat), 'PX', math.max(1, math.ceil((tat - now) / 1000)))
  end
  return {0, 0, tat + interval - burst * interval - now, tat - now}
end
local granted = want
if avail < granted then granted = avail end
local newtat = tat + granted * interval
redis.call('SET', KEYS[1], string.format('%d', newtat), 'PX', math.ceil((newtat - now) / 1000))
return {granted, avail - granted, 0, newtat - now}
`

// TestRateBucketSharedWithPreviousRelease: during a rolling update replicas of the previous
// release charge the same buckets with their own scripts. Old and new charges, interleaved on
// one bucket, each see all the others: every answer counts every token taken before it, by
// either, and the bucket is spent for both at the same point.
func TestRateBucketSharedWithPreviousRelease(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	srv := testredis.Start(t)
	r := newRedisStore(t, RedisConfig{URL: srv.URL()}, WithClock(func() time.Time { return now }))
	oldGCRA, oldLease := redis.NewScript(previousGCRAScript), redis.NewScript(previousLeaseScript)
	g, err := newGCRA(chargeLimit)
	if err != nil {
		t.Fatal(err)
	}
	const key = "shared"
	bucket := []string{redisKey(r.prefix, kindRate, key)}
	oldAllow := func() (int, int, error) {
		v, err := oldGCRA.Run(ctx, r.client, bucket, g.interval, g.burst, now.UnixMicro()).Int64Slice()
		if err != nil {
			return 0, 0, err
		}
		return int(v[0]), int(v[1]), nil
	}
	oldLeaseOf := func(want, refund int) func() (int, int, error) {
		return func() (int, int, error) {
			v, err := oldLease.Run(ctx, r.client, bucket, g.interval, g.burst, now.UnixMicro(), want, refund).Int64Slice()
			if err != nil {
				return 0, 0, err
			}
			return int(v[0]), int(v[1]), nil
		}
	}
	newAllow := func() (int, int, error) {
		d, err := r.Allow(ctx, key, chargeLimit)
		return map[bool]int{true: 1}[d.Allowed], d.Remaining, err
	}
	newLease := func(want, refund int) func() (int, int, error) {
		return func() (int, int, error) {
			n, d, err := r.Lease(ctx, key, chargeLimit, want, refund)
			return n, d.Remaining, err
		}
	}
	for i, step := range []struct {
		name               string
		do                 func() (int, int, error)
		granted, remaining int
	}{
		{"new Allow", newAllow, 1, 9},
		{"old Allow", oldAllow, 1, 8},
		{"new Lease of 3", newLease(3, 0), 3, 5},
		{"old Lease of 2", oldLeaseOf(2, 0), 2, 3},
		{"new Lease of 1 giving 2 back", newLease(1, 2), 1, 4},
		{"old Lease of 1 giving 1 back", oldLeaseOf(1, 1), 1, 4},
		{"old Lease of 4", oldLeaseOf(4, 0), 4, 0},
		{"new Allow on a spent bucket", newAllow, 0, 0},
		{"old Allow on a spent bucket", oldAllow, 0, 0},
		{"new Lease on a spent bucket", newLease(1, 0), 0, 0},
	} {
		granted, remaining, err := step.do()
		if err != nil || granted != step.granted || remaining != step.remaining {
			t.Errorf("step %d, %s: granted %d, remaining %d, err %v; want %d and %d",
				i, step.name, granted, remaining, err, step.granted, step.remaining)
		}
	}
	if n := charges(t, r.client, r.prefix, key, now); n != int64(chargeLimit.Burst) {
		t.Errorf("the bucket holds %d charges, want %d", n, chargeLimit.Burst)
	}

}

// TestChargeKeyInTheBucketsSlot: a charge's marker lies in its bucket's hash slot, as a Redis
// Cluster computes it (CLUSTER KEYSLOT), and under the key prefix, for prefixes with and
// without hash tags; a prefix with an unmatched brace leaves none in a Cluster, and the charge
// goes unmarked rather than failing. A Cluster runs the new scripts under such prefixes.
func TestChargeKeyInTheBucketsSlot(t *testing.T) {
	ctx := context.Background()
	cluster := testredis.Start(t, testredis.WithCluster())
	c := redis.NewClient(&redis.Options{Addr: cluster.Addr(), DisableIdentity: true})
	t.Cleanup(func() { _ = c.Close() })
	slot := func(key string) int64 {
		n, err := c.ClusterKeySlot(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, tc := range []struct {
		prefix string
		marked bool
	}{
		{"mcpgw:", true}, {"{gw}:", true}, {"gw{x}y:", true}, {"{a}{b}:", true},
		{"a{}b:", false}, {"a}b:", false}, {"a{b:", false}, {"}{:", false},
	} {
		bucket := redisKey(tc.prefix, kindRate, "caller")
		mark, ok := chargeKey(tc.prefix, bucket, "tok", true)
		if ok != tc.marked {
			t.Errorf("prefix %q: marked %v, want %v", tc.prefix, ok, tc.marked)
		}
		if !ok {
			continue
		}
		if !strings.HasPrefix(mark, tc.prefix) {
			t.Errorf("prefix %q: the marker %q lies outside the prefix", tc.prefix, mark)
		}
		if slot(mark) != slot(bucket) {
			t.Errorf("prefix %q: the marker %q lies in slot %d, its bucket %q in %d", tc.prefix, mark, slot(mark), bucket, slot(bucket))
		}
	}
	if _, ok := chargeKey("a{b:", redisKey("a{b:", kindRate, "caller"), "tok", false); !ok {
		t.Errorf("outside a Cluster any key serves as a marker")
	}

	for _, prefix := range []string{"", "{gw}:", "gw{x}y:", "a{b:"} {
		c := newRedisStore(t, RedisConfig{Addrs: []string{cluster.Addr()}, Cluster: true, KeyPrefix: prefix})
		if c.charges.ttl <= 0 {
			t.Fatalf("a Cluster client that resends marks no charges")
		}
		if d, err := c.Allow(ctx, "k", chargeLimit); err != nil || !d.Allowed {
			t.Errorf("Allow in a Cluster, key prefix %q: %+v %v", prefix, d, err)
		}
		if n, _, err := c.Lease(ctx, "k", chargeLimit, 2, 0); err != nil || n != 2 {
			t.Errorf("Lease in a Cluster, key prefix %q: %d %v", prefix, n, err)
		}
	}
}

// TestChargeWindow: a marker lives as long as docs/scaling.md says, for the client's own
// bounds: 8 s with the default settings, 36 s under Cluster (whose client tries each command
// again on its own), and none at all, with no marker written, when nothing is ever resent.
func TestChargeWindow(t *testing.T) {
	srv := testredis.Start(t)
	for _, tc := range []struct {
		name string
		cfg  RedisConfig
		want time.Duration
	}{
		{"defaults", RedisConfig{URL: srv.URL()}, 8 * time.Second},
		{"cluster", RedisConfig{Addrs: []string{srv.Addr()}, Cluster: true}, 36 * time.Second},
		{"cluster without retries", RedisConfig{Addrs: []string{srv.Addr()}, Cluster: true, MaxRetries: -1}, 16 * time.Second},
		{"no retries", RedisConfig{URL: srv.URL(), MaxRetries: -1}, 0},
	} {
		r := newRedisStore(t, tc.cfg)
		if r.charges.ttl != tc.want {
			t.Errorf("%s: markers live %v, want %v", tc.name, r.charges.ttl, tc.want)
		}
	}
	r := newRedisStore(t, RedisConfig{URL: srv.URL(), MaxRetries: -1, KeyPrefix: "none:"})
	if _, err := r.Allow(context.Background(), "k", chargeLimit); err != nil {
		t.Fatal(err)
	}
	keys, err := rawClient(t, srv).Keys(context.Background(), "none:*").Result()
	if err != nil || len(keys) != 1 {
		t.Errorf("a charge of a client that never resends left %q (%v), want only its bucket", keys, err)
	}
}
