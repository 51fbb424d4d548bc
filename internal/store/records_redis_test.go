package store

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
)

// TestRedisRecordsLeaveRedis: what Records writes to Redis goes by itself. An owner's hash
// expires at the latest idle deadline it holds (a caller who never comes back leaves no key),
// a read that moves a deadline moves the hash's expiry, and a name's index drops the entries
// whose deadline passed when it is counted, and the marks of its puts those past their absolute
// deadline: neither can grow with callers long gone.
func TestRedisRecordsLeaveRedis(t *testing.T) {
	srv := testredis.Start(t)
	r := newRedisStore(t, RedisConfig{URL: srv.URL(), KeyPrefix: "x:"})
	raw := rawClient(t, srv)
	ctx := context.Background()
	now := time.Now()
	life := RecordLife{Now: now, Idle: time.Hour, Absolute: 3 * time.Hour}
	b := Budget{Count: 2, Bytes: 64}
	for i := range 50 {
		if ok, err := r.PutRecord(ctx, fmt.Sprint("o", i), "n", []byte("v"), b, life); err != nil || !ok {
			t.Fatal(ok, err)
		}
	}
	hash := redisRecords{r}.ownerKey("o0")
	z := redisRecords{r}.nameKey("n")
	at, err := raw.Do(ctx, "PEXPIRETIME", hash).Int64()
	if err != nil || at != now.Add(time.Hour).UnixMilli() {
		t.Errorf("the owner's hash expires at %d (%v), want its record's idle deadline %d", at, err, now.Add(time.Hour).UnixMilli())
	}
	// A read 50 minutes later gains more than the slack: the deadline and the expiry move.
	life.Now = now.Add(50 * time.Minute)
	if _, ok, err := r.GetRecord(ctx, "o0", "n", life); err != nil || !ok {
		t.Fatal(ok, err)
	}
	if at, _ := raw.Do(ctx, "PEXPIRETIME", hash).Int64(); at != life.Now.Add(time.Hour).UnixMilli() {
		t.Errorf("after a read the hash expires at %d, want %d", at, life.Now.Add(time.Hour).UnixMilli())
	}
	if s, _ := raw.ZScore(ctx, z, "o0").Result(); int64(s) != life.Now.Add(time.Hour).UnixMilli() {
		t.Errorf("after a read the index scores o0 at %d, want %d", int64(s), life.Now.Add(time.Hour).UnixMilli())
	}
	// Two hours on, only o0's read kept it: the count prunes the other 49 entries.
	life.Now = now.Add(105 * time.Minute)
	if n, err := r.CountRecords(ctx, "n", life); err != nil || n != 1 {
		t.Errorf("CountRecords = %d %v, want 1", n, err)
	}
	if n, _ := raw.ZCard(ctx, z).Result(); n != 1 {
		t.Errorf("the index holds %d entries, want 1 (the others pruned)", n)
	}
	if ttl, _ := raw.PTTL(ctx, redisRecords{r}.ownerKey("o1")).Result(); ttl <= 0 || ttl > time.Hour {
		t.Errorf("an unused owner's hash has PTTL %s, want at most Idle", ttl)
	}
	// The puts' marks beside the index go when no record they mark can live: past Absolute.
	marks := redisRecords{r}.marksKey("n")
	if n, _ := raw.HLen(ctx, marks).Result(); n != 50 {
		t.Errorf("the index's marks hold %d entries before Absolute, want 50", n)
	}
	life.Now = now.Add(3*time.Hour + time.Minute)
	if n, err := r.CountRecords(ctx, "n", life); err != nil || n != 0 {
		t.Errorf("CountRecords past Absolute = %d %v, want 0", n, err)
	}
	if n, _ := raw.HLen(ctx, marks).Result(); n != 0 {
		t.Errorf("the index's marks hold %d entries past Absolute, want none", n)
	}
}

// TestRedisRecordsUpgrade: the records of the previous release's layout (every key in slot
// {rec}: a hash per owner holding only its records, a plain set of owners per name) are all
// still there after the upgrade, moved to the per-owner layout when met (a read, a listing of
// the owner) or counted; each gets its deadlines, starting then, and expires like any other,
// those nobody reads again included.
func TestRedisRecordsUpgrade(t *testing.T) {
	t.Parallel() // its own redis-server; it waits on expiries and timeouts, not on a core
	t.Run("single", func(t *testing.T) {
		srv := testredis.Start(t)
		testRecordsUpgrade(t, srv, newRedisStore(t, RedisConfig{URL: srv.URL(), KeyPrefix: "u:"}))
	})
	t.Run("cluster", func(t *testing.T) {
		srv := testredis.Start(t, testredis.WithCluster())
		testRecordsUpgrade(t, srv, newRedisStore(t, RedisConfig{Addrs: []string{srv.Addr()}, Cluster: true, KeyPrefix: "u:"}))
	})
}

func testRecordsUpgrade(t *testing.T, srv *testredis.Server, r *Redis) {
	raw := rawClient(t, srv)
	ctx := context.Background()
	// The layout of the previous release, as its scripts wrote it: every key in slot {rec}.
	old := "u:{rec}:n:" + b64Digest("saas")
	oldOwner := func(o string) string { return "u:{rec}:o:" + b64Digest(o) }
	for i := range 300 {
		o := fmt.Sprint("owner-", i)
		raw.HSet(ctx, oldOwner(o), "saas", "record-"+strconv.Itoa(i))
		raw.SAdd(ctx, old, o)
	}
	raw.HSet(ctx, oldOwner("owner-0"), "other", "record-other")
	raw.SAdd(ctx, "u:{rec}:n:"+b64Digest("other"), "owner-0")
	now := time.Now()
	life := RecordLife{Now: now, Idle: time.Hour, Absolute: 3 * time.Hour}
	if v, ok, err := r.GetRecord(ctx, "owner-7", "saas", life); err != nil || !ok || string(v) != "record-7" {
		t.Fatalf("an old record read after the upgrade: %q %v %v", v, ok, err)
	}
	if got, err := r.OwnerRecords(ctx, "owner-0", life); err != nil || len(got) != 2 || string(got["other"]) != "record-other" {
		t.Fatalf("an old owner's records: %q %v", got, err)
	}
	if n, err := r.CountRecords(ctx, "saas", life); err != nil || n != 300 {
		t.Fatalf("CountRecords after the upgrade = %d %v, want 300", n, err)
	}
	if n, _ := raw.Exists(ctx, old).Result(); n != 0 {
		t.Error("the old set is still there after a count")
	}
	if keys, _ := raw.Keys(ctx, "u:{rec}*").Result(); len(keys) != 0 {
		t.Errorf("keys of the previous layout left after a count: %v", keys)
	}
	listed := 0
	if err := r.NameOwners(ctx, "saas", life, func(o []string) error { listed += len(o); return nil }); err != nil || listed != 300 {
		t.Errorf("NameOwners listed %d (%v), want 300", listed, err)
	}
	if ttl, _ := raw.PTTL(ctx, redisRecords{r}.ownerKey("owner-200")).Result(); ttl <= 0 || ttl > time.Hour {
		t.Errorf("an old record nobody read has PTTL %s, want at most Idle", ttl)
	}
	// Past Idle, unread since the upgrade: gone.
	life.Now = now.Add(61 * time.Minute)
	if _, ok, _ := r.GetRecord(ctx, "owner-200", "saas", life); ok {
		t.Error("an old record unused past Idle after the upgrade was read")
	}
	if n, _ := r.CountRecords(ctx, "saas", life); n != 0 {
		t.Errorf("CountRecords past Idle = %d", n)
	}
}

// TestRedisRecordsSpreadOverSlots: on a Redis Cluster, each owner's records are keyed with a
// hash tag of their own, so owners spread over the slots instead of filling one, while every
// script touches one key (a one-node Cluster refuses a script or transaction across slots with
// CROSSSLOT, and the store's contract runs there too: TestRedisClusterContract).
func TestRedisRecordsSpreadOverSlots(t *testing.T) {
	t.Parallel() // its own redis-server; it waits on expiries and timeouts, not on a core
	srv := testredis.Start(t, testredis.WithCluster())
	r := newRedisStore(t, RedisConfig{Addrs: []string{srv.Addr()}, Cluster: true, KeyPrefix: "s:"})
	raw := rawClient(t, srv)
	ctx := context.Background()
	life := RecordLife{Now: time.Now(), Idle: time.Hour, Absolute: 3 * time.Hour}
	slots := map[int64]bool{}
	for i := range 64 {
		o := fmt.Sprint("owner-", i)
		for _, name := range []string{"a", "b"} {
			if ok, err := r.PutRecord(ctx, o, name, []byte("v"), Budget{Count: 2, Bytes: 64}, life); err != nil || !ok {
				t.Fatal(ok, err)
			}
		}
		slot, err := raw.ClusterKeySlot(ctx, redisRecords{r}.ownerKey(o)).Result()
		if err != nil {
			t.Fatal(err)
		}
		slots[slot] = true
	}
	if len(slots) < 48 {
		t.Errorf("64 owners' records fill %d slots; want them spread (at least 48)", len(slots))
	}
	if n, err := r.CountRecords(ctx, "a", life); err != nil || n != 64 {
		t.Errorf("CountRecords = %d %v", n, err)
	}
	if got, err := r.OwnerRecords(ctx, "owner-3", life); err != nil || len(got) != 2 {
		t.Errorf("OwnerRecords = %q %v", got, err)
	}
	t.Run("removal racing a put", func(t *testing.T) {
		cfg := RedisConfig{Addrs: []string{srv.Addr()}, Cluster: true, KeyPrefix: "race:"}
		testRecordIndexFollowsARemoval(t, newRedisStore(t, cfg), newRedisStore(t, cfg))
	})
}
