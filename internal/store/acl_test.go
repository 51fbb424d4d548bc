package store

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
)

// Redis ACL rules docs/scaling.md gives operators for the gateway's user with the default key
// prefix: its keys, its notice channels and the commands it sends; a Cluster adds the slot map
// and the command table go-redis reads to route.
const (
	leastPrivilege        = "~mcpgw:* &mcpgw:notice:* -@all +hello +auth +ping +set +get +time +incr +pexpire +pttl +del +evalsha +eval +publish +subscribe +unsubscribe"
	leastPrivilegeCluster = leastPrivilege + " +cluster|slots +command"
	// recordsPrivilege is what per-user OAuth's token vault (Records) adds.
	recordsPrivilege = " +hget +hset +hdel +hkeys +hstrlen +hexists +hgetall +pexpiretime +pexpireat" +
		" +zadd +zrem +zscan +zcount +zremrangebyscore +srem +srandmember +multi +exec"
)

// aclSetup is a Redis the ACL tests run against, single or Cluster, with the documented rules
// for it and the store's configuration for an address.
type aclSetup struct {
	name  string
	opts  []testredis.Option
	rules string
	cfg   func(addr string) RedisConfig
}

// aclSetups are a single server and a Cluster, each with its documented rules.
func aclSetups() []aclSetup {
	return []aclSetup{
		{"single", nil, leastPrivilege, func(addr string) RedisConfig { return RedisConfig{URL: "redis://" + addr} }},
		{"cluster", []testredis.Option{testredis.WithCluster()}, leastPrivilegeCluster,
			func(addr string) RedisConfig { return RedisConfig{Addrs: []string{addr}, Cluster: true} }},
	}
}

// TestRedisLeastPrivilegeACL: everything the gateway does works for a Redis user limited to the
// documented rules, on a single server and on a Cluster, and that user can touch nothing
// outside its prefix, so the rules are both enough and narrow.
func TestRedisLeastPrivilegeACL(t *testing.T) {
	t.Parallel() // its own redis-server; it waits on expiries and timeouts, not on a core
	for _, tt := range aclSetups() {
		t.Run(tt.name, func(t *testing.T) {
			srv := testredis.Start(t, tt.opts...)
			args := append([]string{"ACL", "SETUSER", "gw", "on", ">gw-secret"}, strings.Fields(tt.rules+recordsPrivilege)...)
			if _, err := srv.Do(args...); err != nil {
				t.Fatalf("ACL SETUSER: %v", err)
			}
			if _, err := srv.Do("SCRIPT", "FLUSH"); err != nil { // Allow must load its script by EVAL
				t.Fatal(err)
			}
			as := func(prefix string) *Redis {
				cfg := tt.cfg(srv.Addr())
				cfg.Username, cfg.Password, cfg.KeyPrefix = "gw", "gw-secret", prefix
				return newRedisStore(t, cfg)
			}
			r := as("")
			ctx := context.Background()
			for op, err := range opsWithinGuard(t, ctx, r) {
				if err != nil {
					t.Errorf("%s as the least-privilege user: %v", op, err)
				}
			}
			sctx, cancel := context.WithCancel(ctx)
			defer cancel()
			in := make(noticeInbox, 1)
			r.Subscribe(sctx, "lists", in.fn)
			waitSubscribers(t, newRedisStore(t, tt.cfg(srv.Addr())), "lists", 1) // asked as the default user
			if err := r.Publish(ctx, "lists", []byte("hello")); err != nil {
				t.Fatalf("Publish as the least-privilege user: %v", err)
			}
			in.want(t, "hello")
			for op, err := range recordOps(ctx, r) {
				if err != nil {
					t.Errorf("Records.%s as the least-privilege user: %v", op, err)
				}
			}
			for op, err := range replayOps(ctx, r) {
				if err != nil {
					t.Errorf("%s as the least-privilege user: %v", op, err)
				}
			}
			if err := r.CheckVersion(ctx); err != nil {
				t.Errorf("CheckVersion as the least-privilege user: %v", err)
			}
			if err := r.CheckScripts(ctx); err != nil {
				t.Errorf("CheckScripts as the least-privilege user: %v", err)
			}

			other := as("other:")
			if err := other.Set(ctx, "v", []byte("x"), time.Minute); err == nil {
				t.Error("the least-privilege user wrote a key outside its prefix")
			}
			if err := other.Publish(ctx, "lists", []byte("x")); err == nil {
				t.Error("the least-privilege user published outside its channels")
			}
			if err := r.client.FlushAll(ctx).Err(); err == nil {
				t.Error("the least-privilege user could FLUSHALL")
			}
		})
	}
}

// TestCheckScriptsRefusedByACL: a user the documented rules without +evalsha +eval is refused
// by CheckScripts (NOPERM, what the readiness check reports), on a single server and on a
// Cluster; the refusal is an answer and leaves the circuit breaker closed; once the ACL grants
// scripts again CheckScripts passes.
func TestCheckScriptsRefusedByACL(t *testing.T) {
	t.Parallel() // its own redis-servers
	noScripts := strings.NewReplacer(" +evalsha", "", " +eval", "")
	for _, tt := range aclSetups() {
		t.Run(tt.name, func(t *testing.T) {
			srv := testredis.Start(t, tt.opts...)
			grant := func(rules string) {
				t.Helper()
				args := append([]string{"ACL", "SETUSER", "gw", "reset", "on", ">gw-secret"}, strings.Fields(rules)...)
				if _, err := srv.Do(args...); err != nil {
					t.Fatalf("ACL SETUSER: %v", err)
				}
			}
			grant(noScripts.Replace(tt.rules))
			cfg := tt.cfg(srv.Addr())
			cfg.Username, cfg.Password = "gw", "gw-secret"
			r := newRedisStore(t, cfg)
			ctx := context.Background()
			for range 3 * DefaultBreakerFailures {
				if err := r.CheckScripts(ctx); err == nil || !strings.Contains(err.Error(), "NOPERM") {
					t.Fatalf("CheckScripts for a user without scripts: %v, want NOPERM", err)
				}
			}
			if st := r.BreakerState(); st != BreakerClosed {
				t.Errorf("breaker %s after refusals, want closed: Redis answered", st)
			}
			grant(tt.rules)
			if err := r.CheckScripts(ctx); err != nil {
				t.Errorf("CheckScripts once the ACL grants scripts: %v", err)
			}
		})
	}
}

// replayOps runs every Replay and ReplayOnce operation once (confirmations' answer records, DPoP
// proofs' replay records) and returns each one's error.
func replayOps(ctx context.Context, r *Redis) map[string]error {
	errs := map[string]error{}
	b := ReplayBudget{Count: 4, Window: time.Minute}
	_, errs["FirstUse"] = r.FirstUse(ctx, "o", "a", time.Minute, b)
	_, _, _, errs["FirstUseGet"] = r.FirstUseGet(ctx, "o", "b", time.Minute, b, "v")
	_, errs["FirstUseOnce"] = r.FirstUseOnce(ctx, "o", "c", "once", time.Minute, b)
	return errs
}

// recordOps runs every Records operation once, a move of the previous layout's record
// included, and returns each one's error.
func recordOps(ctx context.Context, r *Redis) map[string]error {
	errs := map[string]error{}
	life := RecordLife{Now: time.Now(), Idle: time.Hour, Absolute: 2 * time.Hour}
	b := Budget{Count: 2, Bytes: 64}
	errs["old layout"] = r.client.HSet(ctx, redisRecords{r}.oldOwnerKey("o2"), "n", "old").Err()
	_, errs["PutRecord"] = r.PutRecord(ctx, "o", "n", []byte("v"), b, life)
	_, errs["AddRecord"] = r.AddRecord(ctx, "o", "m", []byte("v"), b, life)
	life.Now = life.Now.Add(30 * time.Minute) // a read that moves the deadline
	_, _, errs["GetRecord"] = r.GetRecord(ctx, "o", "n", life)
	_, _, errs["GetRecord moving"] = r.GetRecord(ctx, "o2", "n", life)
	_, errs["SwapRecord"] = r.SwapRecord(ctx, "o", "n", []byte("v"), []byte("w"), life)
	_, errs["OwnerRecords"] = r.OwnerRecords(ctx, "o", life)
	_, errs["CountRecords"] = r.CountRecords(ctx, "n", life)
	errs["NameOwners"] = r.NameOwners(ctx, "n", life, func([]string) error { return nil })
	_, errs["DeleteRecord"] = r.DeleteRecord(ctx, "o", "n", []byte("w"))
	return errs
}
