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
// whose deadline passed when it is counted: it cannot grow with callers long gone.
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
	hash := r.recOwnerKey("o0")
	z, _ := r.recNameKeys("n")
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
	if ttl, _ := raw.PTTL(ctx, r.recOwnerKey("o1")).Result(); ttl <= 0 || ttl > time.Hour {
		t.Errorf("an unused owner's hash has PTTL %s, want at most Idle", ttl)
	}
}

// TestRedisRecordsUpgrade: records written before records expired (a hash per owner holding
// only the record, a plain set of owners per name) are all still there after the upgrade; each
// gets its deadlines, starting when it is first met, and then expires like any other, those
// nobody reads again included (counting adopts them).
func TestRedisRecordsUpgrade(t *testing.T) {
	srv := testredis.Start(t)
	r := newRedisStore(t, RedisConfig{URL: srv.URL(), KeyPrefix: "u:"})
	raw := rawClient(t, srv)
	ctx := context.Background()
	// The layout of the previous release, as its scripts wrote it.
	_, old := r.recNameKeys("saas")
	for i := range 300 {
		o := fmt.Sprint("owner-", i)
		raw.HSet(ctx, r.recOwnerKey(o), "saas", "record-"+strconv.Itoa(i))
		raw.SAdd(ctx, old, o)
	}
	raw.HSet(ctx, r.recOwnerKey("owner-0"), "other", "record-other")
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
	listed := 0
	if err := r.NameOwners(ctx, "saas", life, func(o []string) error { listed += len(o); return nil }); err != nil || listed != 300 {
		t.Errorf("NameOwners listed %d (%v), want 300", listed, err)
	}
	if ttl, _ := raw.PTTL(ctx, r.recOwnerKey("owner-200")).Result(); ttl <= 0 || ttl > time.Hour {
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
