package authz

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcp-gateway/gateway/authz/dpop"
	"github.com/mcp-gateway/gateway/internal/seal"
	"github.com/mcp-gateway/gateway/internal/store"
)

// Reasons of DPoP failures besides the token's own (a closed set, safe as a metric label).
const (
	// ReasonDPoPProof is a proof that failed a check of RFC 9449 §4.3, or a missing or
	// duplicated DPoP header.
	ReasonDPoPProof = "dpop_proof"
	// ReasonDPoPNonce is a proof without the server nonce, or with an expired or forged one.
	ReasonDPoPNonce = "dpop_nonce"
	// ReasonDPoPReplay is a proof whose jti was already used.
	ReasonDPoPReplay = "dpop_replay"
	// ReasonDPoPBinding is a token presented the wrong way for its binding: a DPoP-bound token
	// as Bearer, a bearer token (or one bound to another key) with a proof, or a bearer token
	// where DPoP is required.
	ReasonDPoPBinding = "dpop_binding"
)

var (
	// ErrReplayUnavailable means the replay store could not be asked whether a proof was used
	// before: the request fails closed with 503, never an allow.
	ErrReplayUnavailable = errors.New("authz: DPoP replay store unavailable")
	// ErrProofBudget means the caller has recorded its budget of proofs against replay in the
	// current window (auth.dpop.maxProofsPerCaller): 429.
	ErrProofBudget = errors.New("authz: too many DPoP proofs from this caller")
)

// ReplayCache records proofs' jti (store.Replay; the memory store on one replica, Redis across
// replicas).
type ReplayCache interface {
	FirstUse(ctx context.Context, owner, id string, ttl time.Duration, b store.ReplayBudget) (store.Use, error)
	BudgetReset(ctx context.Context, owner string) (time.Duration, error)
}

// ReplaySince is a ReplayCache that also says when its memory began (see
// DPoPOptions.MemoryBegan), read in the same round trip as the record: a proof then costs the
// store one round trip, not two. When DPoPOptions.Replay implements it, MemoryBegan is not
// asked. began is read after the record, and only for a first use.
type ReplaySince interface {
	FirstUseSince(ctx context.Context, owner, id string, ttl time.Duration, b store.ReplayBudget) (u store.Use, began time.Time, err error)
}

// DPoPOptions are the runtime dependencies of DPoP (Options.DPoP), needed when an issuer
// accepts DPoP-bound tokens.
type DPoPOptions struct {
	// Replay records proofs' jti; required.
	Replay ReplayCache
	// MemoryBegan, when set, says when Replay's memory began. A store that lost its records (a
	// Redis restarted without its data or failed over to an empty instance, a process restarted
	// on the memory store) begins again, and a proof issued before that may have been used in
	// the lost memory: it is refused like a replay. It is asked after Replay, so a store that
	// lost its memory in between is seen. Its errors fail closed like Replay's.
	MemoryBegan func(ctx context.Context) (time.Time, error)
	// Keys seal server nonces; required with auth.dpop.nonce.required.
	Keys *seal.KeyRing
}

// dpopError is a failure answered with a DPoP challenge: of the proof (invalid_dpop_proof,
// use_dpop_nonce) or of the token as presented with it (invalid_token).
type dpopError struct {
	code   string // dpop.CodeInvalidProof, dpop.CodeUseNonce or ChallengeInvalidToken
	reason string // one of the ReasonDPoP* constants, when err is nil
	desc   string
	nonce  string // a fresh DPoP-Nonce for use_dpop_nonce
	err    error  // the token's own failure, if that is what this is
}

func (e *dpopError) Error() string {
	if e.err != nil {
		return "authz: dpop: " + e.err.Error()
	}
	return "authz: dpop: " + e.code + ": " + e.reason
}

func (e *dpopError) Unwrap() error {
	if e.err != nil {
		return e.err
	}
	return ErrInvalidToken
}

func bindingError(desc string) *dpopError {
	return &dpopError{code: ChallengeInvalidToken, reason: ReasonDPoPBinding, desc: desc}
}

// DPoPNonce returns the DPoP-Nonce a failed authentication's response carries (a
// use_dpop_nonce challenge), "" for any other error.
func DPoPNonce(err error) string {
	var de *dpopError
	if errors.As(err, &de) {
		return de.nonce
	}
	return ""
}

// dpopState is the compiled auth.dpop.
type dpopState struct {
	verifier *dpop.Verifier
	replay   ReplayCache
	began    func(ctx context.Context) (time.Time, error) // DPoPOptions.MemoryBegan
	since    ReplaySince                                  // replay, when it reads began itself
	budget   store.ReplayBudget
	algs     []string
	// bearer: some issuer accepts bearer tokens, so challenges name Bearer too.
	bearer bool
}

func newDPoPState(cfg Config, o DPoPOptions) (*dpopState, error) {
	if !cfg.DPoPUsed() {
		return nil, nil
	}
	if o.Replay == nil {
		return nil, errors.New("authz: DPoP needs a replay store")
	}
	vc := dpop.Config{Algorithms: cfg.DPoP.Algorithms, Window: cfg.DPoP.Window}
	if cfg.DPoP.Nonce.Required {
		ns, err := dpop.NewNonces(o.Keys, cfg.DPoP.Nonce.Lifetime)
		if err != nil {
			return nil, fmt.Errorf("authz: DPoP nonces: %w", err)
		}
		vc.Nonces = ns
	}
	v, err := dpop.NewVerifier(vc)
	if err != nil {
		return nil, err
	}
	count := cfg.DPoP.MaxProofsPerCaller
	if count == 0 {
		count = DefaultMaxProofsPerCaller
	}
	since, _ := o.Replay.(ReplaySince)
	st := &dpopState{verifier: v, replay: o.Replay, began: o.MemoryBegan, since: since, algs: v.Algorithms(),
		budget: store.ReplayBudget{Count: count, Window: 2*v.Window() + time.Second}}
	for _, is := range cfg.Issuers {
		st.bearer = st.bearer || cfg.dpopMode(is) != DPoPRequired
	}
	return st, nil
}

// DPoPRequest is a request presenting its token with the DPoP scheme.
type DPoPRequest struct {
	// Token is the access token of `Authorization: DPoP <token>`.
	Token string
	// Proofs are the values of the request's DPoP headers: exactly one is accepted.
	Proofs []string
	// Method is the request's HTTP method, URL the endpoint's public URL in
	// dpop.NormalizeURL form.
	Method, URL string
}

// AuthenticateDPoP verifies a DPoP-bound token and its proof (RFC 9449 §4.3, §7.1) and records
// the proof's jti against replay. The proof is checked first, then the token, then the binding
// (cnf.jkt is the proof key's thumbprint), then replay. nonce, when not empty, is a fresh server
// nonce for the response's DPoP-Nonce. Errors: ErrNoToken where no issuer accepts DPoP-bound
// tokens (the scheme is not one the gateway takes), ErrInvalidToken (a DPoP challenge, DPoPNonce
// for use_dpop_nonce), ErrIssuerUnavailable and ErrReplayUnavailable (5xx), ErrProofBudget (429).
func (s *Service) AuthenticateDPoP(ctx context.Context, req DPoPRequest) (p *Principal, nonce string, err error) {
	now := s.auth.now()
	p, proof, err := s.proven(ctx, req, now, true)
	if err != nil {
		return nil, "", err
	}
	if err := s.recordProof(ctx, p, proof, now); err != nil {
		return nil, "", err
	}
	if ns := s.dpop.verifier.Nonces(); ns != nil && ns.Stale(proof.NonceIssued, now) {
		nonce, _ = ns.Issue(now) // best effort: the request is good without it
	}
	return p, nonce, nil
}

// AuthenticateProven is AuthenticateDPoP for a request whose proof passed it when the request
// came, judged again later: a GET stream once a reload replaced the configuration that admitted
// it. Everything is checked as the configuration now checks it (the scheme, the proof's alg,
// key, signature, htm and htu, the token, its issuer's DPoP mode, the binding) except what no
// proof passes for long, its iat and nonce; nothing is recorded against replay. Its errors are
// AuthenticateDPoP's.
func (s *Service) AuthenticateProven(ctx context.Context, req DPoPRequest) (*Principal, error) {
	p, _, err := s.proven(ctx, req, s.auth.now(), false)
	return p, err
}

// proven checks a DPoP request before its replay record: the token's syntax, the proof (its
// iat and nonce only when fresh), the token, then the binding (the issuer takes DPoP-bound
// tokens and cnf.jkt is the proof key's thumbprint).
func (s *Service) proven(ctx context.Context, req DPoPRequest, now time.Time, fresh bool) (*Principal, *dpop.Proof, error) {
	if s.dpop == nil {
		return nil, nil, errOtherScheme
	}
	if req.Token == "" || len(req.Token) > maxTokenBytes || !isB64Token(req.Token) {
		return nil, nil, &dpopError{code: ChallengeInvalidToken, err: invalid(ReasonMalformed, "DPoP token syntax")}
	}
	sum := s.auth.tokenSum(req.Token) // the proof's ath and the token cache's key: one hash
	if knownOnly(ctx) && !s.auth.known(sum) {
		// Before the proof's signature: that costs as much as the token's.
		return nil, nil, ErrNotVerified
	}
	proof, err := s.verifyProof(req, now, &sum, fresh)
	if err != nil {
		return nil, nil, err
	}
	p, err := s.auth.authenticateSum(ctx, req.Token, sum)
	if err != nil {
		if errors.Is(err, ErrInvalidToken) {
			err = &dpopError{code: ChallengeInvalidToken, err: err}
		}
		return nil, nil, err
	}
	switch {
	case p.dpop == DPoPOff:
		return nil, nil, bindingError("This issuer's tokens are not accepted with DPoP")
	case p.JKT == "":
		return nil, nil, bindingError("The access token is not DPoP-bound")
	case p.JKT != proof.JKT:
		return nil, nil, bindingError("The access token is bound to another key")
	}
	return p, proof, nil
}

func (s *Service) verifyProof(req DPoPRequest, now time.Time, sum *[sha256.Size]byte, fresh bool) (*dpop.Proof, error) {
	d := s.dpop
	if len(req.Proofs) != 1 {
		return nil, fromProofError(dpop.HeaderError(len(req.Proofs)), nil, now)
	}
	verify := d.verifier.VerifyAgain
	if fresh {
		verify = d.verifier.Verify
	}
	proof, err := verify(req.Proofs[0], dpop.Request{Method: req.Method, URL: req.URL, AccessToken: req.Token, TokenSum: sum, Now: now})
	if err != nil {
		return nil, fromProofError(err, d.verifier.Nonces(), now)
	}
	return proof, nil
}

func fromProofError(err error, ns *dpop.Nonces, now time.Time) error {
	var pe *dpop.Error
	if !errors.As(err, &pe) {
		return &dpopError{code: dpop.CodeInvalidProof, reason: ReasonDPoPProof, desc: "The DPoP proof is invalid"}
	}
	de := &dpopError{code: pe.Code, reason: ReasonDPoPProof, desc: pe.Description}
	if pe.Code == dpop.CodeUseNonce && ns != nil {
		de.reason = ReasonDPoPNonce
		de.nonce, _ = ns.Issue(now)
	}
	return de
}

// recordProof refuses a proof whose jti its key used before, until the proof could no longer
// pass the iat check on any replica: this one's window, plus dpop.ReplicaSkew for a replica whose
// clock runs behind, which takes the iat for that much longer. The caller (issuer and subject)
// owns the record, so one caller's proofs count against its own budget only.
func (s *Service) recordProof(ctx context.Context, p *Principal, proof *dpop.Proof, now time.Time) error {
	d := s.dpop
	ttl := proof.IssuedAt.Add(d.verifier.Window()+dpop.ReplicaSkew).Sub(now) + time.Second
	owner := p.CallerKey()
	use, began, err := d.firstUse(ctx, owner, proof.JKT+"."+proof.JTI, max(ttl, time.Second))
	switch {
	case err != nil:
		return fmt.Errorf("%w: %w", ErrReplayUnavailable, err)
	case use == store.UseAgain:
		return &dpopError{code: dpop.CodeInvalidProof, reason: ReasonDPoPReplay, desc: "The DPoP proof was already used"}
	case use == store.UseOverBudget:
		// The budget frees when the window its first proof opened ends (store.BudgetFrees).
		return &budgetError{retryAfter: store.BudgetFrees(ctx, d.replay, owner, d.budget.Window)}
	}
	if proof.IssuedAt.Before(began.Truncate(time.Second)) {
		return &dpopError{code: dpop.CodeInvalidProof, reason: ReasonDPoPReplay,
			desc: "The DPoP proof is older than the gateway's record of used proofs; send a new one"}
	}
	return nil
}

// firstUse records the proof's id and, for a first use, says when the replay store's memory
// began (zero when nobody can say: no MemoryBegan). A proof issued before then is refused like
// a replay: its first use may be among the records the store lost. iat has whole seconds, and
// the proofs of the second the memory began pass: refusing them would refuse every client for
// up to a second after each start of a new store (on the memory store, each start of the
// process). With a ReplaySince store both come in one round trip; otherwise MemoryBegan is
// asked after the record, so that a store that lost its memory in between is seen. Errors of
// either fail closed.
func (d *dpopState) firstUse(ctx context.Context, owner, id string, ttl time.Duration) (store.Use, time.Time, error) {
	if d.since != nil {
		return d.since.FirstUseSince(ctx, owner, id, ttl, d.budget)
	}
	use, err := d.replay.FirstUse(ctx, owner, id, ttl, d.budget)
	if err != nil || use != store.UseFirst || d.began == nil {
		return use, time.Time{}, err
	}
	began, err := d.began(ctx)
	return use, began, err
}

// budgetError is an ErrProofBudget that knows when the caller's budget frees (RetryAfter).
type budgetError struct{ retryAfter time.Duration }

func (e *budgetError) Error() string { return ErrProofBudget.Error() }
func (e *budgetError) Unwrap() error { return ErrProofBudget }

// AuthenticateBearer is Authenticate for a token presented with the Bearer scheme: a DPoP-bound
// token is refused (RFC 9449 §7.2: its proof of possession would be skipped), as is any token
// of an issuer whose tokens require DPoP. Whether DPoP is on or not, it costs two comparisons.
func (s *Service) AuthenticateBearer(ctx context.Context, raw string) (*Principal, error) {
	p, err := s.auth.Authenticate(ctx, raw)
	switch {
	case err != nil:
		return nil, err
	case p.JKT != "":
		return nil, bindingError("The access token is DPoP-bound: present it with the DPoP scheme and a proof")
	case p.dpop == DPoPRequired:
		return nil, bindingError("This resource requires a DPoP-bound access token")
	}
	return p, nil
}

// BearerAccepted reports whether some issuer's tokens are accepted with the Bearer scheme: false
// only where every issuer requires DPoP-bound tokens, which then come with the DPoP scheme.
func (s *Service) BearerAccepted() bool { return s.dpop == nil || s.dpop.bearer }

// DPoPChallenge is the challenge of a call that d, a rule requiring DPoP (dpop: required),
// allows, from a caller who presented a bearer token. Its scope is every scope the rule needs,
// what the DPoP-bound token must carry for this operation (MCP authorization: the 401 scope is
// authoritative for the operation), or ScopesSupported for a rule that needs none.
func (s *Service) DPoPChallenge(d Decision) Challenge {
	c := s.dpopChallenge(ChallengeInvalidToken, "This operation requires a DPoP-bound access token")
	if len(d.RequiredScopes) > 0 {
		c.Scopes = d.RequiredScopes
	}
	return c
}

// InScheme returns c, a challenge decided after authentication (a token for another endpoint,
// a scope to step up to), in the DPoP scheme with the accepted algorithms for a token that came
// with a proof, so a DPoP client gets the challenge it reads (RFC 9449 §7.1); else c unchanged.
func (s *Service) InScheme(c Challenge, withProof bool) Challenge {
	if withProof && s.dpop != nil {
		c.Scheme, c.Algs = dpop.Scheme, s.dpop.algs
	}
	return c
}

func (s *Service) dpopChallenge(code, desc string) Challenge {
	c := Challenge{Scheme: dpop.Scheme, Error: code, Description: desc, ResourceMetadata: s.metadataURL,
		Scopes: s.metadata.ScopesSupported}
	if s.dpop != nil {
		c.Algs = s.dpop.algs
	}
	return c
}

// Unauthorized returns the 401 challenges for an authentication error, in order: a DPoP failure
// gets a DPoP challenge with its code; any other failure the Bearer challenge (without an error
// code for ErrNoToken, with invalid_token and a fixed description per Reason otherwise), followed
// by a DPoP challenge naming the accepted algorithms when DPoP is on. Where every issuer
// requires DPoP the Bearer challenge is left out. Every one carries resource_metadata and, as
// scope, ScopesSupported (MCP authorization: scope SHOULD be present on 401), DPoP failures
// included. Do not use it for ErrIssuerUnavailable,
// ErrReplayUnavailable or ErrProofBudget, which are not 401.
func (s *Service) Unauthorized(err error) []Challenge {
	var de *dpopError
	if errors.As(err, &de) && s.dpop != nil {
		desc := de.desc
		if de.err != nil {
			desc = describe(Reason(de.err))
		}
		return []Challenge{s.dpopChallenge(de.code, desc)}
	}
	c := Challenge{Scopes: s.metadata.ScopesSupported, ResourceMetadata: s.metadataURL}
	if errors.As(err, &de) && de.err == nil {
		c.Error, c.Description = ChallengeInvalidToken, de.desc
	} else if errors.Is(err, ErrInvalidToken) {
		c.Error, c.Description = ChallengeInvalidToken, describe(Reason(err))
	}
	switch {
	case s.dpop == nil:
		return []Challenge{c}
	case !s.dpop.bearer:
		return []Challenge{s.dpopChallenge(c.Error, c.Description)}
	}
	return []Challenge{c, s.dpopChallenge("", "")}
}

// dpopMetadata fills the DPoP members of the protected resource metadata (RFC 9449 §5.2 as
// registered for RFC 9728).
func dpopMetadata(md *ProtectedResourceMetadata, cfg Config, st *dpopState) {
	if st == nil {
		return
	}
	md.DPoPSigningAlgValuesSupported = st.algs
	md.DPoPBoundAccessTokensRequired = cfg.dpopRequired()
}

// algsParam is the algs challenge parameter: space-delimited algorithm names.
func algsParam(algs []string) string { return strings.Join(algs, " ") }
