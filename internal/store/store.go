// Package store holds the gateway's shared state behind one interface: MRTR
// single-use nonces, rate-limit buckets, values (list cache, pins, records
// such as calls waiting for approval) and per-owner hold budgets.
//
// Two implementations exist. Memory (the default) keeps state in the process
// and suits a single replica. Redis keeps it in a Redis server, Sentinel group
// or Cluster so that every replica sees the same nonces and buckets. Both pass
// the same contract tests and use the same rate-limit arithmetic (GCRA, see
// Limit), so switching between them changes where state lives, not what it
// means.
//
// Errors: every failure of the backing service is wrapped so that
// errors.Is(err, ErrUnavailable) holds. The package never decides between
// failing open and failing closed; the caller does (single-use checks fail
// closed, rate limits follow configuration).
package store

import (
	"context"
	"errors"
	"time"
)

// Store is the shared state the gateway needs across replicas. Every method is
// safe for concurrent use.
type Store interface {
	// UseOnce records key as used; first is true only for the first caller
	// within ttl (single-use MRTR confirmations: the gateway fails closed on
	// error).
	UseOnce(ctx context.Context, key string, ttl time.Duration) (first bool, err error)
	// Allow takes one token from the rate-limit bucket for key under limit
	// (atomic across replicas).
	Allow(ctx context.Context, key string, limit Limit) (RateDecision, error)
	// Get returns the value stored under key, and false when there is none or
	// it has expired.
	Get(ctx context.Context, key string) ([]byte, bool, error)
	// Set stores a copy of value under key for ttl, for an optional shared
	// list cache.
	Set(ctx context.Context, key string, value []byte, ttl time.Duration) error
	// SetNX stores a copy of value under key unless the key holds a live value,
	// atomically across replicas, and otherwise returns that value: the first
	// writer wins and every later one learns what it wrote (trust-on-first-use
	// tool-definition pins). A ttl of zero keeps the value until it is deleted
	// out of band; a negative one is ErrInvalidTTL. A key already holding value
	// byte for byte counts as stored: a write sent again after its answer was
	// lost finds its own first attempt's value (Records.SwapRecord says why).
	SetNX(ctx context.Context, key string, value []byte, ttl time.Duration) (stored bool, current []byte, err error)
	// Swap replaces the value stored under key with value only while the key
	// still holds old (byte for byte), atomically across replicas, keeping its
	// expiry; swapped is false otherwise, the key absent or expired included.
	// A reader that writes back what it made of what it read so loses nothing
	// another writer stored in between (trust-on-first-use pins: an operator's
	// approval and a replica's first contact). A key already holding value
	// counts as swapped, as for SetNX: callers write values no other write
	// repeats (sealed under a fresh nonce). A nil value removes the key while
	// it holds old (compare-and-delete: a reader that drops what it read
	// leaves what another writer stored in between); swapped is then true also
	// when the key is absent (old is gone either way: a copy sent again finds
	// its first attempt's removal).
	Swap(ctx context.Context, key string, old, value []byte) (swapped bool, err error)
	// Delete removes the value stored under key, if any (Set, SetNX and Swap
	// values).
	Delete(ctx context.Context, key string) error
	// Hold counts item, weighing size bytes, against the budget under key
	// for ttl or until Release, atomically across replicas: it holds
	// nothing and returns false when the budget's live items would then
	// number more than b.Count or weigh more than b.Bytes. Holding an item
	// again replaces its earlier hold. This bounds what one owner (a
	// caller) keeps in the store at once.
	Hold(ctx context.Context, key, item string, size int64, ttl time.Duration, b Budget) (held bool, err error)
	// Release ends item's hold in the budget under key; releasing what is
	// not held does nothing.
	Release(ctx context.Context, key, item string) error
	// Ping reports whether the store can serve requests (for /readyz).
	Ping(ctx context.Context) error
	// Close releases the store's resources; later calls fail with ErrClosed.
	Close() error
}

var (
	// ErrUnavailable wraps every failure to reach or use the backing service
	// (network errors, timeouts, a full memory store, a closed store). The
	// caller decides whether to fail open or closed.
	ErrUnavailable = errors.New("store: unavailable")
	// ErrFull means a pool of the memory store (its entries of one kind, or
	// its value bytes) is full and could not make room by dropping expired
	// entries. It always comes wrapped together with
	// ErrUnavailable.
	ErrFull = errors.New("store: full")
	// ErrClosed means the store was used after Close. It always comes wrapped
	// together with ErrUnavailable.
	ErrClosed = errors.New("store: closed")
	// ErrInvalidTTL means a non-positive TTL was passed to UseOnce, Set or
	// Hold, or a negative one to SetNX.
	ErrInvalidTTL = errors.New("store: ttl must be positive")
	// ErrInvalidLimit means a rate limit failed Limit.Validate.
	ErrInvalidLimit = errors.New("store: invalid rate limit")
	// ErrInvalidBudget means Hold got a budget without room or a negative size.
	ErrInvalidBudget = errors.New("store: invalid hold budget")
)

// Budget bounds what one owner may hold at once (Store.Hold).
type Budget struct {
	// Count is the most items held at once; at least 1.
	Count int
	// Bytes is the most the held items may weigh together; at least 1.
	Bytes int64
}
