package authz

import (
	"context"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"golang.org/x/sync/singleflight"

	"github.com/mcp-gateway/gateway/authz/dpop"
	"github.com/mcp-gateway/gateway/internal/configerr"
)

// maxJWKSBytes bounds a key-set or discovery response.
const maxJWKSBytes = 1 << 20

// failureKey carries a *failureSlot through go-oidc's Verify into our key
// set. go-oidc formats key-set errors with %v, which loses the error chain,
// so the key set records its typed error here for Authenticate to read; and
// go-oidc does not say which key verified a token, so the key set records
// that here too (keyStamp).
type failureKey struct{}

type failureSlot struct {
	err error
	key string // the keyIdentity of the key that verified the signature; "" when it has none
}

// verifiedBy records in ctx's slot that key verified the token's signature.
func verifiedBy(ctx context.Context, key *jose.JSONWebKey) {
	if slot, ok := ctx.Value(failureKey{}).(*failureSlot); ok {
		if id, sure := keyIdentity(key); sure {
			slot.key = id
		}
	}
}

func fail(ctx context.Context, err error) error {
	if slot, ok := ctx.Value(failureKey{}).(*failureSlot); ok {
		slot.err = err
	}
	return err
}

// keySet is an oidc.KeySet over a remote JWKS. Unlike oidc.RemoteKeySet it
// reports typed errors (unknown key vs bad signature vs fetch failure), limits
// how often an unknown kid may trigger a refetch, re-fetches a set older than
// maxAge, and reads time from the injected clock.
//
// A token whose kid is not in the cached set is refused as unknown_key (a
// 401) only when the answer is known: a key set fetched after the token
// arrived, or one fetched after the token was issued, lacks the kid. While the
// set cannot be refreshed (the issuer is failing, or refetches are rate
// limited) the kid may belong to a key the issuer has just rotated in, so the
// answer is ErrIssuerUnavailable (a 503 with Retry-After), never a 401 that
// would make a client throw its good token away. Refetches stay limited to
// one per minRefresh whatever kids callers send, so random kids cannot make
// the gateway hammer the issuer; they only get 503s until the next refetch
// is allowed, then a definitive 401.
type keySet struct {
	url          string
	client       *http.Client
	now          func() time.Time
	algs         []jose.SignatureAlgorithm
	minRefresh   time.Duration
	maxAge       time.Duration
	fetchTimeout time.Duration
	skew         time.Duration // allowance for the issuer's clock when reading iat
	// life, when set, is the issuer's: a fetch, detached from its callers, ends with it.
	life context.Context

	group     singleflight.Group
	mu        sync.RWMutex
	keys      []jose.JSONWebKey
	fetchedAt time.Time // when the last successful fetch started
	triedAt   time.Time // when the last attempt ended
	lastErr   error     // the last attempt's failure, nil after a success
	// beforeFlight, when set (tests only), runs before fetch joins or starts a flight.
	beforeFlight func()
	// removals counts the fetches that found a key gone (keyStamp); staleAt is fetchedAt plus
	// maxAge, and nextTry triedAt plus minRefresh, in Unix nanoseconds; inFlight is set from a
	// hit's start of a fetch until its answer. All are atomics: a hit reads them without the lock.
	removals atomic.Uint64
	staleAt  atomic.Int64
	nextTry  atomic.Int64
	inFlight atomic.Bool
	// ids are the keyIdentity of every key of the last fetch that returned any (an empty set
	// is a glitch: removals are counted against the set before it). Guarded by mu.
	ids map[string]bool
	// left is ended, and cleared, by the fetch that finds any key gone, for streams whose
	// token's key is not known (keyStamp.left); created when first asked for. Guarded by mu.
	left       context.Context
	leftCancel context.CancelFunc
	// keyLeft holds, by keyIdentity, a context for each key of ids that a stream's token was
	// verified with, ended and deleted by the fetch that finds that key gone. Guarded by mu.
	keyLeft map[string]leaving
	// followers are the key sets of the same issuer in configurations this one's replaced,
	// whose streams follow this set's keys (keyfollow.go); led says this set is one of them,
	// and gone that its issuer is no longer trusted, so its streams have ended. Guarded by mu.
	followers []*keySet
	led, gone bool
}

// leaving is a context that ends when its key leaves the set.
type leaving struct {
	ctx    context.Context
	cancel context.CancelFunc
}

// fetchResult is one completed key-set fetch, shared by the callers that
// waited on it.
type fetchResult struct {
	keys    []jose.JSONWebKey
	started time.Time
}

// VerifySignature implements oidc.KeySet. raw must be a JWT, that is a JWS in
// the Compact Serialization (RFC 7519 §7.2); the JSON Serialization is refused.
func (k *keySet) VerifySignature(ctx context.Context, raw string) ([]byte, error) {
	jws, err := jose.ParseSignedCompact(raw, k.algs)
	if err != nil || len(jws.Signatures) != 1 {
		return nil, fail(ctx, invalid(ReasonMalformed, "jws"))
	}
	hdr := jws.Signatures[0].Header
	arrived := k.now()
	keys, fresh, err := k.current(ctx, arrived)
	if len(keys) == 0 && err != nil {
		return nil, fail(ctx, err)
	}
	cands := candidates(keys, hdr.KeyID, hdr.Algorithm)
	if len(cands) == 0 && !fresh && err == nil && k.mayRefresh() {
		// A new kid usually means the IdP rotated keys (OIDC Core §10.1).
		var res fetchResult
		if res, err = k.refresh(ctx); err == nil {
			keys, fresh = res.keys, !res.started.Before(arrived)
		}
		cands = candidates(keys, hdr.KeyID, hdr.Algorithm)
	}
	if len(cands) == 0 {
		return nil, fail(ctx, k.missing(jws, err, fresh))
	}
	for i := range cands {
		if payload, err := jws.Verify(&cands[i]); err == nil {
			verifiedBy(ctx, &cands[i])
			return payload, nil
		}
	}
	return nil, fail(ctx, invalid(ReasonSignature, ""))
}

// missing is the error for a kid that no cached key has. fetchErr is the
// failure of a fetch tried for this token; fresh says a key set fetched after
// the token arrived lacks the kid.
func (k *keySet) missing(jws *jose.JSONWebSignature, fetchErr error, fresh bool) error {
	switch {
	case fetchErr != nil:
		// The key may exist on an IdP we cannot reach: not a 401.
		return fetchErr
	case fresh:
		return invalid(ReasonUnknownKey, "")
	}
	k.mu.RLock()
	fetchedAt := k.fetchedAt
	k.mu.RUnlock()
	// A successful fetch that started after the token was issued (by the
	// token's unverified iat, with the clock skew allowed) already lacked its
	// kid: an issuer publishes a key before it signs with it, so the answer is
	// known. A forged iat only changes which refusal the forger gets.
	if iat, ok := unverifiedIssuedAt(jws); ok && !fetchedAt.IsZero() && fetchedAt.After(iat.Add(k.skew)) {
		return invalid(ReasonUnknownKey, "")
	}
	return &unavailableError{msg: "key id not in the cached key set and a refetch is not allowed yet", retryAfter: k.refreshWait()}
}

// unverifiedIssuedAt reads the iat claim of a token whose signature has not
// been checked. It is only ever used to choose between two refusals.
func unverifiedIssuedAt(jws *jose.JSONWebSignature) (time.Time, bool) {
	var claims struct {
		Iat *float64 `json:"iat"`
	}
	if err := json.Unmarshal(jws.UnsafePayloadWithoutVerification(), &claims); err != nil || claims.Iat == nil {
		return time.Time{}, false
	}
	return time.Unix(int64(*claims.Iat), 0), true
}

// current returns the cached keys, fetching them when there are none yet or
// they are older than maxAge; fresh reports a successful fetch that started
// no earlier than arrived, and err the failure of a fetch tried now. A failed
// refresh of a stale set keeps the old keys: an IdP outage should not turn
// into rejected tokens.
func (k *keySet) current(ctx context.Context, arrived time.Time) (keys []jose.JSONWebKey, fresh bool, err error) {
	k.mu.RLock()
	keys, fetched := k.keys, k.fetchedAt
	k.mu.RUnlock()
	if fetched.IsZero() && !k.mayRefresh() {
		return nil, false, &unavailableError{msg: "key set fetch failed recently", retryAfter: k.refreshWait()}
	}
	if fetched.IsZero() || (k.now().Sub(fetched) > k.maxAge && k.mayRefresh()) {
		res, err := k.refresh(ctx)
		if err != nil {
			return keys, false, err
		}
		return res.keys, !res.started.Before(arrived), nil
	}
	return keys, false, nil
}

func (k *keySet) mayRefresh() bool { return k.refreshWait() <= 0 }

// refreshWait is how long until the next fetch is allowed.
func (k *keySet) refreshWait() time.Duration {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.minRefresh - k.now().Sub(k.triedAt)
}

func (k *keySet) refresh(ctx context.Context) (fetchResult, error) {
	select {
	case <-ctx.Done():
		return fetchResult{}, fmt.Errorf("%w: %w", ErrIssuerUnavailable, ctx.Err())
	case res := <-k.fetch(ctx):
		if ue, ok := res.Err.(*unavailableError); ok {
			return fetchResult{}, ue // an earlier flight's failure, within the refetch limit
		}
		if res.Err != nil {
			return fetchResult{}, &unavailableError{msg: "key set fetch failed", err: res.Err, retryAfter: k.minRefresh}
		}
		return res.Val.(fetchResult), nil
	}
}

// fetch starts a fetch of the set, or joins the one under way. Its channel is buffered, so a
// caller that does not wait (keyStamp.withdrawn) leaves nothing behind.
func (k *keySet) fetch(ctx context.Context) <-chan singleflight.Result {
	if k.beforeFlight != nil {
		k.beforeFlight()
	}
	return k.group.DoChan("jwks", func() (any, error) {
		// A flight that ended between this caller's decision to fetch and its DoChan has
		// fetched (or failed) within minRefresh: its answer stands, or the issuer would be
		// asked more often than the refetch limit allows.
		if res, ok, err := k.recent(); ok {
			return res, err
		}
		// Detached from the caller so one client hanging up does not fail
		// the fetch for everyone waiting on it.
		started := k.now()
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), k.fetchTimeout)
		defer cancel()
		if k.life != nil {
			defer context.AfterFunc(k.life, cancel)()
		}
		keys, err := fetchJWKS(fctx, k.client, k.url)
		k.mu.Lock()
		defer k.mu.Unlock()
		k.triedAt, k.lastErr = k.now(), err
		k.nextTry.Store(k.triedAt.Add(k.minRefresh).UnixNano())
		if err != nil {
			return nil, err
		}
		if len(keys) > 0 {
			// An empty set is an issuer's glitch, not a withdrawal of every key: cached
			// tokens and streams stay (a token not cached is refused by it, as before), and
			// the next set is compared with the last one that held keys.
			// A set that follows a newer configuration's keeps the keys it is given
			// (keyfollow.go): its own fetch, if an old request makes one, must not bring
			// back a key the issuer's live set no longer has.
			if !k.led {
				ids := identities(keys)
				k.endLost(ids)
				k.ids = ids
				k.leadFollowers(ids)
			}
		}
		k.keys, k.fetchedAt = keys, started
		k.staleAt.Store(started.Add(k.maxAge).UnixNano())
		return fetchResult{keys: keys, started: started}, nil
	})
}

// recent is the answer of the last fetch while a new one is not allowed yet (ok false once it
// is): its keys, or its failure as the refetch limit's refusal.
func (k *keySet) recent() (fetchResult, bool, error) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	if k.triedAt.IsZero() || k.now().Sub(k.triedAt) >= k.minRefresh {
		return fetchResult{}, false, nil
	}
	if k.lastErr != nil {
		return fetchResult{}, true, &unavailableError{msg: "key set fetch failed recently", err: k.lastErr,
			retryAfter: k.minRefresh - k.now().Sub(k.triedAt)}
	}
	return fetchResult{keys: k.keys, started: k.fetchedAt}, true, nil
}

// candidates are the keys that may have signed a token with this kid and
// alg. Without a kid every signing key of a matching algorithm is tried.
func candidates(keys []jose.JSONWebKey, kid, alg string) []jose.JSONWebKey {
	var out []jose.JSONWebKey
	for _, key := range keys {
		if (kid == "" || key.KeyID == kid) && (key.Algorithm == "" || key.Algorithm == alg) {
			out = append(out, key)
		}
	}
	return out
}

var errJWKSStatus = errors.New("unexpected HTTP status")

// statusError is an answer other than 200 OK to the fetch of a discovery document or key set:
// an errJWKSStatus that knows its status.
type statusError struct {
	code int
	url  string // as configerr.URL quotes it
}

func (e *statusError) Error() string {
	return fmt.Sprintf("%s %d from %s", errJWKSStatus, e.code, e.url)
}

func (e *statusError) Unwrap() error { return errJWKSStatus }

func fetchJWKS(ctx context.Context, client *http.Client, url string) ([]jose.JSONWebKey, error) {
	body, err := getJSON(ctx, client, url)
	if err != nil {
		return nil, err
	}
	var raw struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, fmt.Errorf("%w: jwks: %w", errBadDocument, err)
	}
	var keys []jose.JSONWebKey
	for _, r := range raw.Keys {
		var key jose.JSONWebKey
		// RFC 7517 §5: ignore keys we cannot use rather than the whole set.
		if err := key.UnmarshalJSON(r); err != nil || !key.Valid() || !forVerifying(key.Use, r) {
			continue
		}
		if !key.IsPublic() {
			key = key.Public()
		}
		// Symmetric ("oct") keys have no public half: never trust them.
		if key.Key == nil || weakKey(key) {
			continue
		}
		keys = append(keys, key)
	}
	return keys, nil
}

// weakKey reports whether key is an RSA key under dpop.MinRSABits (RFC 7518 §3.3), the size a
// DPoP proof's key is held to too. Go verifies with RSA keys from 1024 bits, and whoever factors
// one published in a key set mints tokens every caller's rules accept; such a key is ignored
// like any other key the gateway cannot use (RFC 7517 §5), so the set's other keys still verify.
// Elliptic-curve keys need no such check: go-jose reads only P-256, P-384, P-521 and Ed25519.
func weakKey(key jose.JSONWebKey) bool {
	k, ok := key.Key.(*rsa.PublicKey)
	return ok && k.N.BitLen() < dpop.MinRSABits
}

// forVerifying reports whether a published key may verify signatures: its "use", when present,
// is "sig", and its "key_ops" (RFC 7517 §4.3), when present, include "verify" or "sign" (some
// issuers describe the private key's operation). A key the issuer published for encryption only
// is not one it signs with.
func forVerifying(use string, raw json.RawMessage) bool {
	if use != "" && use != "sig" {
		return false
	}
	var ops struct {
		KeyOps *[]string `json:"key_ops"`
	}
	if json.Unmarshal(raw, &ops) != nil {
		return false
	}
	return ops.KeyOps == nil || slices.Contains(*ops.KeyOps, "verify") || slices.Contains(*ops.KeyOps, "sign")
}

func getJSON(ctx context.Context, client *http.Client, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, configerr.Redact(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, &statusError{code: resp.StatusCode, url: configerr.URL(url)}
	}
	// A byte more than the bound tells a document too large from one cut short, which would
	// read as malformed JSON.
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes+1))
	if err == nil && len(body) > maxJWKSBytes {
		return nil, fmt.Errorf("%w: the answer from %s is over %d bytes", errBadDocument, configerr.URL(url), maxJWKSBytes)
	}
	return body, err
}
