package useroauth

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/seal"
	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/oauthbackend"
	"github.com/mcp-gateway/gateway/internal/testsupport/realop"
	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
	"github.com/mcp-gateway/gateway/internal/vault"
	"github.com/mcp-gateway/gateway/internal/webpage"
)

// The real parts of these tests: the gateway's own identity provider (a zitadel example OP,
// where users sign in to the gateway's pages), a second, distinct zitadel example OP as the
// backend's authorization server, a go-sdk MCP backend that verifies that server's tokens with
// go-oidc, and the connect pages served over TLS (their cookies are Secure) to an HTTP client
// with a cookie jar that fills in the login forms as a user would.

const (
	pagesClientID, pagesClientSecret = "gateway-pages", "pages-secret"
	asClientID, asClientSecret       = "gateway-saas", "saas-secret"
	backendName                      = "saas"
)

var testKeys = []seal.Key{{ID: "k1", Secret: []byte("a-test-only-secret-of-at-least-32-bytes")}}

// fixture is one gateway's connect pages with their parts.
type fixture struct {
	idp     *realop.Provider // the gateway's issuer
	as      *realop.Provider // the backend's authorization server
	backend *oauthbackend.Backend
	srv     *httptest.Server
	base    string // the pages' BaseURL
	svc     *Service
	clock   *mcptest.Clock
	log     *mcptest.LogBuffer
	obs     *countingObserver
	store   store.Store
	redis   *testredis.Server // nil with the memory store
	// tokenRequests counts requests to the authorization server's token endpoint, revocations
	// its revocation endpoint.
	tokenRequests, revocations atomic.Int64
	// registrations counts requests to its registration endpoint, metadata those for its
	// metadata documents (RFC 8414, OpenID discovery).
	registrations, metadata atomic.Int64
	asLink                  *asLink
	// redirect is the redirect URI the fixture registered for the gateway at the backend's
	// authorization server (static registration).
	redirect string
	// counters is the fixture whose counters and hooks the authorization server updates: this
	// one, or the one a replica was made from.
	counters *fixture
	// onTokenRequest, when set, runs as the authorization server receives a token request.
	onTokenRequest atomic.Pointer[func()]
	// onRevoke, when set, runs as the authorization server receives a revocation request.
	onRevoke atomic.Pointer[func()]
}

type fixtureOptions struct {
	redis        bool
	authServer   realop.AuthServerOptions
	registration Registration
	// replicaOf, when set, builds another replica of that fixture: same parts, same store.
	replicaOf *fixture
	// timeout is the backend's Timeout; default 1s.
	timeout time.Duration
	// sharedURL, with replicaOf, gives this replica the other's BaseURL, as replicas behind
	// one balancer have (its callback URL, so its registration key, is the other's).
	sharedURL bool
	// prefix, when set, puts the pages behind a balancer that routes the prefix to them and
	// strips it: BaseURL is the server's URL with the prefix.
	prefix string
	// more are per-user backends configured besides the fixture's own; moreOf makes more once
	// the fixture's parts run.
	more   []Backend
	moreOf func(*fixture) []Backend
	// records, when set, wraps the vault's records (a test's view of, or hand in, the store).
	records func(store.Records) store.Records
	// ahead sets this replica's clock that much ahead of the fixture's clock, which the store
	// keeps time by.
	ahead time.Duration
	// vaultKeys, when set, are this replica's userOAuth.keys (default testKeys).
	vaultKeys []seal.Key
	// scopes, when set, are the backend's configured scopes (default: its metadata's).
	scopes []string
}

func newFixture(t *testing.T, o fixtureOptions) *fixture {
	t.Helper()
	f := &fixture{clock: mcptest.NewClock(time.Now()), log: &mcptest.LogBuffer{}, obs: newCountingObserver()}
	if p := o.replicaOf; p != nil {
		f.idp, f.as, f.backend, f.store, f.redis, f.asLink = p.idp, p.as, p.backend, p.store, p.redis, p.asLink
		f.clock, f.counters = p.clock, p.counters
	} else {
		f.counters = f
		f.idp = realop.Start(t, realop.Options{})
		f.as = realop.Start(t, realop.Options{AuthServer: o.authServer, Observe: func(r *http.Request) {
			f := f.counters
			switch r.URL.Path {
			case "/oauth/token":
				f.tokenRequests.Add(1)
				if fn := f.onTokenRequest.Load(); fn != nil {
					(*fn)()
				}
			case "/revoke":
				f.revocations.Add(1)
				if fn := f.onRevoke.Load(); fn != nil {
					(*fn)()
				}
			case "/register":
				f.registrations.Add(1)
			case "/.well-known/oauth-authorization-server", "/.well-known/openid-configuration":
				f.metadata.Add(1)
			}
		}})
		f.backend = oauthbackend.Start(t, backendName, oauthbackend.Options{Issuer: f.as.Issuer(),
			Scopes: []string{"openid", "offline_access", "notes"}})
		f.asLink = &asLink{}
		f.store = newStore(t, f, o.redis)
	}
	t.Cleanup(func() { f.noTokenLogged(t) })
	f.srv = httptest.NewUnstartedServer(nil)
	f.srv.StartTLS()
	t.Cleanup(f.srv.Close)
	ring, err := seal.New(seal.Config{Keys: testKeys})
	if err != nil {
		t.Fatal(err)
	}
	base := f.srv.URL + o.prefix
	if o.sharedURL && o.replicaOf != nil {
		base = o.replicaOf.base
	}
	f.base = base
	f.idp.AddWebClient(pagesClientID, pagesClientSecret, base+"/signin/callback")
	now := func() time.Time { return f.clock.Now().Add(o.ahead) }
	signIn := webpage.NewSignIn(webpage.SignInConfig{Issuer: f.idp.Issuer(), ClientID: pagesClientID, ClientSecret: pagesClientSecret,
		RedirectURL: base + "/signin/callback", SessionTTL: 10 * time.Minute}, ring, nil, now)
	b := Backend{Name: backendName, URL: f.backend.URL(), Registration: o.registration, Timeout: cmp.Or(o.timeout, time.Second),
		Scopes: o.scopes}
	if o.registration == "" || o.registration == RegistrationStatic {
		b.ClientID, b.ClientSecret, b.AuthServer = asClientID, asClientSecret, f.as.Issuer()
		f.redirect = base + "/connect/callback/" + backendName
		f.as.AddJWTWebClient(asClientID, asClientSecret, f.redirect)
	}
	more := o.more
	if o.moreOf != nil {
		more = append(more, o.moreOf(f)...)
	}
	recs, _ := f.store.(store.Records)
	if o.records != nil {
		recs = o.records(recs)
	}
	replay, _ := f.store.(store.Replay)
	vaultKeys := testKeys
	if o.vaultKeys != nil {
		vaultKeys = o.vaultKeys
	}
	f.svc, err = New(Config{Keys: vaultKeys}.WithDefaults(), append([]Backend{b}, more...), Deps{Records: recs, Store: f.store, Replay: replay, Keys: ring,
		SignIn: signIn, BaseURL: base, Logger: slog.New(slog.NewTextHandler(f.log, nil)), Observer: f.obs,
		Clock: now, HTTPClient: f.asLink.client()})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/signin/callback", func(w http.ResponseWriter, r *http.Request) {
		ret, err := signIn.Finish(w, r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		http.Redirect(w, r, ret, http.StatusSeeOther)
	})
	mux.Handle("/connect/", f.svc)
	mux.Handle("/connect", f.svc) // the pages' own redirect to /connect/, as the gateway routes it
	f.srv.Config.Handler = mux
	if o.prefix != "" {
		f.srv.Config.Handler = http.StripPrefix(o.prefix, mux) // a request outside the prefix is 404
	}
	return f
}

func newStore(t *testing.T, f *fixture, redis bool) store.Store {
	t.Helper()
	if !redis {
		m, err := store.NewMemory(store.MemoryOptions{Now: f.clock.Now}) // its ttls follow the fixture's clock
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = m.Close() })
		return m
	}
	f.redis = testredis.Start(t)
	r, err := store.NewRedis(store.RedisConfig{URL: f.redis.URL()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

// asLink is the gateway's way to the authorization server and the backend's metadata, which a
// test can make answer garbage or hang for the token endpoint, or hang for the revocation
// endpoint.
type asLink struct {
	garbage, hang, hangRevoke atomic.Bool
	// refuseRefreshRevocation makes the revocation endpoint answer HTTP 400
	// unsupported_token_type to a request revoking a refresh token, without reaching the server.
	refuseRefreshRevocation atomic.Bool
	// overloaded makes the token endpoint answer HTTP 503 with an OAuth error body.
	overloaded atomic.Bool
	// overloadedGrant, when set, makes the token endpoint answer so to a refresh of that
	// refresh token only, as a server that limits one user's refreshes does.
	overloadedGrant atomic.Pointer[string]
	// tokenSent counts the requests the gateway sent to the token endpoint, including those
	// that never reached the server.
	tokenSent atomic.Int64
	// bloat, when set, makes the token endpoint's access tokens this many characters longer
	// (the server's answer, rewritten on its way).
	bloat atomic.Int64
	// register, when set, is what the registration endpoint does instead of registering:
	// "refuse" (HTTP 503 after the server saw the request), "hang", "expired" (registers, but
	// the answer says the client secret expired in 1970), or "slow" (registers, after a moment:
	// concurrent first users overlap).
	register atomic.Pointer[string]
	// registerSent counts the requests the gateway sent to the registration endpoint, including
	// those that never reached the server.
	registerSent atomic.Int64
	// beforeRefresh, when set, runs when a refresh grant is on its way to the token endpoint,
	// before it reaches the server (something else happening while a refresh runs).
	beforeRefresh atomic.Pointer[func()]
	// answer, when set, is the token endpoint's answer instead of the server's: the status
	// and the JSON body (the request still reaches the server, which counts it).
	answer atomic.Pointer[tokenAnswer]
	// noRevocation takes revocation_endpoint out of the authorization server's metadata.
	noRevocation atomic.Bool
	// resourceAS, when set, is the authorization server the backend's resource metadata names
	// (rewritten on its way to the gateway).
	resourceAS atomic.Pointer[string]
	// issued holds every token the token endpoint's answers carried, which no log line may
	// hold (noTokenLogged).
	issuedMu sync.Mutex
	issued   []string
	// revokeSent counts the requests the gateway sent to the revocation endpoint, including
	// those that never reached the server; revokedTokens holds the tokens they named.
	revokeSent    atomic.Int64
	revokedMu     sync.Mutex
	revokedTokens []string
}

// refreshes reports whether r is a refresh grant of the refresh token *tok (nil: none); r's
// body is left to be read again.
func refreshes(r *http.Request, tok *string) bool {
	if tok == nil || r.Body == nil {
		return false
	}
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	q, _ := url.ParseQuery(string(body))
	return q.Get("grant_type") == "refresh_token" && q.Get("refresh_token") == *tok
}

// revoked reports whether the gateway sent a request revoking tok.
func (l *asLink) revoked(tok string) bool {
	l.revokedMu.Lock()
	defer l.revokedMu.Unlock()
	return slices.Contains(l.revokedTokens, tok)
}

func (l *asLink) client() *http.Client {
	return &http.Client{Transport: l, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func (l *asLink) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Path == "/register" {
		l.registerSent.Add(1)
		if mode := l.register.Load(); mode != nil {
			return l.registration(r, *mode)
		}
	}
	if r.URL.Path == "/revoke" {
		l.revokeSent.Add(1)
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		q, _ := url.ParseQuery(string(body))
		l.revokedMu.Lock()
		l.revokedTokens = append(l.revokedTokens, q.Get("token"))
		l.revokedMu.Unlock()
	}
	if r.URL.Path == "/revoke" && l.refuseRefreshRevocation.Load() && revokesRefresh(r) {
		return &http.Response{StatusCode: http.StatusBadRequest, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(strings.NewReader(`{"error":"unsupported_token_type"}`)), Request: r}, nil
	}
	if r.URL.Path == "/revoke" && l.hangRevoke.Load() {
		<-r.Context().Done()
		return nil, r.Context().Err()
	}
	if r.URL.Path == "/oauth/token" {
		l.tokenSent.Add(1)
		if fn := l.beforeRefresh.Load(); fn != nil && r.Body != nil {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if q, _ := url.ParseQuery(string(body)); q.Get("grant_type") == "refresh_token" {
				(*fn)()
			}
		}
		switch {
		case l.overloaded.Load() || refreshes(r, l.overloadedGrant.Load()):
			return &http.Response{StatusCode: http.StatusServiceUnavailable, Header: http.Header{"Content-Type": {"application/json"}},
				Body: io.NopCloser(strings.NewReader(`{"error":"temporarily_unavailable"}`)), Request: r}, nil
		case l.hang.Load():
			<-r.Context().Done()
			return nil, r.Context().Err()
		case l.garbage.Load():
			return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"text/html"}},
				Body: io.NopCloser(strings.NewReader("<html>oops</html>")), Request: r}, nil
		}
	}
	resp, err := http.DefaultTransport.RoundTrip(r)
	if a := l.answer.Load(); a != nil && err == nil && r.URL.Path == "/oauth/token" {
		_ = resp.Body.Close()
		resp = &http.Response{StatusCode: a.status, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(strings.NewReader(a.body)), Request: r}
	}
	if err == nil && r.URL.Path == "/oauth/token" {
		l.noteIssued(resp)
	}
	if l.noRevocation.Load() && err == nil && (strings.Contains(r.URL.Path, "openid-configuration") ||
		strings.Contains(r.URL.Path, "oauth-authorization-server")) {
		return rewritten(resp, "revocation_endpoint", "")
	}
	if as := l.resourceAS.Load(); as != nil && err == nil && strings.Contains(r.URL.Path, "oauth-protected-resource") {
		return rewritten(resp, "authorization_servers", []string{*as})
	}
	if n := l.bloat.Load(); n > 0 && err == nil && r.URL.Path == "/oauth/token" {
		return bloated(resp, int(n))
	}
	return resp, err
}

// noteIssued keeps the tokens a token endpoint's answer carries (noTokenLogged), leaving the
// answer readable.
func (l *asLink) noteIssued(resp *http.Response) {
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	var m map[string]any
	_ = json.Unmarshal(body, &m)
	l.issuedMu.Lock()
	defer l.issuedMu.Unlock()
	for _, k := range []string{"access_token", "refresh_token", "id_token"} {
		if s, ok := m[k].(string); ok && len(s) >= 8 {
			l.issued = append(l.issued, s)
		}
	}
}

// noTokenLogged fails t when f's log holds a token the authorization server issued or the
// gateway's client secret there: every test with a fixture checks its log so.
func (f *fixture) noTokenLogged(t *testing.T) {
	logs := f.log.String()
	f.asLink.issuedMu.Lock()
	defer f.asLink.issuedMu.Unlock()
	for _, s := range append([]string{asClientSecret}, f.asLink.issued...) {
		if strings.Contains(logs, s) {
			t.Errorf("the log holds a token or secret (%d bytes)", len(s))
		}
	}
}

// revokesRefresh reports whether r, a revocation request, names a refresh token (its
// token_type_hint); its body is left readable.
func revokesRefresh(r *http.Request) bool {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	q, _ := url.ParseQuery(string(body))
	return q.Get("token_type_hint") == "refresh_token"
}

// tokenAnswer is what asLink.answer makes the token endpoint answer.
type tokenAnswer struct {
	status int
	body   string
}

// bloated is resp, a token endpoint's answer, with its access token n characters longer.
func bloated(resp *http.Response, n int) (*http.Response, error) {
	return rewrite(resp, func(body map[string]any) {
		if at, ok := body["access_token"].(string); ok {
			body["access_token"] = at + strings.Repeat("x", n)
		}
	})
}

// rewritten is resp, a JSON object answer, with member set to v.
func rewritten(resp *http.Response, member string, v any) (*http.Response, error) {
	return rewrite(resp, func(body map[string]any) { body[member] = v })
}

func rewrite(resp *http.Response, change func(map[string]any)) (*http.Response, error) {
	var body map[string]any
	err := json.NewDecoder(resp.Body).Decode(&body)
	_ = resp.Body.Close()
	if err == nil {
		change(body)
	}
	b, _ := json.Marshal(body)
	resp.Body, resp.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
	resp.Header.Del("Content-Length")
	return resp, nil
}

// registration does what asLink.register says with a request to the registration endpoint:
// the request always reaches the server (which counts it).
func (l *asLink) registration(r *http.Request, mode string) (*http.Response, error) {
	switch mode {
	case "hang":
		<-r.Context().Done()
		return nil, r.Context().Err()
	case "slow":
		select {
		case <-r.Context().Done():
			return nil, r.Context().Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil && mode == "expired" {
		return rewritten(resp, "client_secret_expires_at", 1)
	}
	if err != nil || mode != "refuse" {
		return resp, err
	}
	_ = resp.Body.Close()
	return &http.Response{StatusCode: http.StatusServiceUnavailable, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(`{"error":"temporarily_unavailable"}`)), Request: r}, nil
}

// countingObserver counts the service's events.
type countingObserver struct {
	mu     sync.Mutex
	counts map[string]int
}

func newCountingObserver() *countingObserver { return &countingObserver{counts: map[string]int{}} }

func (o *countingObserver) add(k string, n int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.counts[k] += n
}

func (o *countingObserver) Consent(_, event, reason string) { o.add("consent "+event+" "+reason, 1) }
func (o *countingObserver) Refresh(_, result string)        { o.add("refresh "+result, 1) }
func (o *countingObserver) Revoked(_, by string, n int)     { o.add("revoked "+by, n) }

func (o *countingObserver) count(k string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.counts[k]
}

// browser is a user's browser: an HTTP client with its own cookies, trusting the pages'
// certificate. It stops at a redirect to the gateway's callback when stop says so.
type browser struct {
	t    *testing.T
	f    *fixture
	c    *http.Client
	stop atomic.Bool // do not follow redirects to a /connect/callback/
	// held is the last callback URL not followed.
	held atomic.Pointer[string]
}

func (f *fixture) browser(t *testing.T) *browser {
	jar, _ := cookiejar.New(nil)
	b := &browser{t: t, f: f}
	b.c = &http.Client{Transport: f.srv.Client().Transport, Jar: jar, Timeout: 20 * time.Second,
		CheckRedirect: func(r *http.Request, _ []*http.Request) error {
			if b.stop.Load() && strings.HasPrefix(r.URL.Path, "/connect/callback/") {
				u := r.URL.String()
				b.held.Store(&u)
				return http.ErrUseLastResponse
			}
			return nil
		}}
	return b
}

// get fetches u and returns the final response's status, URL and body.
func (b *browser) get(u string) (int, *url.URL, string) {
	b.t.Helper()
	resp, err := b.c.Get(u)
	if err != nil {
		b.t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode, resp.Request.URL, string(body)
}

// login fills in a provider's login form the browser was sent to (at where) as username.
func (b *browser) login(where *url.URL, username string) (int, *url.URL, string) {
	b.t.Helper()
	id := where.Query().Get("authRequestID")
	if id == "" {
		b.t.Fatalf("not at a provider's login page: %s", where)
	}
	resp, err := b.c.PostForm(where.ResolveReference(&url.URL{Path: "/login/username"}).String(),
		url.Values{"id": {id}, "username": {username}, "password": {realop.UserPassword}})
	if err != nil {
		b.t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode, resp.Request.URL, string(body)
}

// post posts form to page as the page's own form does: with the pages' Origin and
// Sec-Fetch-Site: same-origin, once its page has been on screen for webpage.MinDwell (the
// fixture's clock, which the memory store's keys follow, moves on; with Redis, a real second
// passes: a user reading the page before clicking). postAtOnce does not wait.
func (b *browser) post(page string, form url.Values) (int, *url.URL, string) {
	b.t.Helper()
	b.f.clock.Advance(webpage.MinDwell)
	if b.f.redis != nil {
		// Redis measures the second on its own clock (webpage.Shown): a real one, and a margin
		// for its expiry's millisecond.
		time.Sleep(webpage.MinDwell + 100*time.Millisecond)
	}
	return b.postAtOnce(page, form)
}

// postAtOnce posts form to page as post does, without the page having been on screen for
// any time.
func (b *browser) postAtOnce(page string, form url.Values) (int, *url.URL, string) {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodPost, page, strings.NewReader(form.Encode()))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", b.f.srv.URL)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode, resp.Request.URL, string(body)
}

// openLink opens a connect link, signing in to the gateway as gwUser when asked; it returns
// the page the link shows.
func (b *browser) openLink(link, gwUser string) (int, string) {
	b.t.Helper()
	status, where, body := b.get(link)
	if where.Query().Get("authRequestID") != "" {
		status, _, body = b.login(where, gwUser)
	}
	return status, body
}

// connect goes through a call's connect link as gwUser, continuing to the authorization
// server and signing in there as asUser; it returns the last page. With b.stop set it stops
// before the callback (b.held has its URL).
func (b *browser) connect(link, gwUser, asUser string) (int, string) {
	b.t.Helper()
	status, body := b.openLink(link, gwUser)
	if status != http.StatusOK || !strings.Contains(body, `id="continue"`) {
		b.t.Fatalf("connect page: %d\n%s", status, body)
	}
	status, where, body := b.post(link, url.Values{"csrf": {csrfOf(b.t, body)}})
	if where.Query().Get("authRequestID") == "" {
		return status, body
	}
	status, _, body = b.login(where, asUser)
	return status, body
}

func csrfOf(t *testing.T, body string) string {
	t.Helper()
	_, rest, ok := strings.Cut(body, `name="csrf" value="`)
	if !ok {
		t.Fatalf("no CSRF token on the page:\n%s", body)
	}
	tok, _, _ := strings.Cut(rest, `"`)
	return tok
}

// caller is the gateway caller of the first example user of the gateway's issuer.
func (f *fixture) caller(sub string) vault.Caller {
	return vault.Caller{Issuer: f.idp.Issuer(), Subject: sub}
}

func (f *fixture) link(t *testing.T, who vault.Caller) string {
	t.Helper()
	u, _, err := f.svc.Link(who, backendName)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// whoami calls the backend directly with token and returns what it says, or the error.
func (f *fixture) whoami(t *testing.T, token string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	cs, err := mcptest.Dial(ctx, f.backend.URL(), mcptest.WithBearer(token))
	if err != nil {
		return "", err
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "whoami"})
	if err != nil {
		return "", err
	}
	if res.IsError {
		return "", errors.New(mcptest.ResultText(res))
	}
	return mcptest.ResultText(res), nil
}

// mustToken returns who's token, failing the test when there is none.
func (f *fixture) mustToken(t *testing.T, who vault.Caller) string {
	t.Helper()
	tok, ok, err := f.svc.Token(t.Context(), backendName, who)
	if err != nil || !ok {
		t.Fatalf("Token: ok %v, %v", ok, err)
	}
	return tok
}

func (f *fixture) noToken(t *testing.T, who vault.Caller) {
	t.Helper()
	if tok, ok, err := f.svc.Token(t.Context(), backendName, who); ok || err != nil {
		t.Fatalf("Token: %q ok %v, %v; want none", tok, ok, err)
	}
}

func expectContains(t *testing.T, what, body string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(body, w) {
			t.Errorf("%s does not say %q:\n%s", what, w, body)
		}
	}
}

var _ = fmt.Sprint
