package vault

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/seal"
	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
)

var (
	keyA = seal.Key{ID: "2026-10", Secret: bytes.Repeat([]byte{'a'}, 32)}
	keyB = seal.Key{ID: "2026-11", Secret: bytes.Repeat([]byte{'b'}, 32)}
)

var alice = Caller{Issuer: "https://idp.example/", Subject: "alice"}

// stores are the two implementations of the vault's storage, each fresh.
func stores(t *testing.T) map[string]func(t *testing.T) (store.Records, store.Store) {
	srv := testredis.Start(t)
	var n atomic.Int64
	return map[string]func(t *testing.T) (store.Records, store.Store){
		"memory": func(t *testing.T) (store.Records, store.Store) {
			m, err := store.NewMemory(store.MemoryOptions{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = m.Close() })
			return m, m
		},
		"redis": func(t *testing.T) (store.Records, store.Store) {
			r, err := store.NewRedis(store.RedisConfig{URL: srv.URL(), KeyPrefix: fmt.Sprintf("v%d:", n.Add(1))})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = r.Close() })
			return r, r
		},
	}
}

func newVault(t *testing.T, recs store.Records, locks store.Store, keys ...seal.Key) *Vault {
	t.Helper()
	v, err := New(Config{Keys: keys, MaxRecordsPerSubject: 2}, recs, locks, nil)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func tokenFor(who Caller, backend, access string) *Token {
	return &Token{Issuer: who.Issuer, Subject: who.Subject, Backend: backend, Resource: "https://" + backend + ".example/mcp",
		AuthServer: "https://as.example/", ClientID: "gw", AccessToken: access, RefreshToken: "refresh-" + access,
		Expiry: time.Unix(1_900_000_000, 0).UTC(), Connected: time.Unix(1_800_000_000, 0).UTC()}
}

func TestVault(t *testing.T) {
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			t.Run("round trip", func(t *testing.T) { testRoundTrip(t, open) })
			t.Run("records are bound to their owner and backend", func(t *testing.T) { testBinding(t, open) })
			t.Run("key rotation", func(t *testing.T) { testRotation(t, open) })
			t.Run("bounds", func(t *testing.T) { testBounds(t, open) })
			t.Run("swap and delete act on what was read", func(t *testing.T) { testSwap(t, open) })
			t.Run("every record of a backend", func(t *testing.T) { testEachOfBackend(t, open) })
			t.Run("refresh lock", func(t *testing.T) { testLock(t, open) })
			t.Run("a release leaves a lock taken as it reads", func(t *testing.T) { testLockTakenDuringRelease(t, open) })
			t.Run("take removes before the caller revokes", func(t *testing.T) { testTake(t, open) })
			t.Run("records of retired backends", func(t *testing.T) { testRemoveRetired(t, open) })
		})
	}
}

func testRoundTrip(t *testing.T, open func(t *testing.T) (store.Records, store.Store)) {
	recs, locks := open(t)
	v := newVault(t, recs, locks, keyA)
	ctx := context.Background()
	if _, err := v.Get(ctx, alice, "saas"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("empty vault: %v", err)
	}
	want := tokenFor(alice, "saas", "access-secret-1")
	if err := v.Put(ctx, want); err != nil {
		t.Fatal(err)
	}
	e, err := v.Get(ctx, alice, "saas")
	if err != nil || e.Token != *want || e.Stale {
		t.Fatalf("Get = %+v, %v; want %+v", e, err, want)
	}
	// What the store holds is sealed: neither token nor identity appears in it.
	raw, _, _ := recs.GetRecord(ctx, string(alice.Owner()), "saas", testLife)
	for _, secret := range []string{"access-secret-1", "refresh-access-secret-1", "alice", "idp.example"} {
		if bytes.Contains(raw, []byte(secret)) || strings.Contains(string(alice.Owner()), secret) {
			t.Errorf("the stored record or its owner shows %q", secret)
		}
	}
	all, err := v.Subject(ctx, alice)
	if err != nil || len(all) != 1 || all["saas"].AccessToken != "access-secret-1" {
		t.Errorf("Subject = %v, %v", all, err)
	}
	if n, err := v.Count(ctx, "saas"); err != nil || n != 1 {
		t.Errorf("Count = %d, %v", n, err)
	}
}

func testBinding(t *testing.T, open func(t *testing.T) (store.Records, store.Store)) {
	recs, locks := open(t)
	v := newVault(t, recs, locks, keyA)
	ctx := context.Background()
	if err := v.Put(ctx, tokenFor(alice, "saas", "alice-token")); err != nil {
		t.Fatal(err)
	}
	raw, _, _ := recs.GetRecord(ctx, string(alice.Owner()), "saas", testLife)
	mallory := Caller{Issuer: alice.Issuer, Subject: "mallory"}
	// Someone with write access to the store copies alice's record under mallory and under
	// another backend: neither opens.
	b := store.Budget{Count: 4, Bytes: 1 << 20}
	if _, err := recs.PutRecord(ctx, string(mallory.Owner()), "saas", raw, b, testLife); err != nil {
		t.Fatal(err)
	}
	if _, err := recs.PutRecord(ctx, string(alice.Owner()), "other", raw, b, testLife); err != nil {
		t.Fatal(err)
	}
	if e, err := v.Get(ctx, mallory, "saas"); !errors.Is(err, ErrUnreadable) {
		t.Errorf("alice's record under mallory: %+v, %v", e, err)
	}
	if e, err := v.Get(ctx, alice, "other"); !errors.Is(err, ErrUnreadable) {
		t.Errorf("alice's record under another backend: %+v, %v", e, err)
	}
	// A flipped byte does not open either, and the unreadable record can be removed.
	tampered := bytes.Clone(raw)
	tampered[len(tampered)-3] ^= 1
	if _, err := recs.PutRecord(ctx, string(alice.Owner()), "saas", tampered, b, testLife); err != nil {
		t.Fatal(err)
	}
	e, err := v.Get(ctx, alice, "saas")
	if !errors.Is(err, ErrUnreadable) {
		t.Fatalf("tampered record: %v", err)
	}
	if removed, err := v.Delete(ctx, alice, "saas", e); err != nil || !removed {
		t.Errorf("removing the unreadable record: %v %v", removed, err)
	}
}

func testRotation(t *testing.T, open func(t *testing.T) (store.Records, store.Store)) {
	recs, locks := open(t)
	ctx := context.Background()
	old := newVault(t, recs, locks, keyA)
	if err := old.Put(ctx, tokenFor(alice, "saas", "sealed-under-a")); err != nil {
		t.Fatal(err)
	}
	// Both keys configured, B newest: A's record opens and is marked stale; sealing it again
	// moves it to B.
	both := newVault(t, recs, locks, keyA, keyB)
	e, err := both.Get(ctx, alice, "saas")
	if err != nil || !e.Stale || e.AccessToken != "sealed-under-a" {
		t.Fatalf("record under the older key: %+v, %v", e, err)
	}
	if ok, err := both.Swap(ctx, e, &e.Token); err != nil || !ok {
		t.Fatalf("resealing: %v %v", ok, err)
	}
	// Only B configured: the resealed record opens; one still under A would not.
	onlyB := newVault(t, recs, locks, keyB)
	if e, err := onlyB.Get(ctx, alice, "saas"); err != nil || e.Stale {
		t.Errorf("resealed record with only the new key: %+v, %v", e, err)
	}
	bob := Caller{Issuer: alice.Issuer, Subject: "bob"}
	if err := old.Put(ctx, tokenFor(bob, "saas", "never-resealed")); err != nil {
		t.Fatal(err)
	}
	if _, err := onlyB.Get(ctx, bob, "saas"); !errors.Is(err, ErrUnreadable) || !errors.Is(err, ErrKeyNotHeld) {
		t.Errorf("a record under a removed key: %v, want ErrUnreadable and ErrKeyNotHeld", err)
	}
	// B added open-only (the first step of a rotation across replicas): it opens B's records
	// but A still seals, and A's records are not stale.
	openOnlyB := keyB
	openOnlyB.OpenOnly = true
	first := newVault(t, recs, locks, keyA, openOnlyB)
	carol := Caller{Issuer: alice.Issuer, Subject: "carol"}
	if err := first.Put(ctx, tokenFor(carol, "saas", "sealed-in-step-one")); err != nil {
		t.Fatal(err)
	}
	if e, err := old.Get(ctx, carol, "saas"); err != nil || e.Stale {
		t.Errorf("a record sealed while B was open-only, read with A alone: %+v, %v", e, err)
	}
	if e, err := first.Get(ctx, alice, "saas"); err != nil || !e.Stale {
		t.Errorf("a record sealed under B, read while B is open-only: %+v, %v; want it opened and stale", e, err)
	}
}

func testBounds(t *testing.T, open func(t *testing.T) (store.Records, store.Store)) {
	recs, locks := open(t)
	ctx := context.Background()
	v := newVault(t, recs, locks, keyA)
	for _, b := range []string{"one", "two"} {
		if err := v.Put(ctx, tokenFor(alice, b, "t-"+b)); err != nil {
			t.Fatal(err)
		}
	}
	if err := v.Put(ctx, tokenFor(alice, "three", "t")); !errors.Is(err, ErrFull) {
		t.Errorf("a third backend over a budget of two: %v", err)
	}
	if err := v.Put(ctx, tokenFor(alice, "one", "replaced")); err != nil {
		t.Errorf("replacing a record within the budget: %v", err)
	}
	huge := tokenFor(Caller{Issuer: alice.Issuer, Subject: "carol"}, "one", strings.Repeat("x", DefaultMaxRecordBytes))
	if err := v.Put(ctx, huge); !errors.Is(err, ErrTooLarge) {
		t.Errorf("a record over the size bound: %v", err)
	}
}

func testSwap(t *testing.T, open func(t *testing.T) (store.Records, store.Store)) {
	recs, locks := open(t)
	ctx := context.Background()
	v := newVault(t, recs, locks, keyA)
	if err := v.Put(ctx, tokenFor(alice, "saas", "first")); err != nil {
		t.Fatal(err)
	}
	read, _ := v.Get(ctx, alice, "saas")
	// The user disconnects while a refresh runs: the refresh's result does not bring the
	// record back, nor does its failure remove a newer record.
	if removed, err := v.Delete(ctx, alice, "saas", nil); err != nil || !removed {
		t.Fatal(removed, err)
	}
	if ok, err := v.Swap(ctx, read, tokenFor(alice, "saas", "refreshed")); err != nil || ok {
		t.Errorf("a refresh after a disconnect was stored: %v %v", ok, err)
	}
	if err := v.Put(ctx, tokenFor(alice, "saas", "reconnected")); err != nil {
		t.Fatal(err)
	}
	if removed, err := v.Delete(ctx, alice, "saas", read); err != nil || removed {
		t.Errorf("a stale delete removed a newer record: %v %v", removed, err)
	}
	if e, err := v.Get(ctx, alice, "saas"); err != nil || e.AccessToken != "reconnected" {
		t.Errorf("after the stale delete: %+v %v", e, err)
	}
}

func testEachOfBackend(t *testing.T, open func(t *testing.T) (store.Records, store.Store)) {
	recs, locks := open(t)
	ctx := context.Background()
	v := newVault(t, recs, locks, keyA)
	for i := range 5 {
		who := Caller{Issuer: alice.Issuer, Subject: fmt.Sprint("user-", i)}
		if err := v.Put(ctx, tokenFor(who, "saas", fmt.Sprint("token-", i))); err != nil {
			t.Fatal(err)
		}
		if err := v.Put(ctx, tokenFor(who, "other", "keep")); err != nil {
			t.Fatal(err)
		}
	}
	var seen []string
	n, err := v.EachOfBackend(ctx, "saas", func(e *Entry) { seen = append(seen, e.AccessToken) })
	if err != nil || n != 5 || len(seen) != 5 {
		t.Fatalf("EachOfBackend removed %d, saw %d: %v", n, len(seen), err)
	}
	if c, _ := v.Count(ctx, "saas"); c != 0 {
		t.Errorf("%d records of the backend remain", c)
	}
	if c, _ := v.Count(ctx, "other"); c != 5 {
		t.Errorf("another backend's records: %d, want 5", c)
	}
}

func testLock(t *testing.T, open func(t *testing.T) (store.Records, store.Store)) {
	recs, locks := open(t)
	ctx := context.Background()
	v1, v2 := newVault(t, recs, locks, keyA), newVault(t, recs, locks, keyA)
	release, ok, err := v1.Lock(ctx, alice, "saas", time.Minute)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if _, ok, err := v2.Lock(ctx, alice, "saas", time.Minute); err != nil || ok {
		t.Errorf("a second replica took a held lock: %v %v", ok, err)
	}
	if _, ok, _ := v2.Lock(ctx, alice, "other", time.Minute); !ok {
		t.Error("another backend's lock is not independent")
	}
	release()
	if _, ok, err := v2.Lock(ctx, alice, "saas", time.Minute); err != nil || !ok {
		t.Errorf("the released lock: %v %v", ok, err)
	}

	// A lock that ran out and was taken by another replica is that replica's: the first
	// holder's late release leaves it alone.
	late, ok, err := v1.Lock(ctx, alice, "late", 50*time.Millisecond)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, ok, _ := v2.Lock(ctx, alice, "late", time.Minute); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the lock never ran out")
		}
		time.Sleep(10 * time.Millisecond)
	}
	late()
	if _, ok, err := v1.Lock(ctx, alice, "late", time.Minute); err != nil || ok {
		t.Errorf("a late release freed another replica's lock: %v %v", ok, err)
	}
}

// takeover is a shared store where, the moment a release looks at the lock key (reads it, or
// compares and removes it in one step), the lock runs out and another replica takes it: the
// one instant a read and then a delete cannot tell from the holder's own lock.
type takeover struct {
	store.Store
	key  string
	take func()
	once sync.Once
}

func (s *takeover) Get(ctx context.Context, key string) ([]byte, bool, error) {
	v, ok, err := s.Store.Get(ctx, key)
	if key == s.key {
		s.once.Do(s.take)
	}
	return v, ok, err
}

func (s *takeover) Swap(ctx context.Context, key string, old, value []byte) (bool, error) {
	if key == s.key {
		s.once.Do(s.take)
	}
	return s.Store.Swap(ctx, key, old, value)
}

func testLockTakenDuringRelease(t *testing.T, open func(t *testing.T) (store.Records, store.Store)) {
	recs, locks := open(t)
	ctx := context.Background()
	key := lockPrefix + string(alice.Owner()) + "\x00" + "saas"
	v2 := newVault(t, recs, locks, keyA)
	took := false
	shared := &takeover{Store: locks, key: key, take: func() {
		// The first holder's lock ran out (removed here as its expiry would) and the second
		// replica takes it.
		if err := locks.Delete(ctx, key); err != nil {
			t.Error(err)
		}
		_, took, _ = v2.Lock(ctx, alice, "saas", time.Minute)
	}}
	v1 := newVault(t, recs, shared, keyA)
	release, ok, err := v1.Lock(ctx, alice, "saas", time.Minute)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	release()
	if !took {
		t.Fatal("the second replica did not take the lock during the release")
	}
	if _, ok, err := newVault(t, recs, locks, keyA).Lock(ctx, alice, "saas", time.Minute); err != nil || ok {
		t.Errorf("the first holder's release removed the lock the second replica took: a third took it (%v, %v)", ok, err)
	}
}

func TestConfigValidate(t *testing.T) {
	err := Config{Keys: []seal.Key{{ID: "bad id", Secret: []byte("short")}}, MaxRecordBytes: -1}.Validate()
	for _, want := range []string{"id must be", "at least 32", "maxRecordBytes", "maxRecordsPerSubject"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want it to name %q", err, want)
		}
	}
}

func testTake(t *testing.T, open func(t *testing.T) (store.Records, store.Store)) {
	recs, locks := open(t)
	ctx := context.Background()
	v := newVault(t, recs, locks, keyA)
	if e, err := v.Take(ctx, alice, "saas"); e != nil || err != nil {
		t.Fatalf("Take of nothing: %v, %v", e, err)
	}
	if err := v.Put(ctx, tokenFor(alice, "saas", "t1")); err != nil {
		t.Fatal(err)
	}
	if e, err := v.Take(ctx, alice, "saas"); err != nil || e == nil || e.AccessToken != "t1" {
		t.Fatalf("Take: %v, %v; want the removed record", e, err)
	}
	if _, err := v.Get(ctx, alice, "saas"); !errors.Is(err, ErrNotFound) {
		t.Errorf("after Take: %v", err)
	}
	// A record that does not open goes too, with no tokens to revoke.
	if _, err := recs.PutRecord(ctx, string(alice.Owner()), "saas", []byte("v1.2026-10.garbage"), store.Budget{Count: 2, Bytes: 1 << 20}, testLife); err != nil {
		t.Fatal(err)
	}
	if e, err := v.Take(ctx, alice, "saas"); err != nil || e == nil || e.AccessToken != "" {
		t.Errorf("Take of an unreadable record: %v, %v", e, err)
	}
	// EachOfBackend hands each record over once it is gone: what fn revokes is no longer usable.
	if err := v.Put(ctx, tokenFor(alice, "saas", "t2")); err != nil {
		t.Fatal(err)
	}
	n, err := v.EachOfBackend(ctx, "saas", func(e *Entry) {
		if _, err := v.Get(ctx, alice, "saas"); !errors.Is(err, ErrNotFound) {
			t.Errorf("fn saw the record still there: %v", err)
		}
	})
	if err != nil || n != 1 {
		t.Errorf("EachOfBackend: %d, %v", n, err)
	}
}

// testLife is the lifetimes of the records a test writes to the store itself: the defaults.
var testLife = store.RecordLife{Now: time.Now(), Idle: DefaultRecordIdle, Absolute: DefaultRecordMaxAge}

// TestOwnerSpelling: the owner a record is stored under is part of what outlives a process (a
// replica of the previous release and this one read the same records, in Redis), so this value
// is the format; and no two callers share an owner, whatever their subjects hold (NUL, "#",
// nothing, 8 KiB), one subject at two issuers included.
func TestOwnerSpelling(t *testing.T) {
	// base64url(SHA-256("vault owner" 0x00 "https://issuer.example" 0x00 "alice")).
	if got, want := (Caller{"https://issuer.example", "alice"}).Owner(), Owner("LM0WPzHDbA3zYokcPjrmVsQ7cVzvFuBZZffZ62AEzEE"); got != want {
		t.Errorf("Owner = %q, want %q: records stored by the previous release would be orphaned", got, want)
	}
	long := strings.Repeat("s", 8<<10)
	seen := map[Owner]Caller{}
	for _, c := range []Caller{
		{"https://issuer.example", "alice"},
		{"https://other.example", "alice"},
		{"https://issuer.example", "alice\x00"},
		{"https://issuer.example", "\x00alice"},
		{"https://issuer.example", "alice\x00https://other.example"},
		{"https://issuer.example", "a#b"},
		{"https://issuer.example", ""},
		{"https://issuer.example", long},
		{"https://issuer.example/a", "b"},
		{"https://issuer.example", "/a\x00b"},
	} {
		o := c.Owner()
		if other, dup := seen[o]; dup {
			t.Errorf("%q and %q share the owner %q", c, other, o)
		}
		seen[o] = c
	}
}

// testRemoveRetired: RemoveRetired removes the caller's records of backends that are not
// current, and only those, and only the caller's.
func testRemoveRetired(t *testing.T, open func(t *testing.T) (store.Records, store.Store)) {
	recs, locks := open(t)
	v := newVault(t, recs, locks, keyA)
	ctx := context.Background()
	bob := Caller{Issuer: alice.Issuer, Subject: "bob"}
	for _, tok := range []*Token{tokenFor(alice, "saas", "a1"), tokenFor(alice, "gone", "a2"), tokenFor(bob, "gone", "b1")} {
		if err := v.Put(ctx, tok); err != nil {
			t.Fatal(err)
		}
	}
	gone, err := v.RemoveRetired(ctx, alice, func(backend string) bool { return backend == "saas" })
	if len(gone) != 1 || gone[0] != "gone" || err != nil {
		t.Fatalf("RemoveRetired = %q, %v; want [gone]", gone, err)
	}
	if _, err := v.Get(ctx, alice, "gone"); !errors.Is(err, ErrNotFound) {
		t.Errorf("alice's retired record: %v, want removed", err)
	}
	for _, c := range []struct {
		who     Caller
		backend string
	}{{alice, "saas"}, {bob, "gone"}} {
		if _, err := v.Get(ctx, c.who, c.backend); err != nil {
			t.Errorf("%s %s: %v, want kept", c.who.Subject, c.backend, err)
		}
	}
}
