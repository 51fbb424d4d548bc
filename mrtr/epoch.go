package mrtr

import (
	"context"
	"time"
)

// Keys of the epoch marker. They share the replay key space's prefix so that a store's key
// prefix and hashing treat them alike.
const (
	epochKey   = ReplayKeyPrefix + "epoch"
	epochAtKey = ReplayKeyPrefix + "epoch-at"
	// epochTTL keeps the marker for a year; when it expires the guard sees a "new" store once,
	// and only states issued in the minutes before that are refused.
	epochTTL = 365 * 24 * time.Hour
)

// EpochStore is what the epoch guard needs from the shared store: the single-use check and a
// little key-value memory (store.Store implements it).
type EpochStore interface {
	Replays
	Get(ctx context.Context, key string) ([]byte, bool, error)
	Set(ctx context.Context, key string, value []byte, ttl time.Duration) error
}

// GuardEpoch makes single use survive a store that loses its memory — a Redis restarted without
// persistence, a failover to a replica that never received the marker, or a restarted process
// using the in-memory store. Such a store would accept a consumed state again for the rest of
// its lifetime. It does not cover a replica promoted with the marker but without the latest
// consumed keys (asynchronous replication lag): the store itself must close that window, as
// the Redis store does with its waitReplicas setting. The guard keeps a marker in the store recording when the store's memory
// began; a state issued before that instant may have been consumed in the lost memory, so it is
// refused as a replay (the user is simply asked again). A Codec hands the guard the issue time
// its states carry, by the issuing replica's clock, whatever TTL that replica had; ttl (the
// Codec's TTL) serves UseOnce, whose callers know only a state's remaining lifetime.
//
// Call Prime at start-up (and whenever convenient, e.g. from a readiness check) so the marker
// exists before states are issued; a marker first created at consume time would refuse the
// states issued just before it.
func GuardEpoch(s EpochStore, ttl time.Duration, now func() time.Time) *EpochGuard {
	if ttl == 0 {
		ttl = DefaultTTL
	}
	if now == nil {
		now = time.Now
	}
	return &EpochGuard{s: s, ttl: ttl, now: now}
}

// EpochGuard is the Replays returned by GuardEpoch.
type EpochGuard struct {
	s   EpochStore
	ttl time.Duration
	now func() time.Time
}

// UseOnce refuses (first=false) a state issued before the store's memory began, then defers
// to the store. remaining is the state's remaining lifetime; its issue time is taken to be
// remaining less the guard's ttl from now, which is right only for a state sealed with that
// ttl: a Codec hands the guard the issue time its states carry instead.
func (g *EpochGuard) UseOnce(ctx context.Context, key string, remaining time.Duration) (bool, error) {
	return g.useOnce(ctx, key, g.now().Add(remaining-g.ttl), remaining)
}

// useOnce is UseOnce for a state issued at issued, keeping the single-use key for keep.
func (g *EpochGuard) useOnce(ctx context.Context, key string, issued time.Time, keep time.Duration) (bool, error) {
	if ok, err := g.Issued(ctx, issued); err != nil || !ok {
		return false, err
	}
	first, err := g.s.UseOnce(ctx, key, keep)
	if err != nil || !first {
		return false, err
	}
	return g.Kept(ctx, issued)
}

// Issued is UseOnce's check without its write: false for a state issued (by the clock of the
// replica that sealed it) before the store's memory began (refuse it as a replay). A caller
// that claims the single-use key itself, in one step with other records (Codec.ConsumeAs),
// asks Issued first.
func (g *EpochGuard) Issued(ctx context.Context, issued time.Time) (bool, error) {
	since, err := g.epoch(ctx)
	if err != nil {
		return false, err
	}
	return !issued.Before(since), nil
}

// Kept is Issued asked again once a state's single-use key was claimed: false when the store's
// memory began after the state was issued after all. The store may lose its memory between
// Issued and the claim (a Redis restarted without persistence while the claim waited for it,
// which the Redis client's retry then wrote into the empty store): the claim found no earlier
// use in a memory that does not reach back to the state's issue, and a state consumed before
// would be accepted once more. Asked after the claim, the marker tells: present and no later
// than the issue, the claim was judged by a memory that holds every use since (the marker is
// made before the states it judges, Prime); missing or later, the state is refused as a
// replay, at worst one the store lost between the claim and this read.
func (g *EpochGuard) Kept(ctx context.Context, issued time.Time) (bool, error) {
	since, err := g.Began(ctx)
	if err != nil {
		return false, err
	}
	return !issued.Before(since), nil
}

// Began returns when the store's current memory began, for records kept in the same store
// whose single use must not outlive that memory either (DPoP proofs' jti): one read while the
// marker is there, the marker written first when it is missing (a new or emptied store).
func (g *EpochGuard) Began(ctx context.Context) (time.Time, error) {
	if t, ok, err := g.recorded(ctx); err != nil || ok {
		return t, err
	}
	return g.epoch(ctx)
}

// MarkerKey is the store key (Store.Get) of the record of when the store's memory began, for a
// caller that reads it together with other work in one round trip and hands it to Since.
func (g *EpochGuard) MarkerKey() string { return epochAtKey }

// Since is Began for a record the caller read itself (value and found as Store.Get returns
// them, read at MarkerKey): no store call while the record is there and valid, the marker
// written first when it is missing (a new or emptied store).
func (g *EpochGuard) Since(ctx context.Context, value []byte, found bool) (time.Time, error) {
	if t, ok := parseEpoch(value, found); ok {
		return t, nil
	}
	return g.epoch(ctx)
}

// Prime creates the marker if the store lacks it (a new or emptied store).
func (g *EpochGuard) Prime(ctx context.Context) error {
	_, err := g.epoch(ctx)
	return err
}

// epoch returns when the store's current memory began, creating the marker if it is missing.
func (g *EpochGuard) epoch(ctx context.Context) (time.Time, error) {
	created, err := g.s.UseOnce(ctx, epochKey, epochTTL)
	if err != nil {
		return time.Time{}, err
	}
	if !created {
		if t, ok, err := g.recorded(ctx); err != nil || ok {
			return t, err
		}
		// The marker exists without its time: written by a replica that failed between the
		// two writes. Record now; refusing a little more than needed is the safe side.
	}
	t := g.now()
	if err := g.s.Set(ctx, epochAtKey, []byte(t.UTC().Format(time.RFC3339Nano)), epochTTL); err != nil {
		return time.Time{}, err
	}
	return t, nil
}

// recorded reads the time the marker records, ok false when it is missing or unreadable.
func (g *EpochGuard) recorded(ctx context.Context) (time.Time, bool, error) {
	v, found, err := g.s.Get(ctx, epochAtKey)
	if err != nil {
		return time.Time{}, false, err
	}
	t, ok := parseEpoch(v, found)
	return t, ok, nil
}

// parseEpoch reads a record of the marker; ok false when it is missing or unreadable. It is the
// one parser of that record, so that Began, Since and UseOnce cannot disagree on a valid one.
func parseEpoch(v []byte, found bool) (time.Time, bool) {
	if !found {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, string(v))
	return t, err == nil
}
