package approval

import (
	"context"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcp-gateway/gateway/internal/callerkey"
	"github.com/mcp-gateway/gateway/internal/seal"
	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/mrtr"
)

// Store is the part of the gateway's shared store the page uses (store.Store has it).
type Store interface {
	UseOnce(ctx context.Context, key string, ttl time.Duration) (first bool, err error)
	Get(ctx context.Context, key string) ([]byte, bool, error)
	Set(ctx context.Context, key string, value []byte, ttl time.Duration) error
	SetNX(ctx context.Context, key string, value []byte, ttl time.Duration) (stored bool, current []byte, err error)
	Delete(ctx context.Context, key string) error
	Hold(ctx context.Context, key, item string, size int64, ttl time.Duration, b store.Budget) (bool, error)
	Release(ctx context.Context, key, item string) error
}

// Sealing purposes: each kind of sealed value opens only as itself, so a session cookie cannot
// be presented as a decision or a call record.
const (
	purposeCall     = "mcp-gateway/approval-call/v1"
	purposeDecision = "mcp-gateway/approval-decision/v1"
)

// Store key prefixes. The store hashes keys, so ids never reach it in clear.
const (
	keyCall     = "approval/call/"
	keyDecided  = "approval/decided/"
	keyDecision = "approval/decision/"
	// keyPending is a caller's budget of calls waiting for the page (issuer#subject follows).
	keyPending = "approval/pending/"
)

// MaxRecordBytes bounds a sealed call record, and so the arguments a call needing approval may
// carry: the store keeps it until the call expires.
const MaxRecordBytes = 1 << 20

// Errors of the ledger.
var (
	// ErrUnavailable wraps every failure of the shared store: callers fail closed.
	ErrUnavailable = errors.New("approval: store unavailable")
	// ErrUnknown means no call is waiting under that id (never asked, or expired).
	ErrUnknown = errors.New("approval: unknown or expired call")
	// ErrDecided means the call already has a decision; the first one stands.
	ErrDecided = errors.New("approval: already decided")
	// ErrTooLarge means the call's arguments do not fit a record.
	ErrTooLarge = errors.New("approval: arguments too large for the approval page")
	// ErrTooManyPending means the caller already has as many calls, or bytes of calls, waiting
	// for the page as its budget allows; nothing was stored.
	ErrTooManyPending = errors.New("approval: too many calls of this caller wait for approval")
)

// Call is a tool call waiting for the user's decision: what the page shows and what binds the
// decision. It is kept sealed in the shared store until Expiry.
type Call struct {
	// ID is the requestState nonce, hex-encoded; the page's URL names it.
	ID string `json:"id"`
	// Issuer and Subject identify the caller, who alone may decide.
	Issuer  string `json:"iss"`
	Subject string `json:"sub"`
	// Upstream is the backend; Tool the client-facing tool name; UpstreamTool the backend's.
	Upstream     string `json:"upstream"`
	Tool         string `json:"tool"`
	UpstreamTool string `json:"upstreamTool"`
	// Title and Description are the tool's: as pinned when Pinned is set (docs/pinning.md),
	// otherwise as the caller's tool list showed them when the gateway asked; empty when
	// unknown. They are shown, never trusted.
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	// Pinned reports that Title and Description are the tool's pinned definition, what an
	// operator approved, rather than what the backend lists now.
	Pinned bool `json:"pinned,omitempty"`
	// Drift names the classes by which the tool's live definition differs from its pin,
	// comma-separated ("" when it matches or the tool is not pinned): the page warns that the
	// tool changed since it was pinned.
	Drift string `json:"drift,omitempty"`
	// Arguments are the call's arguments exactly as the client sent them.
	Arguments json.RawMessage `json:"args"`
	// Forwarded are the other members of the call's params that reach the backend with the
	// arguments and that Digest binds too (the client's own _meta members, members the gateway
	// does not know), as one object; nil when there are none. The page shows them.
	Forwarded json.RawMessage `json:"fwd,omitempty"`
	// Digest is the digest the decision is bound to: of the canonical arguments (mrtr.Digest),
	// with Forwarded when there are any.
	Digest []byte `json:"digest"`
	// Client is the clientInfo the call declared, for display only (clients can claim any name).
	Client string `json:"client,omitempty"`
	// Asked is when the gateway asked; Expiry when the call's requestState stops being valid.
	Asked  time.Time `json:"asked"`
	Expiry time.Time `json:"exp"`
}

// Verdict is the recorded outcome of a call.
type Verdict string

// Verdicts.
const (
	// Undecided: nothing recorded yet.
	Undecided Verdict = ""
	// Approved: the user approved this call with these arguments.
	Approved Verdict = "approved"
	// Denied: the user denied it.
	Denied Verdict = "denied"
	// Finished: the call's retry was used, denied or declined in the client; the page no longer
	// knows the call, and a retry presenting its state again is a replay.
	Finished Verdict = "finished"
	// Forgotten: the store holds neither the call nor a decision for it, although its state is
	// still valid: the store lost its memory (a Redis restarted empty, a failover) or dropped
	// the record. The page cannot show the call any more, so its retry must be asked afresh,
	// with a new page. Service.Verdict's answer only; never recorded.
	Forgotten Verdict = "forgotten"
)

// decision is the sealed value recorded once per call.
type decision struct {
	ID      string    `json:"id"`
	Digest  []byte    `json:"digest"`
	Verdict Verdict   `json:"verdict"`
	By      string    `json:"by"`
	At      time.Time `json:"at"`
}

// ledger keeps calls and decisions in the shared store, sealed, each caller's waiting calls
// within its budget.
type ledger struct {
	store     Store
	calls     *seal.Sealer
	decisions *seal.Sealer
	budget    store.Budget
	now       func() time.Time
}

func pendingKey(issuer, subject string) string { return keyPending + callerkey.Of(issuer, subject) }

// put keeps c until it expires, within its caller's budget; fits, asked once c has its place in
// the budget (so that a caller over it costs no more than the refusal), says whether the page
// can show c, and c is given its place back when it cannot.
func (l *ledger) put(ctx context.Context, c Call, fits func(Call) bool) error {
	b, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("approval: encoding call: %w", err)
	}
	tok, err := l.calls.Seal(b)
	if err != nil {
		if errors.Is(err, seal.ErrOversized) {
			return ErrTooLarge
		}
		return fmt.Errorf("approval: sealing call: %w", err)
	}
	ttl := c.Expiry.Sub(l.now())
	if ttl < time.Millisecond {
		return ErrUnknown
	}
	owner := pendingKey(c.Issuer, c.Subject)
	switch held, err := l.store.Hold(ctx, owner, c.ID, int64(len(tok)), ttl, l.budget); {
	case err != nil:
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	case !held:
		return ErrTooManyPending
	case !fits(c):
		_ = l.store.Release(ctx, owner, c.ID)
		return ErrTooLarge
	}
	if err := l.store.Set(ctx, keyCall+c.ID, []byte(tok), ttl); err != nil {
		_ = l.store.Release(ctx, owner, c.ID)
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return nil
}

// finish forgets call id of issuer and subject, whose retry was used, denied or declined: its
// record goes, its decision becomes Finished (small, kept as decide keeps a decision, so that a
// replayed retry is told apart from one still waiting), and its share of the caller's budget is given back.
// The page then knows the call no more, so nothing can be decided for it afterwards.
func (l *ledger) finish(ctx context.Context, id, issuer, subject string, expiry time.Time) error {
	ttl := max(mrtr.Keep(expiry, l.now()), time.Millisecond)
	b, err := json.Marshal(decision{ID: id, Verdict: Finished, At: l.now().UTC()})
	if err != nil {
		return fmt.Errorf("approval: encoding decision: %w", err)
	}
	tok, err := l.decisions.Seal(b)
	if err != nil {
		return fmt.Errorf("approval: sealing decision: %w", err)
	}
	err = errors.Join(l.store.Set(ctx, keyDecision+id, []byte(tok), ttl), l.store.Delete(ctx, keyCall+id),
		l.store.Release(ctx, pendingKey(issuer, subject), id))
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return nil
}

func (l *ledger) load(ctx context.Context, id string) (Call, error) {
	raw, ok, err := l.store.Get(ctx, keyCall+id)
	if err != nil {
		return Call{}, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	if !ok {
		return Call{}, ErrUnknown
	}
	pt, err := l.calls.Open(string(raw))
	if err != nil {
		return Call{}, fmt.Errorf("%w: %w", ErrUnknown, err)
	}
	var c Call
	if err := json.Unmarshal(pt, &c); err != nil || c.ID != id {
		return Call{}, ErrUnknown
	}
	return c, nil
}

// decide records v for c once. A second decision, on any replica, gets ErrDecided.
func (l *ledger) decide(ctx context.Context, c Call, v Verdict, by string) error {
	now := l.now()
	if c.Expiry.Sub(now) < time.Millisecond {
		return ErrUnknown
	}
	// Kept past the expiry the call's state carries by the replicas' tolerated skew: a replica
	// whose clock runs behind this one's takes the state for valid that much longer, and must
	// still find this decision, the first one, there.
	ttl := mrtr.Keep(c.Expiry, now)
	b, err := json.Marshal(decision{ID: c.ID, Digest: c.Digest, Verdict: v, By: by, At: l.now().UTC()})
	if err != nil {
		return fmt.Errorf("approval: encoding decision: %w", err)
	}
	tok, err := l.decisions.Seal(b)
	if err != nil {
		return fmt.Errorf("approval: sealing decision: %w", err)
	}
	// The claim is what replicas of the previous release check before they record; the
	// decision itself is written only where none is, so it is the one decision whichever
	// replica writes it. A claim whose decision is missing was made by a decide that failed
	// before recording (the page said nothing was recorded): this one records instead, so
	// the user's next try is not refused as "already decided" with nothing decided. A
	// finished call's record holds Finished, so nothing is decided for it afterwards.
	if _, err := l.store.UseOnce(ctx, keyDecided+c.ID, ttl); err != nil {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	stored, _, err := l.store.SetNX(ctx, keyDecision+c.ID, []byte(tok), ttl)
	switch {
	case err != nil:
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	case !stored:
		return ErrDecided
	}
	return nil
}

// verdict returns the decision recorded for id, if it is bound to digest, or Finished. A
// decision whose seal does not open, or that names another id or digest, counts as none.
func (l *ledger) verdict(ctx context.Context, id string, digest []byte) (Verdict, error) {
	raw, ok, err := l.store.Get(ctx, keyDecision+id)
	if err != nil {
		return Undecided, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	if !ok {
		return Undecided, nil
	}
	pt, err := l.decisions.Open(string(raw))
	if err != nil {
		return Undecided, nil
	}
	var d decision
	if json.Unmarshal(pt, &d) != nil || d.ID != id {
		return Undecided, nil
	}
	switch {
	case d.Verdict == Finished:
		return Finished, nil
	case subtle.ConstantTimeCompare(d.Digest, digest) != 1:
		return Undecided, nil
	case d.Verdict == Approved, d.Verdict == Denied:
		return d.Verdict, nil
	}
	return Undecided, nil
}

// known reports whether the store still holds call id's record (load's, without opening it).
func (l *ledger) known(ctx context.Context, id string) (bool, error) {
	_, ok, err := l.store.Get(ctx, keyCall+id)
	if err != nil {
		return false, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return ok, nil
}

// validID reports whether id looks like a hex-encoded 16-byte nonce.
func validID(id string) bool {
	if len(id) != 32 {
		return false
	}
	_, err := hex.DecodeString(id)
	return err == nil
}
