package authz

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"golang.org/x/sync/singleflight"
)

// maxJWKSBytes bounds a key-set or discovery response.
const maxJWKSBytes = 1 << 20

// failureKey carries a *failureSlot through go-oidc's Verify into our key
// set. go-oidc formats key-set errors with %v, which loses the error chain,
// so the key set records its typed error here for Authenticate to read.
type failureKey struct{}

type failureSlot struct{ err error }

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
type keySet struct {
	url          string
	client       *http.Client
	now          func() time.Time
	algs         []jose.SignatureAlgorithm
	minRefresh   time.Duration
	maxAge       time.Duration
	fetchTimeout time.Duration

	group     singleflight.Group
	mu        sync.RWMutex
	keys      []jose.JSONWebKey
	fetchedAt time.Time // last success
	triedAt   time.Time // last attempt
}

// VerifySignature implements oidc.KeySet.
func (k *keySet) VerifySignature(ctx context.Context, raw string) ([]byte, error) {
	jws, err := jose.ParseSigned(raw, k.algs)
	if err != nil || len(jws.Signatures) != 1 {
		return nil, fail(ctx, invalid(ReasonMalformed, "jws"))
	}
	hdr := jws.Signatures[0].Header
	keys, tried, err := k.current(ctx)
	if len(keys) == 0 && err != nil {
		return nil, fail(ctx, err)
	}
	cands := candidates(keys, hdr.KeyID, hdr.Algorithm)
	if len(cands) == 0 && !tried && k.mayRefresh() {
		// A new kid usually means the IdP rotated keys (OIDC Core §10.1).
		keys, err = k.refresh(ctx)
		cands = candidates(keys, hdr.KeyID, hdr.Algorithm)
	}
	if len(cands) == 0 && err != nil {
		// The key may exist on an IdP we cannot reach: not a 401.
		return nil, fail(ctx, err)
	}
	if len(cands) == 0 {
		return nil, fail(ctx, invalid(ReasonUnknownKey, ""))
	}
	for i := range cands {
		if payload, err := jws.Verify(&cands[i]); err == nil {
			return payload, nil
		}
	}
	return nil, fail(ctx, invalid(ReasonSignature, ""))
}

// current returns the cached keys, fetching them when there are none yet or
// they are older than maxAge; tried reports a fetch in this call and err its
// failure. A failed refresh of a stale set keeps the old keys: an IdP outage
// should not turn into rejected tokens.
func (k *keySet) current(ctx context.Context) (keys []jose.JSONWebKey, tried bool, err error) {
	k.mu.RLock()
	keys, fetched := k.keys, k.fetchedAt
	k.mu.RUnlock()
	if fetched.IsZero() && !k.mayRefresh() {
		return nil, false, errKeysBackoff
	}
	if fetched.IsZero() || (k.now().Sub(fetched) > k.maxAge && k.mayRefresh()) {
		fresh, err := k.refresh(ctx)
		if err != nil {
			return keys, true, err
		}
		return fresh, true, nil
	}
	return keys, false, nil
}

func (k *keySet) mayRefresh() bool {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.now().Sub(k.triedAt) >= k.minRefresh
}

func (k *keySet) refresh(ctx context.Context) ([]jose.JSONWebKey, error) {
	ch := k.group.DoChan("jwks", func() (any, error) {
		// Detached from the caller so one client hanging up does not fail
		// the fetch for everyone waiting on it.
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), k.fetchTimeout)
		defer cancel()
		keys, err := fetchJWKS(fctx, k.client, k.url)
		k.mu.Lock()
		defer k.mu.Unlock()
		k.triedAt = k.now()
		if err != nil {
			return nil, err
		}
		k.keys, k.fetchedAt = keys, k.triedAt
		return keys, nil
	})
	select {
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: %w", ErrIssuerUnavailable, ctx.Err())
	case res := <-ch:
		if res.Err != nil {
			return nil, fmt.Errorf("%w: %w", ErrIssuerUnavailable, res.Err)
		}
		return res.Val.([]jose.JSONWebKey), nil
	}
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

var (
	errJWKSStatus  = errors.New("unexpected HTTP status")
	errKeysBackoff = fmt.Errorf("%w: key set fetch failed recently", ErrIssuerUnavailable)
)

func fetchJWKS(ctx context.Context, client *http.Client, url string) ([]jose.JSONWebKey, error) {
	body, err := getJSON(ctx, client, url)
	if err != nil {
		return nil, err
	}
	var raw struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, fmt.Errorf("jwks: %w", err)
	}
	var keys []jose.JSONWebKey
	for _, r := range raw.Keys {
		var key jose.JSONWebKey
		// RFC 7517 §5: ignore keys we cannot use rather than the whole set.
		if err := key.UnmarshalJSON(r); err != nil || !key.Valid() || key.Use == "enc" {
			continue
		}
		if !key.IsPublic() {
			key = key.Public()
		}
		// Symmetric ("oct") keys have no public half: never trust them.
		if key.Key == nil {
			continue
		}
		keys = append(keys, key)
	}
	return keys, nil
}

func getJSON(ctx context.Context, client *http.Client, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%w %d from %s", errJWKSStatus, resp.StatusCode, url)
	}
	return io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes))
}
