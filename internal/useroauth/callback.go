package useroauth

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcp-gateway/gateway/internal/callerkey"
	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/internal/vault"
	"github.com/mcp-gateway/gateway/internal/webpage"
	"github.com/mcp-gateway/gateway/mrtr"
)

// usedStateOwner prefixes the caller a state's single use is recorded for (store.Replay's
// owner), apart from the owners of DPoP proofs.
const usedStateOwner = "useroauth/state/"

// maxCallbacks bounds the callbacks one caller takes per ConsentTTL and mrtr.ReplicaSkew: each
// records its state for as long (mrtr.Keep of the state's expiry), so a caller holds at most
// twice as many (store.ReplayBudget). A person connects a few backends, a few times.
const maxCallbacks = 30

// callback takes the authorization server's answer. In order, each check before anything that
// costs the server or changes the vault: the state opens and is live; this browser started that
// round trip (its flow cookie holds the same nonce: a code injected into another browser's
// session is refused); the signed-in user is the caller the state is for; the response names
// the server the round trip went to (RFC 9207 iss, an error response too: a mix-up is
// refused), and arrives at the callback of the backend the round trip was for (each backend
// has its own redirect URI: a server that sent the browser on to another backend's server
// gets that server's response delivered there, refused, its code sent nowhere, RFC 9700
// §4.4.2); it carries a code, and the server did not refuse; the state was not used before
// (single use, through the shared store). Only then is the code exchanged, with the PKCE
// verifier, and the tokens stored in one write.
func (s *Service) callback(w http.ResponseWriter, r *http.Request, at string) {
	q := r.URL.Query()
	var st state
	if openJSON(s.states, q.Get("state"), &st) != nil || !s.PerUser(st.Backend) {
		s.page.refuse(w, r, "", http.StatusBadRequest, FailBadState, "This answer from the authorization server is not one the gateway asked for.")
		return
	}
	if at != st.Backend {
		s.mixUp(w, r, &st, "useroauth: authorization response at another backend's callback (mix-up) refused")
		return
	}
	if !s.now().Before(st.Expiry) {
		s.page.refuse(w, r, st.Backend, http.StatusBadRequest, FailExpired, "This sign-in at the authorization server took too long. Start again from the connect page.")
		return
	}
	var f flow
	cookie := flowCookiePrefix + st.Backend
	if !s.deps.SignIn.OpenCookie(r, cookie, s.flows, &f, func() time.Time { return f.Expiry }) || f.Nonce != st.Nonce {
		s.page.refuse(w, r, st.Backend, http.StatusBadRequest, FailOtherBrowser,
			"This answer from the authorization server belongs to a sign-in started in another browser, so it was not used.")
		return
	}
	sess, ok := s.deps.SignIn.Session(r)
	if !ok {
		s.page.refuse(w, r, st.Backend, http.StatusForbidden, FailBadRequest, "You are not signed in to the gateway (or your session ended). Start again from the connect page.")
		return
	}
	// Signing in again here would come back to this callback without the server's answer:
	// the list is where another user signs in and connects.
	if !s.sameUser(w, r, sess, st.Issuer, st.Subject, st.Backend, s.cfg.Path+"/") {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), pageTimeout)
	defer cancel()
	b := s.backends[st.Backend]
	d, err := b.disc.get(ctx)
	if err != nil || d.as.Issuer != st.AuthServer {
		s.page.authServerDown(w, r, st.Backend, err)
		return
	}
	if !issMatches(q, d.as) {
		// An error response too (RFC 9207 §2.4): another server cannot end the round trip,
		// nor make the page say the user's server refused.
		s.mixUp(w, r, &st, "useroauth: authorization response from another issuer (mix-up) refused")
		return
	}
	code, e := q.Get("code"), q.Get("error")
	if code == "" && e == "" {
		// Nothing to redeem, nor a refusal: not sent to the token endpoint, and the round
		// trip goes on (its cookie and state kept) for the server's real answer.
		s.page.refuse(w, r, st.Backend, http.StatusBadRequest, FailBadRequest, "This answer from the authorization server carries no code, so it was not used.")
		return
	}
	webpage.ClearCookie(w, cookie)
	if e != "" {
		s.page.refuse(w, r, st.Backend, http.StatusForbidden, FailDenied, "The authorization server did not grant access ("+errorCode(e)+"). Nothing was stored.")
		return
	}
	owner := usedStateOwner + callerkey.Of(st.Issuer, st.Subject)
	// The record lasts as long as the state is live on any replica, whatever its clock (within
	// the replicas' tolerated skew) or its consentTTL: from the expiry the state carries.
	use, err := s.deps.Replay.FirstUse(ctx, owner, st.Nonce, mrtr.Keep(st.Expiry, s.now()), s.callbacks)
	switch {
	case err != nil:
		s.page.storeDown(w, r, st.Backend)
		return
	case use == store.UseAgain:
		s.page.refuse(w, r, st.Backend, http.StatusBadRequest, FailReplayed, "This answer from the authorization server was used already.")
		return
	case use == store.UseOverBudget:
		secs := budgetFrees(ctx, s.deps.Replay, owner, s.callbacks.Window)
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		s.page.refuse(w, r, st.Backend, http.StatusTooManyRequests, FailTooMany, fmt.Sprintf(
			"You started too many connections in a short time. Nothing was stored; try again in %d minutes.", (secs+59)/60))
		return
	}
	s.exchange(w, r, b, d, &st, &f, code)
}

// mixUp refuses an authorization response that does not come from the server the round trip
// went to (FailIssMismatch), and logs msg.
func (s *Service) mixUp(w http.ResponseWriter, r *http.Request, st *state, msg string) {
	s.log.LogAttrs(r.Context(), slog.LevelWarn, msg,
		slog.String("upstream", st.Backend), slog.String("subject", callerkey.Of(st.Issuer, st.Subject)))
	s.page.refuse(w, r, st.Backend, http.StatusBadRequest, FailIssMismatch, "This answer does not come from the authorization server the gateway sent you to, so it was not used.")
}

// budgetFrees is, in whole seconds (at least one), when owner's callback budget frees
// (store.BudgetFrees).
func budgetFrees(ctx context.Context, replay store.Replay, owner string, window time.Duration) int {
	left := store.BudgetFrees(ctx, replay, owner, window)
	return max(int((left+time.Second-1)/time.Second), 1)
}

// issMatches is RFC 9207 §2.4: when the server says it sends iss, the response must carry it;
// when it is there, it must be the server's issuer.
func issMatches(q url.Values, as asMetadata) bool {
	iss, present := q["iss"]
	if !present {
		return !as.ISSParameter
	}
	return len(iss) == 1 && iss[0] == as.Issuer
}

// exchange trades the code for tokens and stores them.
func (s *Service) exchange(w http.ResponseWriter, r *http.Request, b *backendState, d *discovered, st *state, f *flow, code string) {
	ctx, cancel := context.WithTimeout(r.Context(), pageTimeout)
	defer cancel()
	c, err := s.oauth.clientFor(ctx, b, d)
	if err != nil || c.ID != st.ClientID {
		s.page.authServerDown(w, r, st.Backend, err)
		return
	}
	tctx, tcancel := context.WithTimeout(ctx, b.cfg.timeout())
	tr, err := s.oauth.tokenRequest(tctx, &d.as, c, url.Values{"grant_type": {"authorization_code"}, "code": {code},
		"redirect_uri": {s.oauth.redirectURL(st.Backend)}, "code_verifier": {f.Verifier}, "resource": {b.cfg.resource()}})
	tcancel()
	err = b.oversizeAnswered(vault.Caller{Issuer: st.Issuer, Subject: st.Subject}, err)
	var refused *oauthError
	var unusable *unusableError
	switch {
	case errors.As(err, &refused):
		if invalidClient(err) {
			s.oauth.forgetClient(ctx, b, d, c)
		}
		s.log.LogAttrs(ctx, slog.LevelWarn, "useroauth: code refused", slog.String("upstream", st.Backend), slog.String("error", err.Error()))
		s.page.refuse(w, r, st.Backend, http.StatusBadRequest, FailCodeRefused, "The authorization server did not accept the sign-in ("+refused.Code+"). Nothing was stored; start again.")
		return
	case errors.As(err, &unusable):
		// Issued, and of no use: revoked rather than left valid where nobody holds them.
		issued, done := unusable.tokens(d, c), "They were revoked and nothing was stored"
		if issued != nil {
			s.revokeTokens(ctx, b, issued)
		} else {
			done = "Nothing was stored"
		}
		s.log.LogAttrs(ctx, slog.LevelWarn, "useroauth: unusable tokens refused", slog.String("upstream", st.Backend), slog.String("error", err.Error()))
		s.page.refuse(w, r, st.Backend, http.StatusBadGateway, FailUnusable, "The authorization server issued tokens "+unusable.Reason()+
			". "+done+": trying again gets the same answer until the server's configuration for the gateway changes.")
		return
	case err != nil:
		s.log.LogAttrs(ctx, slog.LevelWarn, "useroauth: code exchange failed", slog.String("upstream", st.Backend), slog.String("error", err.Error()))
		s.page.authServerDown(w, r, st.Backend, err)
		return
	}
	t := &vault.Token{Issuer: st.Issuer, Subject: st.Subject, Backend: st.Backend, Resource: b.cfg.resource(),
		AuthServer: d.as.Issuer, ClientID: c.ID, AccessToken: tr.AccessToken, RefreshToken: tr.RefreshToken,
		Expiry: tokenExpiry(tr, tr.RefreshToken, s.now()), Scope: cmp.Or(tr.Scope, askedScope(st, d)), Connected: s.now()}
	if err := s.keep(ctx, b, t); err != nil {
		// Nothing is stored: the tokens just issued are revoked rather than left valid
		// somewhere the gateway cannot reach them.
		s.revokeTokens(ctx, b, t)
		if errors.Is(err, vault.ErrFull) || errors.Is(err, vault.ErrTooLarge) {
			s.page.refuse(w, r, st.Backend, http.StatusConflict, FailFull, "The tokens could not be kept: "+err.Error()+". Nothing was stored.")
			return
		}
		s.page.storeDown(w, r, st.Backend)
		return
	}
	s.obs.Consent(st.Backend, ConsentCompleted, "")
	s.log.LogAttrs(ctx, slog.LevelInfo, "useroauth: connected", slog.String("subject", callerkey.Of(st.Issuer, st.Subject)),
		slog.String("upstream", st.Backend), slog.String("auth_server", d.as.Issuer), slog.String("scope", loggedScope(tr.Scope)))
	v := s.backendView(ctx, st.Backend, false)
	s.page.render(w, http.StatusOK, pageData{Kind: "done", Title: "Connected", Backend: &v,
		User:    &webpage.User{Subject: webpage.NameOf(st.Subject), Issuer: webpage.NameOf(st.Issuer)},
		Message: "Your account is connected. Go back to your client: the call can continue. You can close this page."})
}

// askedScope is the scope st's round trip asked: the one it carries, or for a state sealed
// before states carried it, the one d's server is asked now.
func askedScope(st *state, d *discovered) string {
	if st.Scope != nil {
		return *st.Scope
	}
	return strings.Join(d.scopes, " ")
}

// keep stores t, a new connection, in place of any record its caller held for the backend, and
// revokes the tokens of the record it replaced (a connect page opened before the first connect
// finished, or a user changing accounts): left alone, they would stay valid at the server with
// nobody holding them. The record is replaced only while it is the one read (Swap), so the
// tokens revoked are those replaced, not older ones a refresh on any replica rotated away in
// between. With no record, t is added only while there is still none (Add): of two first
// connects completing together, on any replicas, the second finds the first's record and
// replaces it, revoking its tokens, instead of overwriting a grant nobody would revoke.
func (s *Service) keep(ctx context.Context, b *backendState, t *vault.Token) error {
	who := vault.Caller{Issuer: t.Issuer, Subject: t.Subject}
	for range maxKeepReads {
		old, err := s.vault.Get(ctx, who, t.Backend)
		if old == nil {
			// None, or the store not answering (Add says so).
			err = s.vault.Add(ctx, t)
			switch {
			case errors.Is(err, vault.ErrExists):
				continue // another connect stored one meanwhile: replace it
			case errors.Is(err, vault.ErrFull) && removeRetired(ctx, s, who):
				continue // the budget held records of backends no longer configured
			}
			return err
		}
		swapped, serr := s.vault.Swap(ctx, old, t)
		switch {
		case serr != nil:
			return serr
		case !swapped:
			continue // changed meanwhile: read it again
		case err == nil && old.AccessToken != t.AccessToken:
			// err != nil is a record that does not open: nothing in it to revoke.
			s.revokeTokens(ctx, b, &old.Token)
		}
		return nil
	}
	return fmt.Errorf("%w: the record kept changing while it was being replaced", store.ErrUnavailable)
}

// removeRetired removes who's records of backends the configuration no longer has (renamed,
// removed, or no longer per-user), which count against the caller's budget of records (one per
// configured backend) until they expire unused, though no page shows them. It reports whether
// any went.
func removeRetired(ctx context.Context, s *Service, who vault.Caller) bool {
	gone, err := s.vault.RemoveRetired(ctx, who, s.PerUser)
	if len(gone) > 0 {
		s.log.LogAttrs(ctx, slog.LevelInfo, "useroauth: records of backends no longer configured removed",
			slog.String("subject", callerkey.Of(who.Issuer, who.Subject)), slog.Int("records", len(gone)))
	}
	return len(gone) > 0 && err == nil
}

// maxKeepReads bounds keep's reads of a record that changes under it (refreshes, disconnects,
// other connects), each one a write that won: past it the connect is retryable.
const maxKeepReads = 4

// maxLoggedScope bounds the scope a log line repeats from the authorization server's answer.
const maxLoggedScope = 512

// loggedScope is scope as a log line shows it (cutText to maxLoggedScope), so a server cannot
// make every connection's line as long as its answer.
func loggedScope(scope string) string {
	return cutText(scope, maxLoggedScope)
}

// cutText is s, text a server sent, whole up to n bytes, else cut at a character boundary
// before n and marked with its full length.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "… (" + strconv.Itoa(len(s)) + " bytes)"
}
