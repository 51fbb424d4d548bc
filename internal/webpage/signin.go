package webpage

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/configerr"
	"github.com/mcp-gateway/gateway/internal/egress"
	"github.com/mcp-gateway/gateway/internal/seal"
)

// Cookie names. The __Host- prefix makes browsers accept the cookie only when it is Secure,
// set by a secure origin (https, or a loopback origin the browser treats as secure), with
// Path=/ and no Domain: a sibling host of the same site cannot set ("toss") a cookie of that
// name for the gateway's host, so a page never reads a session or sign-in it did not set. Both
// are HttpOnly and SameSite=Lax: Lax because the sign-in returns from the issuer by a
// cross-site navigation, and the pages' decisions, being POSTs, are not sent cross-site under
// Lax and carry a CSRF token besides. Path=/ (which the prefix requires) also sends them to the
// MCP endpoint, which reads no cookies and forwards none. The names are the approval page's,
// where the sign-in started: sessions of either page are the same session.
const (
	sessionCookie = "__Host-mcpgw_approval"
	loginCookie   = "__Host-mcpgw_approval_login"
)

// Sealing purposes of the sign-in's cookies.
const (
	purposeSession = "mcp-gateway/approval-session/v1"
	purposeLogin   = "mcp-gateway/approval-login/v1"
)

// loginTTL bounds one sign-in round trip to the issuer.
const loginTTL = 10 * time.Minute

// maxLogins is how many sign-ins in progress one browser's login cookie keeps, newest first.
// A person sent two links at once (two calls waiting for approval, say) opens both, and each
// page sends the browser to the issuer: with one sign-in kept, signing in on the first tab was
// refused as another browser's sign-in, the second tab's having replaced it.
const maxLogins = 4

// signInTimeout bounds the discovery and code exchange of one sign-in.
const signInTimeout = 15 * time.Second

// Session is who signed in on the gateway's pages, sealed into the session cookie.
type Session struct {
	Issuer  string    `json:"iss"`
	Subject string    `json:"sub"`
	Name    string    `json:"name,omitempty"`
	Expiry  time.Time `json:"exp"`
	// CSRF keys the session's CSRF tokens (CSRFToken).
	CSRF []byte `json:"csrf"`
}

// login is one sign-in in progress, sealed into the login cookie: what the callback checks.
// Its fields are left out when zero: the login that logins embeds, to read a previous release's
// value, is empty in every value sealed now, and its keys would take room another sign-in can use.
type login struct {
	State    string    `json:"state,omitzero"`
	Nonce    string    `json:"nonce,omitzero"`
	Verifier string    `json:"verifier,omitzero"`
	Return   string    `json:"return,omitzero"` // the gateway's path to show after sign-in
	Expiry   time.Time `json:"exp,omitzero"`
}

// logins is the login cookie's sealed value: the sign-ins in progress in this browser, newest
// first, at most maxLogins. A value sealed as one login (by a replica of the previous release)
// reads as that one.
type logins struct {
	login
	Pending []login `json:"pending,omitempty"`
}

// pending returns the unexpired sign-ins in progress that r's login cookie holds, newest first.
func (s *SignIn) pending(r *http.Request) []login {
	var v logins
	if !s.open(r, loginCookie, s.logins, &v, func() time.Time { return s.now().Add(time.Second) }) {
		return nil
	}
	all := v.Pending
	if v.State != "" {
		all = []login{v.login}
	}
	live := make([]login, 0, len(all))
	for _, l := range all {
		if l.State != "" && s.now().Before(l.Expiry) {
			live = append(live, l)
		}
	}
	return live
}

// keepLogins sets the login cookie to hold ls (newest first), as many of them as maxLogins and
// the cookie's size allow, or removes it when there are none.
func (s *SignIn) keepLogins(w http.ResponseWriter, ls []login) error {
	ls = ls[:min(len(ls), maxLogins)]
	for ; len(ls) > 0; ls = ls[:len(ls)-1] {
		val, err := s.seal(s.logins, logins{Pending: ls})
		if err != nil {
			return err
		}
		if len(loginCookie)+1+len(val) <= maxCookieBytes {
			setCookie(w, loginCookie, val, loginTTL)
			return nil
		}
	}
	clearCookie(w, loginCookie)
	return nil
}

// SignInConfig is the gateway's OpenID Connect client for its pages.
type SignInConfig struct {
	// Issuer is the OpenID Connect issuer users sign in with.
	Issuer string
	// ClientID and ClientSecret are the gateway's client there; an empty secret is a public
	// client, which PKCE alone protects.
	ClientID, ClientSecret string
	// RedirectURL is the sign-in callback registered at the issuer (an absolute URL).
	RedirectURL string
	// SessionTTL is the lifetime of the session cookie.
	SessionTTL time.Duration
}

// SignIn signs users in on the gateway's pages: the authorization code flow with PKCE, state
// and nonce against the gateway's issuer, and a sealed session cookie any replica opens. It is
// safe for concurrent use.
type SignIn struct {
	cfg      SignInConfig
	sessions *seal.Sealer
	logins   *seal.Sealer
	issuer   *issuer // discovered on first sign-in
	client   *http.Client
	// exchange is client following no redirect, for the code exchange: its body carries the
	// code, the PKCE verifier and perhaps the client secret, which a 307 or 308 would send
	// to wherever the token endpoint points.
	exchange *http.Client
	now      func() time.Time
}

// NewSignIn returns the sign-in of cfg; keys seal its cookies (every replica holds the same).
func NewSignIn(cfg SignInConfig, keys *seal.KeyRing, client *http.Client, now func() time.Time) *SignIn {
	if now == nil {
		now = time.Now
	}
	if client == nil {
		client = issuerClient(cfg.Issuer, nil)
	}
	return &SignIn{cfg: cfg, sessions: keys.Sealer(purposeSession), logins: keys.Sealer(purposeLogin), client: client,
		exchange: egress.Credentialed(client), now: now,
		issuer: &issuer{url: cfg.Issuer, client: client, now: now, public: cfg.ClientSecret == ""}}
}

// CloseIdleConnections closes the idle connections of the client s reaches its issuer with, for
// a replaced configuration once it retires: they would stay open, with their goroutines,
// until the transport's idle timeout, one set per reload.
func (s *SignIn) CloseIdleConnections() { s.client.CloseIdleConnections() }

// Issuer is the issuer users sign in with.
func (s *SignIn) Issuer() string { return s.cfg.Issuer }

// Session returns the signed-in user, false when there is none (no cookie, not opening,
// expired).
func (s *SignIn) Session(r *http.Request) (*Session, bool) {
	var sess Session
	if !s.open(r, sessionCookie, s.sessions, &sess, func() time.Time { return sess.Expiry }) || len(sess.CSRF) < 16 {
		return nil, false
	}
	return &sess, true
}

// ErrSignIn is a sign-in that failed on the user's side (a response of another browser's
// sign-in, a refused code, an identity token not valid for it); Why says which, for the page.
type ErrSignIn struct {
	Why string
	Err error
}

func (e *ErrSignIn) Error() string {
	if e.Err != nil {
		return "sign-in failed: " + e.Why + ": " + e.Err.Error()
	}
	return "sign-in failed: " + e.Why
}

func (e *ErrSignIn) Unwrap() error { return e.Err }

// Start sends the browser to the issuer to sign in, remembering ret (a path of the gateway, the
// page to show afterwards) in a sealed login cookie. again asks the issuer for a fresh login (the
// user wants to sign in as someone else). An error is an *UnreachableError (the issuer is down)
// or a failure to seal; nothing was sent.
func (s *SignIn) Start(w http.ResponseWriter, r *http.Request, ret string, again bool) error {
	// A browser removes tabs and line breaks from a URL before reading it ("/\t/host" is
	// "//host" to it) and reads "\" as "/": a path holding any of them, or another control
	// character, could send the user to another host after signing in.
	if !strings.HasPrefix(ret, "/") || strings.HasPrefix(ret, "//") || strings.ContainsRune(ret, '\\') ||
		strings.IndexFunc(ret, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0 {
		return errors.New("sign-in: the return path is not a path of the gateway")
	}
	ctx, cancel := context.WithTimeout(r.Context(), signInTimeout)
	defer cancel()
	p, err := s.issuer.get(ctx)
	if err != nil {
		return err
	}
	l := login{State: rand.Text(), Nonce: rand.Text(), Verifier: oauth2.GenerateVerifier(), Return: ret,
		Expiry: s.now().Add(loginTTL)}
	// The sign-ins this browser has in progress (in other tabs) are kept beside this one: the
	// callback takes whichever its state names.
	if err := s.keepLogins(w, append([]login{l}, s.pending(r)...)); err != nil {
		return err
	}
	clearCookie(w, sessionCookie)
	opts := []oauth2.AuthCodeOption{oauth2.S256ChallengeOption(l.Verifier), oidc.Nonce(l.Nonce)}
	if again {
		// The user asked to sign in as someone else: the issuer must not reuse its session.
		opts = append(opts, oauth2.SetAuthURLParam("prompt", "login"))
	}
	http.Redirect(w, r, s.oauth2Config(p).AuthCodeURL(l.State, opts...), http.StatusSeeOther)
	return nil
}

// Finish completes a sign-in at the callback: state, code exchange with the PKCE verifier, ID
// token signature, audience, expiry and nonce; then the session cookie. It returns the path to
// show now. An error is an *ErrSignIn (the user's sign-in failed), an *UnreachableError (the
// issuer is down) or a failure to seal.
func (s *SignIn) Finish(w http.ResponseWriter, r *http.Request) (string, error) {
	q := r.URL.Query()
	ls := s.pending(r)
	i := slices.IndexFunc(ls, func(l login) bool { return q.Get("state") != "" && l.State == q.Get("state") })
	if i < 0 {
		return "", &ErrSignIn{Why: "the sign-in response does not belong to this browser's sign-in"}
	}
	// This sign-in is answered, once; the others stay in progress.
	l := ls[i]
	if err := s.keepLogins(w, slices.Delete(ls, i, i+1)); err != nil {
		return "", err
	}
	if q.Get("error") != "" {
		return "", &ErrSignIn{Why: "the issuer refused the sign-in"}
	}
	ctx, cancel := context.WithTimeout(r.Context(), signInTimeout)
	defer cancel()
	p, err := s.issuer.get(ctx)
	if err != nil {
		return "", err
	}
	ctx = oidc.ClientContext(ctx, s.client)
	tok, err := s.oauth2Config(p).Exchange(context.WithValue(ctx, oauth2.HTTPClient, s.exchange), q.Get("code"),
		oauth2.VerifierOption(l.Verifier))
	var refused *oauth2.RetrieveError
	var redirected *egress.RedirectedError
	switch {
	case errors.As(err, &redirected):
		// The provider's token endpoint is misplaced, not the user's code wrong; the error
		// names the status only (the client's error would name the target, query and all).
		return "", &UnreachableError{err: fmt.Errorf("the token endpoint: %w", redirected), RetryAfter: issuerRetryInterval}
	case errors.As(err, &refused):
		return "", &ErrSignIn{Why: "the sign-in code was not accepted", Err: refusal(refused)}
	case err != nil:
		// No answer from the token endpoint: the provider is down, not the sign-in wrong.
		return "", &UnreachableError{err: configerr.Redact(err), RetryAfter: issuerRetryInterval}
	}
	raw, _ := tok.Extra("id_token").(string)
	idt, err := s.verifyIDToken(ctx, p, raw, l.Nonce)
	if err != nil {
		return "", err
	}
	var claims struct {
		Name     string `json:"name"`
		Username string `json:"preferred_username"`
		Email    string `json:"email"`
	}
	_ = idt.Claims(&claims)
	sess := Session{Issuer: idt.Issuer, Subject: idt.Subject, Name: shownName(firstNonEmpty(claims.Username, claims.Email, claims.Name)),
		Expiry: s.now().Add(s.cfg.SessionTTL), CSRF: randomKey()}
	val, err := s.seal(s.sessions, sess)
	if err != nil {
		return "", err
	}
	if len(sessionCookie)+1+len(val) > maxCookieBytes {
		// A browser drops it without a word: the page would start a sign-in again, which the
		// issuer answers at once, until the browser gives up on the redirects.
		return "", &ErrSignIn{Why: "the identity token's subject is too long for the gateway's pages to keep"}
	}
	setCookie(w, sessionCookie, val, s.cfg.SessionTTL)
	return l.Return, nil
}

// verifyIDToken checks the ID token raw of a sign-in whose nonce was nonce: signature,
// audience and expiry (go-oidc), then what go-oidc does not check: its header's type, a
// subject, the nonce, and claim names given once. An error is an *ErrSignIn.
func (s *SignIn) verifyIDToken(ctx context.Context, p provided, raw, nonce string) (*oidc.IDToken, error) {
	idt, err := p.provider.Verifier(&oidc.Config{ClientID: s.cfg.ClientID, Now: s.now}).Verify(ctx, raw)
	if err != nil {
		return nil, &ErrSignIn{Why: "the identity token is not valid for this sign-in", Err: tokenRefusal(err)}
	}
	// The header is signed: an access token, a logout token or another JWT the issuer signs
	// with the same keys, for this client, is not an ID token (its typ says so).
	if authz.CheckIDTokenHeader(raw) != nil {
		return nil, &ErrSignIn{Why: "the identity token is not valid for this sign-in",
			Err: fmt.Errorf("%w: its header types it as another kind of token, or asks for crit or b64", errTokenInvalid)}
	}
	if idt.Subject == "" {
		// OpenID Connect requires sub; go-oidc does not check it. Every user of an issuer
		// leaving it out would be the one user "" to the pages, each seeing and
		// disconnecting the accounts the others connected; access tokens without it are
		// refused too.
		return nil, &ErrSignIn{Why: "the identity token is not valid for this sign-in", Err: fmt.Errorf("%w: it names no subject", errTokenInvalid)}
	}
	if idt.Nonce == "" || idt.Nonce != nonce {
		return nil, &ErrSignIn{Why: "the identity token is not valid for this sign-in", Err: fmt.Errorf("%w: its nonce is not this sign-in's", errTokenInvalid)}
	}
	// The page's user is read by name from a struct, as go-oidc reads iss and sub: a claim
	// named twice, or once more in another case ("ſub", "SUB"), must not choose whose it is.
	// The rule is the one access tokens are held to, so the two cannot drift apart.
	var payload json.RawMessage
	if idt.Claims(&payload) != nil || !authz.ClaimNamesExact(payload) {
		return nil, &ErrSignIn{Why: "the identity token names a claim twice"}
	}
	return idt, nil
}

func (s *SignIn) oauth2Config(p provided) *oauth2.Config {
	return &oauth2.Config{ClientID: s.cfg.ClientID, ClientSecret: s.cfg.ClientSecret, Endpoint: p.endpoint,
		RedirectURL: s.cfg.RedirectURL, Scopes: []string{oidc.ScopeOpenID, "profile"}}
}

// SetCookie sets a sealed page cookie name (its name must carry the __Host- prefix) for ttl,
// with the attributes of the sign-in's own cookies.
func SetCookie(w http.ResponseWriter, name, value string, ttl time.Duration) {
	setCookie(w, name, value, ttl)
}

// ClearCookie removes the page cookie name.
func ClearCookie(w http.ResponseWriter, name string) { clearCookie(w, name) }

func setCookie(w http.ResponseWriter, name, value string, ttl time.Duration) {
	http.SetCookie(w, &http.Cookie{
		Name: name, Value: value, Path: "/", MaxAge: int(ttl / time.Second),
		HttpOnly: true, Secure: true, SameSite: http.SameSiteLaxMode,
	})
}

func clearCookie(w http.ResponseWriter, name string) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, Secure: true, SameSite: http.SameSiteLaxMode})
}

// OpenCookie reads the sealed JSON value of cookie name into v with sealer; false when it is
// absent, does not open, or has expired by expiry.
func (s *SignIn) OpenCookie(r *http.Request, name string, sealer *seal.Sealer, v any, expiry func() time.Time) bool {
	return s.open(r, name, sealer, v, expiry)
}

func (s *SignIn) open(r *http.Request, name string, sealer *seal.Sealer, v any, expiry func() time.Time) bool {
	ck, err := r.Cookie(name)
	if err != nil || ck.Value == "" {
		return false
	}
	pt, err := sealer.Open(ck.Value)
	if err != nil || json.Unmarshal(pt, v) != nil {
		return false
	}
	return s.now().Before(expiry())
}

// Seal seals v as JSON with sealer, for a page cookie.
func (s *SignIn) Seal(sealer *seal.Sealer, v any) (string, error) { return s.seal(sealer, v) }

func (s *SignIn) seal(sealer *seal.Sealer, v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return sealer.Seal(b)
}

func randomKey() []byte {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return b
}

// maxCookieBytes is the most of a cookie's name and value browsers keep (RFC 6265 §6.1: at
// least 4096 bytes, which is what they keep).
const maxCookieBytes = 4096

// maxNameRunes bounds the name a session keeps to show who is signed in: many issuers let users
// choose it, and the session must fit a cookie. Who the user is, issuer and subject, is kept
// whole.
const maxNameRunes = 128

// shownName is name cut to maxNameRunes characters, marked as cut.
func shownName(name string) string {
	if utf8.RuneCountInString(name) <= maxNameRunes {
		return name
	}
	return string([]rune(name)[:maxNameRunes]) + "…"
}

func firstNonEmpty(v ...string) string {
	for _, s := range v {
		if s != "" {
			return s
		}
	}
	return ""
}
