package authz

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
)

// flakyJWKS serves a devissuer's key set through a front that can be made to fail or to hang,
// and counts the fetches that reach it.
type flakyJWKS struct {
	srv     *httptest.Server
	fetches atomic.Int64
	failing atomic.Bool
	mu      sync.Mutex
	hang    chan struct{} // non-nil: requests wait for it to close (or the client to give up)
}

func newFlakyJWKS(t *testing.T, iss *devissuer.Issuer) *flakyJWKS {
	t.Helper()
	f := &flakyJWKS{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.fetches.Add(1)
		f.mu.Lock()
		hang := f.hang
		f.mu.Unlock()
		if hang != nil {
			select {
			case <-hang:
			case <-r.Context().Done():
				return
			}
		}
		if f.failing.Load() {
			http.Error(w, "down", http.StatusBadGateway)
			return
		}
		res, err := http.Get(iss.JWKSURL())
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer res.Body.Close()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.Copy(w, res.Body)
	}))
	t.Cleanup(func() {
		f.setHang(false)
		f.srv.Close()
	})
	return f
}

func (f *flakyJWKS) setHang(on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case on && f.hang == nil:
		f.hang = make(chan struct{})
	case !on && f.hang != nil:
		close(f.hang)
		f.hang = nil
	}
}

func (f *flakyJWKS) url() string { return f.srv.URL + "/jwks" }

// wantUnavailable checks that Authenticate answers "retry later" (a 503 with Retry-After at the
// MCP endpoint), never a 401 nor an allow.
func wantUnavailable(t *testing.T, a *Authenticator, tok string) {
	t.Helper()
	_, err := a.Authenticate(context.Background(), tok)
	if !errors.Is(err, ErrIssuerUnavailable) || errors.Is(err, ErrInvalidToken) || Reason(err) != ReasonIssuerUnavailable {
		t.Fatalf("Authenticate = %v (reason %q), want ErrIssuerUnavailable only", err, Reason(err))
	}
	if ra := RetryAfter(err); ra < time.Second || ra > DefaultJWKSMinRefreshInterval {
		t.Fatalf("RetryAfter = %v, want within [1s, %v]", ra, DefaultJWKSMinRefreshInterval)
	}
}

// TestRotationWhileKeySetFails: the issuer rotates its signing key while its key set cannot be
// fetched (failing, then hanging). A token with the new kid is "retry later" for as long as the
// key set cannot be refreshed, however often it is presented, and verifies once it can; it is
// never a 401 that would make the client throw away a good token. Refetches stay rate limited.
func TestRotationWhileKeySetFails(t *testing.T) {
	for _, mode := range []string{"failing", "hanging"} {
		t.Run(mode, func(t *testing.T) {
			clk := newClock()
			iss := startIssuer(t, clk)
			jwks := newFlakyJWKS(t, iss)
			a := newAuth(t, Config{
				Issuers:        []IssuerConfig{{Issuer: iss.URL(), JWKSURL: jwks.url()}},
				TokenCacheSize: -1,
				FetchTimeout:   200 * time.Millisecond, // bounds the hanging fetch in real time
			}, clk)
			wantAuth(t, a, mint(t, iss, nil), nil, ReasonNone)
			if mode == "failing" {
				jwks.failing.Store(true)
			} else {
				jwks.setHang(true)
			}
			if _, err := iss.Rotate(devissuer.RotateOptions{}); err != nil {
				t.Fatal(err)
			}
			clk.Advance(time.Second)
			rotated := mint(t, iss, nil)
			clk.Advance(DefaultJWKSMinRefreshInterval)
			wantUnavailable(t, a, rotated) // the refetch it triggers fails
			fetches := jwks.fetches.Load()
			for range 20 { // within the back-off: no refetch, and still no 401
				wantUnavailable(t, a, rotated)
			}
			if got := jwks.fetches.Load(); got != fetches {
				t.Fatalf("%d key-set fetches during the back-off, want none", got-fetches)
			}
			clk.Advance(DefaultJWKSMinRefreshInterval)
			wantUnavailable(t, a, rotated) // still failing: retried once, still not a 401
			jwks.failing.Store(false)
			jwks.setHang(false)
			wantUnavailable(t, a, rotated) // recovered, but the back-off is not over
			clk.Advance(DefaultJWKSMinRefreshInterval)
			wantAuth(t, a, rotated, nil, ReasonNone)
			if got := jwks.fetches.Load(); got > fetches+2 {
				t.Fatalf("%d key-set fetches after the first failure, want at most 2", got-fetches)
			}
		})
	}
}

// TestUnknownKidNewerThanKeySet: within the refetch interval after a successful fetch, a kid the
// set lacks is "retry later" when the token may be newer than the set (the issuer may sign with a
// key as soon as it publishes it), and a 401 when a set fetched after the token was issued, or
// after it arrived, lacks the kid. Random kids never cause more than one fetch per interval.
func TestUnknownKidNewerThanKeySet(t *testing.T) {
	clk := newClock()
	iss := startIssuer(t, clk)
	jwks := newFlakyJWKS(t, iss)
	a := newAuth(t, Config{Issuers: []IssuerConfig{{Issuer: iss.URL(), JWKSURL: jwks.url()}}, TokenCacheSize: -1}, clk)
	wantAuth(t, a, mint(t, iss, nil), nil, ReasonNone)
	if jwks.fetches.Load() != 1 {
		t.Fatalf("%d fetches, want 1", jwks.fetches.Load())
	}

	// The issuer rotates right after our fetch and signs with the new key at once.
	if _, err := iss.Rotate(devissuer.RotateOptions{}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Second)
	rotated := mint(t, iss, nil)
	wantUnavailable(t, a, rotated)

	// Random kids within the interval: refused, never allowed, and no fetch.
	for range 30 {
		wantUnavailable(t, a, mintUnknownKey(t, iss, nil))
	}
	// A token issued well before the set was fetched: that set answers for it.
	old := mintUnknownKey(t, iss, devissuer.Claims{"iat": clk.Now().Add(-time.Hour).Unix()})
	wantAuth(t, a, old, ErrInvalidToken, ReasonUnknownKey)
	if got := jwks.fetches.Load(); got != 1 {
		t.Fatalf("%d fetches within the refetch interval, want 1", got)
	}

	// Once a refetch is allowed, the first unknown kid triggers exactly one fetch, made for it:
	// its answer is definitive, 401 for a kid the issuer does not publish.
	clk.Advance(DefaultJWKSMinRefreshInterval)
	wantAuth(t, a, mintUnknownKey(t, iss, nil), ErrInvalidToken, ReasonUnknownKey)
	for range 30 {
		_, err := a.Authenticate(context.Background(), mintUnknownKey(t, iss, nil))
		if err == nil || !errors.Is(err, ErrInvalidToken) && !errors.Is(err, ErrIssuerUnavailable) {
			t.Fatalf("random kid: %v", err)
		}
	}
	if got := jwks.fetches.Load(); got != 2 {
		t.Fatalf("%d fetches, want 2: one per interval", got)
	}
	// That fetch also brought the rotated key.
	wantAuth(t, a, rotated, nil, ReasonNone)
}

// TestKeySetVerifiesOnlyCompactJWS: a JWT is a JWS in the Compact Serialization (RFC 7519 §7.2),
// so the key set refuses the same signed token re-encoded in the JSON Serialization (RFC 7515
// §7.2) even though its signature is valid. Authenticate already refuses such a token before the
// key set (BearerToken and peek); this holds the key set itself to it, since go-oidc can hand
// it anything.
func TestKeySetVerifiesOnlyCompactJWS(t *testing.T) {
	clk := newClock()
	iss := startIssuer(t, clk)
	a := newAuth(t, Config{Issuers: []IssuerConfig{{Issuer: iss.URL(), JWKSURL: iss.JWKSURL()}}, TokenCacheSize: -1}, clk)
	ks := a.issuers[iss.URL()].newKeySet(iss.JWKSURL())
	ctx := context.Background()

	tok := mint(t, iss, nil)
	if _, err := ks.VerifySignature(ctx, tok); err != nil {
		t.Fatalf("compact token: %v", err)
	}
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("minted token has %d parts", len(parts))
	}
	for name, jws := range map[string]string{
		"flattened": fmt.Sprintf(`{"protected":%q,"payload":%q,"signature":%q}`, parts[0], parts[1], parts[2]),
		"general":   fmt.Sprintf(`{"payload":%q,"signatures":[{"protected":%q,"signature":%q}]}`, parts[1], parts[0], parts[2]),
	} {
		payload, err := ks.VerifySignature(ctx, jws)
		if err == nil || payload != nil {
			t.Errorf("%s JSON serialization: payload %q, err %v; want it refused", name, payload, err)
			continue
		}
		if !errors.Is(err, ErrInvalidToken) || Reason(err) != ReasonMalformed {
			t.Errorf("%s JSON serialization: err %v (reason %q), want %v with reason %q", name, err, Reason(err), ErrInvalidToken, ReasonMalformed)
		}
	}
}

// TestKeysNotForSigningIgnored: the issuer's own key, republished with what says it is not for
// verifying signatures, verifies nothing; published as a signing key, with or without "use" and
// "key_ops", it does.
func TestKeysNotForSigningIgnored(t *testing.T) {
	clk := newClock()
	iss := startIssuer(t, clk)
	res, err := http.Get(iss.JWKSURL())
	if err != nil {
		t.Fatal(err)
	}
	var set struct{ Keys []map[string]any }
	err = json.NewDecoder(res.Body).Decode(&set)
	_ = res.Body.Close()
	if err != nil || len(set.Keys) == 0 {
		t.Fatalf("key set: %v", err)
	}
	tests := []struct {
		name   string
		change map[string]any
		want   error
	}{
		{"use enc", map[string]any{"use": "enc"}, ErrInvalidToken},
		{"use SIG", map[string]any{"use": "SIG"}, ErrInvalidToken},
		{"key_ops encrypt", map[string]any{"key_ops": []string{"encrypt"}}, ErrInvalidToken},
		{"key_ops wrapKey", map[string]any{"key_ops": []string{"wrapKey", "unwrapKey"}}, ErrInvalidToken},
		{"key_ops empty", map[string]any{"key_ops": []string{}}, ErrInvalidToken},
		{"key_ops verify", map[string]any{"key_ops": []string{"verify"}}, nil},
		{"key_ops sign", map[string]any{"key_ops": []string{"sign"}}, nil},
		{"use sig", map[string]any{"use": "sig"}, nil},
		{"neither", map[string]any{"use": nil}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key := maps.Clone(set.Keys[0])
			for k, v := range tt.change {
				if v == nil {
					delete(key, k)
				} else {
					key[k] = v
				}
			}
			doc, _ := json.Marshal(map[string]any{"keys": []any{key}})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(doc) }))
			t.Cleanup(srv.Close)
			a := newAuth(t, Config{Issuers: []IssuerConfig{{Issuer: iss.URL(), JWKSURL: srv.URL}}}, clk)
			if _, err := a.Authenticate(t.Context(), mint(t, iss, nil)); !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("Authenticate = %v, want %v", err, tt.want)
			}
		})
	}
}

// TestKeySetOverBoundRefused: a key set (or discovery document) over maxJWKSBytes is refused as
// too large, a malformed document by its class, with an error that says so, rather than read
// cut short and reported as broken JSON; one at the bound is read.
func TestKeySetOverBoundRefused(t *testing.T) {
	t.Parallel()
	var size atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		const head, tail = `{"keys":[],"pad":"`, `"}`
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, head+strings.Repeat("x", int(size.Load())-len(head)-len(tail))+tail)
	}))
	t.Cleanup(srv.Close)
	size.Store(maxJWKSBytes + 1)
	_, err := fetchJWKS(t.Context(), srv.Client(), srv.URL)
	if !errors.Is(err, errBadDocument) || !strings.Contains(err.Error(), fmt.Sprintf("over %d bytes", maxJWKSBytes)) {
		t.Errorf("a key set of %d bytes: %v; want refused as over the bound", maxJWKSBytes+1, err)
	}
	size.Store(maxJWKSBytes)
	if _, err := fetchJWKS(t.Context(), srv.Client(), srv.URL); err != nil {
		t.Errorf("a key set of exactly %d bytes: %v", maxJWKSBytes, err)
	}
}

// TestFetchErrorsNameNoQuery: a key set's URL is the issuer's text, and its query (an API key
// some providers put there), user information or a token in its path is not to be logged: an
// error fetching it, whether the server answers a failure, the connection fails, or a redirect
// is refused, names the URL without them (configerr.URL).
func TestFetchErrorsNameNoQuery(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/moved" {
			http.Redirect(w, r, "https://169.254.169.254/keys?key=s3cr3t-q7Zr", http.StatusFound)
			return
		}
		http.Error(w, "down", http.StatusBadGateway)
	}))
	t.Cleanup(srv.Close)
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	client := defaultClient(Config{FetchTimeout: 5 * time.Second}, nil)
	for _, u := range []string{srv.URL + "/keys?key=s3cr3t-q7Zr", srv.URL + "/moved?key=s3cr3t-q7Zr",
		strings.Replace(closed.URL, "http://", "http://user:s3cr3t-q7Zr@", 1) + "/keys?key=s3cr3t-q7Zr#s3cr3t-q7Zr",
		// A token in the path (a capability URL), answered with a failure or not connected to.
		srv.URL + "/keys/s3cr3tq7Zr0123456789", closed.URL + "/keys/s3cr3tq7Zr0123456789"} {
		_, err := fetchJWKS(t.Context(), client, u)
		if err == nil || strings.Contains(err.Error(), "q7Zr") || !strings.Contains(err.Error(), "/keys") && !strings.Contains(err.Error(), "/moved") {
			t.Errorf("fetching %s: %v; want an error naming the URL without its query or user information", u, err)
		}
	}
}
