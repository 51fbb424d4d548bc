package store

import (
	"context"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
)

// TestRedisRecordIndexFollowsARemoval: a removal (DeleteRecord) takes the record from its
// owner's hash, then the owner from the name's index, in another slot. A put of the same
// owner and name by another replica that lands between the two must stay listed: the index
// step removes only the entry of the record the removal took. It used to remove whatever
// entry was there, so the fresh record outlived its listing: an operator's removal of every
// record of the backend (NameOwners) missed it, and the count left it out. The same holds for
// the previous layout's record and set: the set entry goes only with the record. The memory
// store removes a record and its entry under one lock: nothing lands between.
// TestRedisRecordsSpreadOverSlots runs it on a Cluster, where each script keeps to one slot.
func TestRedisRecordIndexFollowsARemoval(t *testing.T) {
	t.Parallel() // its own redis-server
	srv := testredis.Start(t)
	cfg := RedisConfig{URL: srv.URL(), KeyPrefix: "r:"}
	testRecordIndexFollowsARemoval(t, newRedisStore(t, cfg), newRedisStore(t, cfg))
}

func testRecordIndexFollowsARemoval(t *testing.T, a, b *Redis) {
	ctx := context.Background()
	life := RecordLife{Now: time.Now(), Idle: time.Hour, Absolute: 3 * time.Hour}
	budget := Budget{Count: 4, Bytes: 64}
	listed := func(name string) map[string]bool {
		t.Helper()
		got := map[string]bool{}
		if err := b.NameOwners(ctx, name, life, func(o []string) error {
			for _, x := range o {
				got[x] = true
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return got
	}
	for _, tc := range []struct {
		name string
		old  []byte // what the removal compares, nil for none
	}{{"unconditional", nil}, {"compared", []byte("first")}} {
		t.Run(tc.name, func(t *testing.T) {
			name := "backend-" + tc.name
			if ok, err := a.PutRecord(ctx, "alice", name, []byte("first"), budget, life); err != nil || !ok {
				t.Fatal(ok, err)
			}
			// Replica b connects alice again while replica a's removal is between its steps.
			a.beforeUnindex = func() {
				if ok, err := b.PutRecord(ctx, "alice", name, []byte("second"), budget, life); err != nil || !ok {
					t.Errorf("the put between the removal's steps: %v %v", ok, err)
				}
			}
			removed, err := a.DeleteRecord(ctx, "alice", name, tc.old)
			a.beforeUnindex = nil
			if err != nil || !removed {
				t.Fatalf("DeleteRecord = %v %v", removed, err)
			}
			if v, ok, err := b.GetRecord(ctx, "alice", name, life); err != nil || !ok || string(v) != "second" {
				t.Fatalf("the record put between = %q %v %v", v, ok, err)
			}
			if !listed(name)["alice"] {
				t.Error("the record put between the removal's steps is missing from its name's index")
			}
			if n, err := b.CountRecords(ctx, name, life); err != nil || n != 1 {
				t.Errorf("CountRecords = %d %v, want 1", n, err)
			}
			// Without a put between, the removal takes the entry with the record.
			if removed, err := a.DeleteRecord(ctx, "alice", name, []byte("second")); err != nil || !removed {
				t.Fatalf("DeleteRecord = %v %v", removed, err)
			}
			if listed(name)["alice"] {
				t.Error("a removed record is still in its name's index")
			}
		})
	}
	t.Run("previous layout", func(t *testing.T) {
		// A replica of the previous release wrote alice's record in the old layout after this
		// one moved her records: a removal comparing another value leaves it, and its listing.
		raw := a.client
		r := redisRecords{a}
		if ok, err := a.PutRecord(ctx, "alice", "old", []byte("new"), budget, life); err != nil || !ok {
			t.Fatal(ok, err)
		}
		if err := raw.HSet(ctx, r.oldOwnerKey("alice"), "old", "written-by-the-old-release").Err(); err != nil {
			t.Fatal(err)
		}
		if err := raw.SAdd(ctx, r.oldNameKey("old"), "alice").Err(); err != nil {
			t.Fatal(err)
		}
		if removed, err := a.DeleteRecord(ctx, "alice", "old", []byte("new")); err != nil || !removed {
			t.Fatalf("DeleteRecord = %v %v", removed, err)
		}
		if ok, _ := raw.SIsMember(ctx, r.oldNameKey("old"), "alice").Result(); !ok {
			t.Error("the old layout's record stays, but its listing went")
		}
	})
}
