// Package mrtr implements the gateway's side of Multi Round-Trip Requests
// (spec §3): sealing and opening requestState bound to the principal, the
// target and the arguments; single use of confirmations; gateway-originated
// confirmation requests; and wrapping a backend's own round trip so the
// client never sees the backend's state and any replica can route the retry.
package mrtr

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/mcp-gateway/gateway/internal/callerkey"
	"github.com/mcp-gateway/gateway/internal/seal"
	"github.com/mcp-gateway/gateway/internal/store"
)

const (
	// DefaultTTL is the default lifetime of a sealed state (the TS SDK uses
	// 600 s; spec §3 asks for a short expiry).
	DefaultTTL = 10 * time.Minute
	// MinTTL and MaxTTL bound Config.TTL.
	MinTTL = time.Second
	// MaxTTL keeps states short-lived, as spec §3 recommends.
	MaxTTL = 24 * time.Hour
	// ReplayKeyPrefix prefixes the nonce in keys passed to Replays.UseOnce.
	ReplayKeyPrefix = "mrtr/nonce/"
	// ReplicaSkew is how far apart the clocks of a gateway's replicas are tolerated (the
	// tolerance authz/dpop's ReplicaSkew states for DPoP): a record guarding a state (its
	// single-use key, an approval's decision, a connect flow's callback) is kept this much
	// longer than the expiry the state carries, by the writing replica's clock, so that a
	// replica whose clock runs behind, and takes the state for unexpired for that much longer,
	// still finds it (Keep).
	ReplicaSkew = 30 * time.Second
)

// Config configures a Codec.
type Config struct {
	// TTL is how long a sealed requestState stays valid after it is issued.
	// Zero means DefaultTTL (10 minutes); otherwise between MinTTL and MaxTTL.
	TTL time.Duration
	// MaxAnswersPerCaller bounds the single-use states one caller (issuer and subject) may
	// consume per TTL and ReplicaSkew: each leaves a replay record in the shared store for up
	// to that long, so
	// without it one caller answering rounds as fast as it can fills the store that every
	// caller's confirmations need. Zero means DefaultMaxAnswersPerCaller; at most
	// MaxMaxAnswersPerCaller. Counted only when Answers is set.
	MaxAnswersPerCaller int
	// Answers counts each caller's consumed states (Codec.Consume) with the store's replay
	// records, atomically across replicas when shared; nil counts nothing. When it is a
	// store.ReplayOnce it must be the store behind New's replays: the count and the state's
	// single-use key are then written there in one atomic step.
	Answers store.Replay
}

// Bounds of Config.MaxAnswersPerCaller.
const (
	// DefaultMaxAnswersPerCaller is about 16 answered rounds a second for a whole TTL of
	// 10 minutes: far above what people or agents answer, far below what fills a store.
	DefaultMaxAnswersPerCaller = 10000
	// MaxMaxAnswersPerCaller keeps one caller's records a small part of any store.
	MaxMaxAnswersPerCaller = 1000000
)

// Validate reports every problem in c without changing it.
func (c Config) Validate() error {
	var errs []error
	if c.TTL != 0 && (c.TTL < MinTTL || c.TTL > MaxTTL) {
		errs = append(errs, fmt.Errorf("%w: ttl %v must be between %v and %v", ErrInvalidConfig, c.TTL, MinTTL, MaxTTL))
	}
	if c.MaxAnswersPerCaller < 0 || c.MaxAnswersPerCaller > MaxMaxAnswersPerCaller {
		errs = append(errs, fmt.Errorf("%w: maxAnswersPerCaller %d must be between 0 (the default, %d) and %d",
			ErrInvalidConfig, c.MaxAnswersPerCaller, DefaultMaxAnswersPerCaller, MaxMaxAnswersPerCaller))
	}
	return errors.Join(errs...)
}

// Replays records single-use keys. UseOnce reports first=true the first time
// key is used within ttl and false afterwards. The gateway's in-memory and
// Redis stores implement it.
type Replays interface {
	UseOnce(ctx context.Context, key string, ttl time.Duration) (first bool, err error)
}

// Binding is what a retry must match for its requestState to be accepted.
type Binding struct {
	// Issuer and Subject identify the authenticated caller of the retry.
	Issuer, Subject string
	// Upstream is the backend the retry routes to.
	Upstream string
	// Method is the retry's JSON-RPC method.
	Method string
	// Name is the retry's namespaced tool or prompt name, or resource URI.
	Name string
	// ArgsDigest is Digest of the retry's arguments.
	ArgsDigest [32]byte
}

// Codec seals and opens requestState. It is immutable and safe for
// concurrent use.
type Codec struct {
	sealer  *seal.Sealer
	ttl     time.Duration
	replays Replays
	answers store.Replay       // nil: answers are not counted per caller
	budget  store.ReplayBudget // answers' budget per caller
	now     func() time.Time
}

// New returns a Codec sealing with sealer (use the seal.PurposeRequestState
// sealer), consuming single-use nonces in replays, and reading time from now
// (nil means time.Now).
func New(sealer *seal.Sealer, cfg Config, replays Replays, now func() time.Time) (*Codec, error) {
	var errs []error
	if err := cfg.Validate(); err != nil {
		errs = append(errs, err)
	}
	if sealer == nil {
		errs = append(errs, fmt.Errorf("%w: a sealer is required", ErrInvalidConfig))
	}
	if replays == nil {
		errs = append(errs, fmt.Errorf("%w: a replay store is required", ErrInvalidConfig))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if now == nil {
		now = time.Now
	}
	ttl := cfg.TTL
	if ttl == 0 {
		ttl = DefaultTTL
	}
	n := cfg.MaxAnswersPerCaller
	if n == 0 {
		n = DefaultMaxAnswersPerCaller
	}
	return &Codec{sealer: sealer, ttl: ttl, replays: replays, answers: cfg.Answers,
		budget: store.ReplayBudget{Count: n, Window: ttl + ReplicaSkew}, now: now}, nil
}

// Keep is how long, from now, a record guarding a state that expires at expiry must be kept:
// until ReplicaSkew past that expiry, so that no replica whose clock is within ReplicaSkew of
// now's still takes the state for unexpired once the record is gone. The expiry is the one the
// state carries (its issue time and lifetime, by the issuing replica's clock and TTL), not
// one derived from this replica's configuration, which may differ during a rolling update.
func Keep(expiry, now time.Time) time.Duration { return expiry.Add(ReplicaSkew).Sub(now) }

// Seal stamps st with a fresh random nonce, an issue time of now and an expiry of now+TTL
// (overwriting those fields) and returns the sealed token.
func (c *Codec) Seal(st State) (string, error) {
	tok, _, err := c.SealState(st)
	return tok, err
}

// SealState is Seal that also returns the state as sealed, with its nonce and expiry, for a
// caller that keeps something under the same nonce (the approval page).
func (c *Codec) SealState(st State) (string, State, error) {
	st.Issued = c.now()
	st.Expiry = st.Issued.Add(c.ttl)
	if _, err := rand.Read(st.Nonce[:]); err != nil {
		return "", State{}, fmt.Errorf("mrtr: reading random nonce: %w", err)
	}
	b, err := st.marshal()
	if err != nil {
		return "", State{}, err
	}
	tok, err := c.sealer.Seal(b)
	if err != nil {
		if errors.Is(err, seal.ErrOversized) && c.bindingTooLarge(st) {
			return "", State{}, fmt.Errorf("%w: %w", ErrUnsealable, ErrBindingTooLarge)
		}
		return "", State{}, fmt.Errorf("%w: %w", ErrUnsealable, err)
	}
	return tok, st, nil
}

// bindingTooLarge reports whether st, without a backend's state, is still too large to seal:
// then what it binds is too long (ErrBindingTooLarge), not what a backend sent. Only asked
// once a seal failed for its size.
func (c *Codec) bindingTooLarge(st State) bool {
	st.UpstreamState, st.HasUpstreamState = "", false
	b, err := st.marshal()
	if err != nil {
		return false
	}
	_, err = c.sealer.Seal(b)
	return errors.Is(err, seal.ErrOversized)
}

// Open authenticates token and checks it against the retry's binding. Every
// rejection matches ErrInvalidState and carries a Reason.
func (c *Codec) Open(token string, b Binding) (*State, error) {
	pt, err := c.sealer.Open(token)
	if err != nil {
		return nil, reject(sealReason(err), err)
	}
	st := new(State)
	if err := st.unmarshal(pt); err != nil {
		return nil, reject(ReasonMalformed, err)
	}
	switch {
	case !c.now().Before(st.Expiry):
		return nil, reject(ReasonExpired, nil)
	case st.Issuer != b.Issuer || st.Subject != b.Subject:
		return nil, reject(ReasonPrincipal, nil)
	case st.Upstream != b.Upstream || st.Method != b.Method || st.Name != b.Name:
		return nil, reject(ReasonTarget, nil)
	case st.ArgsDigest != b.ArgsDigest:
		return nil, reject(ReasonArguments, nil)
	}
	return st, nil
}

func sealReason(err error) string {
	switch {
	case errors.Is(err, seal.ErrOversized):
		return ReasonOversized
	case errors.Is(err, seal.ErrUnknownKey):
		return ReasonUnknownKey
	case errors.Is(err, seal.ErrTampered):
		return ReasonTampered
	}
	return ReasonMalformed
}

// Consume marks st's nonce used. The first call succeeds; any later call
// (on any replica sharing the store) fails with ErrInvalidState reason
// "replayed". A store failure returns ErrStoreUnavailable so the gateway
// fails closed with a retryable error. A caller past Config.MaxAnswersPerCaller gets an
// *OverBudgetError and its state is not recorded as used. Call it after Open and before acting.
// A state without a caller (sealed without authentication) is counted as one caller's: use
// ConsumeAs to count it under the client's key.
func (c *Codec) Consume(ctx context.Context, st *State) error { return c.ConsumeAs(ctx, st, "") }

// ConsumeAs is Consume counting a state without a caller (Issuer and Subject empty: the gateway
// runs without authentication) against client, the key of the client answering it
// (callerkey.Client of its address), so that each client has its own budget of answers rather
// than every client one between them. A state with a caller is counted against that caller
// whatever client says; an empty client counts it as Consume does.
func (c *Codec) ConsumeAs(ctx context.Context, st *State, client string) error {
	now := c.now()
	// Stores such as Redis PX count whole milliseconds; anything shorter is
	// as good as expired.
	if st.Expiry.Sub(now) < time.Millisecond {
		return reject(ReasonExpired, nil)
	}
	keep := Keep(st.Expiry, now)
	nonce := hex.EncodeToString(st.Nonce[:])
	if once, ok := c.answers.(store.ReplayOnce); ok {
		return c.claim(ctx, once, c.owner(st, client), ReplayKeyPrefix+nonce, c.issued(st), keep)
	}
	if err := c.countAnswer(ctx, st, client, nonce, keep); err != nil {
		return err
	}
	first, err := c.useOnce(ctx, ReplayKeyPrefix+nonce, c.issued(st), keep)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrStoreUnavailable, err)
	}
	if !first {
		return reject(ReasonReplayed, nil)
	}
	return nil
}

// answersOwner prefixes the caller whose answers Answers counts (store.Replay's owner): the
// gateway hands the same store to DPoP, whose proofs are counted under issuer#subject, and
// two budgets under one owner would share one counter and the window of whichever use opened
// it.
const answersOwner = "mrtr/answers/"

// OverBudgetError refuses a state because its caller consumed Config.MaxAnswersPerCaller states
// in the current window; nothing was recorded, so the same state may be used once the window
// ends, if it has not expired by then.
type OverBudgetError struct {
	// RetryAfter is when the caller's window ends.
	RetryAfter time.Duration
}

func (e *OverBudgetError) Error() string {
	return "mrtr: the caller answered too many rounds; retry after " + e.RetryAfter.String()
}

// issuedChecker is the check of mrtr.EpochGuard that a claim in one step (claim) asks first,
// and again once the claim is made (Kept).
type issuedChecker interface {
	Issued(ctx context.Context, issued time.Time) (bool, error)
	Kept(ctx context.Context, issued time.Time) (bool, error)
}

// issued is when st was issued: the time it carries, or for a state an earlier release sealed
// (which carries none) its expiry less this codec's TTL, as that release judged it.
func (c *Codec) issued(st *State) time.Time {
	if st.Issued.IsZero() {
		return st.Expiry.Add(-c.ttl)
	}
	return st.Issued
}

// claim records the answer of key (ReplayKeyPrefix and the nonce) against owner's budget and
// makes key single-use in one atomic step of the store: both, or neither. Two steps would lose
// an answer to a store failing between them: the retry the 503 invites would find the first
// record and be refused as a replay, although nothing ran. The epoch guard's check comes first;
// it writes nothing a retry could trip on. It is asked again after a first use (EpochGuard.Kept):
// a store that lost its memory in between took the claim in a memory without the earlier uses.
func (c *Codec) claim(ctx context.Context, once store.ReplayOnce, owner, key string, issued time.Time, keep time.Duration) error {
	g, guarded := c.replays.(issuedChecker)
	if guarded {
		if err := epochVerdict(g.Issued(ctx, issued)); err != nil {
			return err
		}
	}
	use, err := once.FirstUseOnce(ctx, owner, key, key, keep, c.budget)
	if err := c.answered(ctx, owner, use, err); err != nil || !guarded {
		return err
	}
	return epochVerdict(g.Kept(ctx, issued))
}

// epochVerdict maps the epoch guard's answer to Consume's errors: a state issued before the
// store's memory began is refused as a replay.
func epochVerdict(fresh bool, err error) error {
	switch {
	case err != nil:
		return fmt.Errorf("%w: %w", ErrStoreUnavailable, err)
	case !fresh:
		return reject(ReasonReplayed, nil)
	}
	return nil
}

// useOnce makes key single-use in Replays for keep (Keep) for a state issued at issued, by
// which the epoch guard judges it.
func (c *Codec) useOnce(ctx context.Context, key string, issued time.Time, keep time.Duration) (bool, error) {
	if g, ok := c.replays.(*EpochGuard); ok {
		return g.useOnce(ctx, key, issued, keep)
	}
	return c.replays.UseOnce(ctx, key, keep)
}

// owner is the owner (store.Replay's) st's answers are counted under.
func (c *Codec) owner(st *State, client string) string {
	// A state without a caller was counted under Of("", "") ("#") by every release so far, all
	// such states as one caller's; that key stays for one consumed without a client's key.
	if st.Issuer == "" && st.Subject == "" && client != "" {
		return answersOwner + client
	}
	return answersOwner + callerkey.Of(st.Issuer, st.Subject)
}

// answered maps the store's answer to a claim of owner's to Consume's errors.
func (c *Codec) answered(ctx context.Context, owner string, use store.Use, err error) error {
	switch {
	case err != nil:
		return fmt.Errorf("%w: %w", ErrStoreUnavailable, err)
	case use == store.UseAgain:
		return reject(ReasonReplayed, nil)
	case use == store.UseOverBudget:
		return &OverBudgetError{RetryAfter: store.BudgetFrees(ctx, c.answers, owner, c.budget.Window)}
	}
	return nil
}

// countAnswer, for Answers that cannot claim in one step (not a store.ReplayOnce), records
// st's nonce against its caller's budget before the nonce is made single-use: over the budget,
// nothing is recorded and the state stays usable (the store's script takes the record back).
// A replay is refused here already and costs the caller nothing. The single-use key of Replays
// is still written after it: it is what the epoch guard and replicas of earlier versions check.
func (c *Codec) countAnswer(ctx context.Context, st *State, client, nonce string, ttl time.Duration) error {
	if c.answers == nil {
		return nil
	}
	owner := c.owner(st, client)
	use, err := c.answers.FirstUse(ctx, owner, ReplayKeyPrefix+nonce, ttl, c.budget)
	return c.answered(ctx, owner, use, err)
}
