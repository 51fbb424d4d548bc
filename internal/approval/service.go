package approval

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/mcp-gateway/gateway/internal/seal"
	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/internal/webpage"
)

// Refusal reasons: a closed set, safe as a metric label.
const (
	RefusedWrongUser      = "wrong_user"
	RefusedExpired        = "expired"
	RefusedUnknown        = "unknown"
	RefusedCSRF           = "csrf"
	RefusedDecided        = "already_decided"
	RefusedNoSession      = "no_session"
	RefusedSignIn         = "sign_in_failed"
	RefusedBadRequest     = "bad_request"
	RefusedUnavailable    = "store_unavailable"
	RefusedIssuerDown     = "issuer_unavailable"
	RefusedOriginMismatch = "origin"
	RefusedTooSoon        = "too_soon"
)

// RefusalReasons returns the closed set of refusal reasons, for pre-registering metrics.
func RefusalReasons() []string {
	return []string{RefusedWrongUser, RefusedExpired, RefusedUnknown, RefusedCSRF, RefusedDecided,
		RefusedNoSession, RefusedSignIn, RefusedBadRequest, RefusedUnavailable, RefusedIssuerDown,
		RefusedOriginMismatch, RefusedTooSoon}
}

// Observer receives the page's events for metrics. Every method must be cheap and
// non-blocking; metrics.Approval implements it.
type Observer interface {
	PageShown()
	SignIn(ok bool)
	Decided(v Verdict)
	Refused(reason string)
}

// Deps are what the page needs from the gateway.
type Deps struct {
	// Store is the shared store: calls and decisions are visible to every replica. Required.
	Store Store
	// Keys seal the records and cookies; every replica must hold the same keys. Its
	// MaxTokenBytes must be at least MaxRecordBytes. Required.
	Keys *seal.KeyRing
	// Logger receives the audit lines. Required.
	Logger *slog.Logger
	// Observer records metrics; nil records nothing.
	Observer Observer
	// Clock returns the current time; default time.Now.
	Clock func() time.Time
	// HTTPClient reaches the issuer; default a client with a 10 s timeout that goes only where
	// internal/egress allows (webpage.NewSignIn).
	HTTPClient *http.Client
}

// Service is the approval page and the ledger behind it. It is safe for concurrent use.
type Service struct {
	cfg Config
	// public is the path the browser reaches the page at (Config.publicPath).
	public string
	ledger ledger
	signin *webpage.SignIn
	log    *slog.Logger
	obs    Observer
	now    func() time.Time
}

// New builds the page from a validated configuration (Config.WithDefaults, Config.Validate).
func New(cfg Config, deps Deps) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if deps.Store == nil || deps.Keys == nil || deps.Logger == nil {
		return nil, errors.New("approval: Store, Keys and Logger are required")
	}
	s := &Service{cfg: cfg, public: cfg.publicPath(), log: deps.Logger, obs: deps.Observer, now: deps.Clock}
	if s.now == nil {
		s.now = time.Now
	}
	if s.obs == nil {
		s.obs = nopObserver{}
	}
	s.signin = webpage.NewSignIn(webpage.SignInConfig{Issuer: cfg.Issuer, ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret,
		RedirectURL: cfg.redirectURL(), SessionTTL: cfg.SessionTTL}, deps.Keys, deps.HTTPClient, s.now)
	s.ledger = ledger{store: deps.Store, calls: deps.Keys.Sealer(purposeCall),
		decisions: deps.Keys.Sealer(purposeDecision), now: s.now,
		budget: store.Budget{Count: cfg.MaxPendingPerCaller, Bytes: cfg.MaxPendingBytesPerCaller}}
	if max := s.ledger.calls.MaxTokenBytes(); max < MaxRecordBytes {
		return nil, fmt.Errorf("approval: the key ring seals at most %d bytes; %d needed", max, MaxRecordBytes)
	}
	return s, nil
}

// Path is the URL path prefix the page is served under.
func (s *Service) Path() string { return s.cfg.Path }

// PageURL is the page of the call with id.
func (s *Service) PageURL(id string) string { return s.cfg.pageURL(id) }

// Issuer is the issuer users sign in with: only its callers can be asked on the page.
func (s *Service) Issuer() string { return s.cfg.Issuer }

// Ask keeps c, sealed, in the shared store until c.Expiry or Done, so the page can show it on
// any replica, and returns the page's URL. An error wrapping ErrUnavailable means the store
// could not take it (fail closed: do not ask); ErrTooLarge that the arguments do not fit a
// record or the page (MaxPageBytes);
// ErrTooManyPending that the caller already has its budget of calls waiting.
func (s *Service) Ask(ctx context.Context, c Call) (string, error) {
	if !validID(c.ID) {
		return "", errors.New("approval: call id is not a 16-byte hex nonce")
	}
	if c.Asked.IsZero() {
		c.Asked = s.now().UTC()
	}
	if err := s.ledger.put(ctx, c, s.fitsPage); err != nil {
		return "", err
	}
	return s.cfg.pageURL(c.ID), nil
}

// Verdict returns what the page recorded for call id, counting only a decision bound to
// digest, or Finished once the call's retry was used (Finish), or Forgotten when the store
// knows neither a decision nor the call (it lost its memory: ask the call afresh). An error
// wraps ErrUnavailable: the caller fails closed.
func (s *Service) Verdict(ctx context.Context, id string, digest []byte) (Verdict, error) {
	v, err := s.ledger.verdict(ctx, id, digest)
	if err != nil || v != Undecided {
		return v, err
	}
	// Undecided, unless the call is gone too: its page would tell the user the link is unknown
	// while the retry sent them there again and again until the state expired.
	switch known, err := s.ledger.known(ctx, id); {
	case err != nil:
		return Undecided, err
	case !known:
		return Forgotten, nil
	}
	return Undecided, nil
}

// Finish forgets call id of the caller issuer and subject, which expires at expiry, once its
// retry was used, denied, or declined or cancelled in the client: the page no longer knows it
// (so the user's "no" in the client is as final as on the page), the call no longer counts
// against the caller's budget of calls waiting for approval, and Verdict says Finished. An
// error wraps ErrUnavailable; the records then expire with the call.
func (s *Service) Finish(ctx context.Context, id, issuer, subject string, expiry time.Time) error {
	return s.ledger.finish(ctx, id, issuer, subject, expiry)
}

// CallRef is a short, one-way reference to call id for logs, which correlates the ask, the
// decision and the retry without writing the nonce itself.
func CallRef(id string) string {
	sum := sha256.Sum256([]byte("approval call\x00" + id))
	return hex.EncodeToString(sum[:8])
}

// CloseIdleConnections closes the idle connections of the client the page's sign-in reaches
// its issuer with (webpage.SignIn.CloseIdleConnections), for a replaced configuration once it
// retires.
func (s *Service) CloseIdleConnections() { s.signin.CloseIdleConnections() }

// SignIn is the page's sign-in, which the gateway's other pages share: a user signed in on one
// is signed in on all, and the sign-in callback is this page's.
func (s *Service) SignIn() *webpage.SignIn { return s.signin }

type nopObserver struct{}

func (nopObserver) PageShown()      {}
func (nopObserver) SignIn(bool)     {}
func (nopObserver) Decided(Verdict) {}
func (nopObserver) Refused(string)  {}
