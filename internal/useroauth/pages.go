package useroauth

import (
	"context"
	"crypto/rand"
	"errors"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/mcp-gateway/gateway/internal/callerkey"
	"github.com/mcp-gateway/gateway/internal/vault"
	"github.com/mcp-gateway/gateway/internal/webpage"
)

// Page bounds.
const (
	// maxFormBytes bounds a form POST's body: a CSRF token.
	maxFormBytes = 4 << 10
	// pageTimeout bounds the work of one page request (discovery, the store, revocation).
	pageTimeout = 20 * time.Second
	// csrfPurpose separates the connect pages' form tokens from every other page's.
	csrfPurpose = "useroauth"
)

// ServeHTTP serves the connect pages under Path: the list of the signed-in user's per-user
// backends (connect, disconnect), a call's connect link, the authorization server's callback and
// the Client ID Metadata Document. Every page carries the pages' security headers.
//
// HEAD is served only where a GET changes nothing whoever sends it (the metadata document, the
// redirect to the list): the callback spends a code and completes a flow, and the list and link
// pages of a browser not signed in start a sign-in (replacing its cookies), so a HEAD from a
// link prefetcher or a mail scanner gets 405 there and changes nothing.
func (s *Service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	webpage.SetSecurityHeaders(w.Header())
	rest, ok := strings.CutPrefix(r.URL.Path, s.cfg.Path+"/")
	get := r.Method == http.MethodGet
	post := r.Method == http.MethodPost
	safe := get || r.Method == http.MethodHead
	doc, isDoc := s.documentOf(rest)
	switch {
	case !ok && r.URL.Path == s.cfg.Path && safe:
		http.Redirect(w, r, s.prefix.public(s.cfg.Path+"/"), http.StatusSeeOther)
	case !ok:
		s.page.refuse(w, r, "", http.StatusNotFound, FailBadRequest, "There is nothing here.")
	case isDoc && safe:
		s.oauth.metadataDocument(w, doc)
	case rest == "" && get:
		s.list(w, r, "")
	case strings.HasPrefix(rest, callbackDir[1:]) && get:
		s.callback(w, r, rest[len(callbackDir)-1:])
	case rest == callbackDir[1:len(callbackDir)-1] && get:
		// The one callback of earlier versions: no round trip is sent here any more.
		s.page.refuse(w, r, "", http.StatusBadRequest, FailBadState, "This answer from the authorization server is not one the gateway asked for.")
	case strings.HasPrefix(rest, "l/") && get:
		s.showLink(w, r, rest[2:])
	case strings.HasPrefix(rest, "l/") && post:
		s.startFromLink(w, r, rest[2:])
	case strings.HasPrefix(rest, "b/") && post:
		s.backendAction(w, r, rest[2:])
	case get || post:
		s.page.refuse(w, r, "", http.StatusNotFound, FailBadRequest, "There is nothing here.")
	default:
		notAllowed(s.page, w, r, rest)
	}
}

// notAllowed answers a method a page does not take, naming those it does (Allow): HEAD is
// among them only on the pages whose GET changes nothing.
func notAllowed(page pageWriter, w http.ResponseWriter, r *http.Request, rest string) {
	allow := "GET, POST"
	switch {
	case strings.HasPrefix(rest, "b/"):
		allow = "POST"
	case rest == "" || strings.HasPrefix(rest, callbackDir[1:]):
		allow = "GET"
	}
	w.Header().Set("Allow", allow)
	page.refuse(w, r, "", http.StatusMethodNotAllowed, FailBadRequest, "This page takes "+allow+" only.")
}

// documentOf reads rest (a path under Path) as the Client ID Metadata Document of a backend:
// ok when it is one, of a backend registered by metadata document, named backend. The path is
// read here only, so the test of it and the backend served cannot come from two readings.
func (s *Service) documentOf(rest string) (backend string, ok bool) {
	name, inDir := strings.CutPrefix(rest, metadataDocumentDir[1:])
	name, isJSON := strings.CutSuffix(name, ".json")
	st := s.backends[name]
	return name, inDir && isJSON && st != nil && st.cfg.registration() == RegistrationMetadataDocument
}

// signedIn returns the signed-in user, or sends the browser to sign in (back to this page) and
// returns false.
func (s *Service) signedIn(w http.ResponseWriter, r *http.Request) (*webpage.Session, bool) {
	again := webpage.SignInAgain(r)
	if sess, ok := s.deps.SignIn.Session(r); ok && !again {
		return sess, true
	}
	if err := s.deps.SignIn.Start(w, r, s.prefix.public(r.URL.Path), again); err != nil {
		s.page.issuerDown(w, r, err)
	}
	return nil, false
}

// list shows the signed-in user's per-user backends, each with Connect or Disconnect; note, if
// any, says what was just done.
func (s *Service) list(w http.ResponseWriter, r *http.Request, note string) {
	sess, ok := s.signedIn(w, r)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), pageTimeout)
	defer cancel()
	have, err := s.vault.Subject(ctx, vault.Caller{Issuer: sess.Issuer, Subject: sess.Subject})
	if err != nil {
		s.page.storeDown(w, r, "")
		return
	}
	p := pageData{Kind: "list", Title: "Connected accounts", Message: note, User: webpage.UserOf(sess)}
	var targets []string
	for _, name := range s.order {
		v := s.backendView(ctx, name, false)
		// The token is bound to the path the form's POST is served at (backendAction), the
		// form posts to where the browser reaches that path.
		action := s.cfg.Path + "/b/" + name
		if e, ok := have[name]; ok {
			v.Connected, v.Since, v.Granted = true, e.Connected.UTC().Format("2006-01-02 15:04 UTC"), webpage.Visible(e.Scope)
			action += "/disconnect"
		} else {
			targets = append(targets, s.backends[name].formTargets(ctx)...)
		}
		v.Action, v.CSRF = s.prefix.public(action), webpage.CSRFToken(sess, csrfPurpose, action, nil)
		p.Backends = append(p.Backends, v)
	}
	if len(p.Backends) > 0 {
		if err := webpage.Shown(ctx, s.deps.Store, sess, csrfPurpose, listForms); err != nil {
			s.page.storeDown(w, r, "")
			return
		}
	}
	webpage.AllowFormsTo(w.Header(), targets...)
	s.page.render(w, http.StatusOK, p)
}

// listForms names the list page's forms together for the dwell guard (webpage.Shown): a form
// of it counts once the page has been on screen for webpage.MinDwell.
const listForms = "list"

// showLink shows a call's connect link: which backend, which authorization server and scopes,
// and Continue, to the caller who made the call only.
func (s *Service) showLink(w http.ResponseWriter, r *http.Request, tok string) {
	l, ok := s.linkFor(w, r, tok)
	if !ok {
		return
	}
	sess, ok := s.signedIn(w, r)
	if !ok || !s.sameUser(w, r, sess, l.Issuer, l.Subject, l.Backend, r.URL.Path) {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), pageTimeout)
	defer cancel()
	if _, err := s.vault.Get(ctx, vault.Caller{Issuer: l.Issuer, Subject: l.Subject}, l.Backend); err == nil {
		v := s.backendView(ctx, l.Backend, false)
		s.page.render(w, http.StatusOK, pageData{Kind: "done", Title: "Already connected", User: webpage.UserOf(sess), Backend: &v,
			Message: "Your account is connected already. Go back to your client: the call can continue."})
		return
	}
	v := s.backendView(ctx, l.Backend, true)
	if v.AuthServer.Runes == 0 {
		s.page.authServerDown(w, r, l.Backend, nil)
		return
	}
	v.Action = s.prefix.public(r.URL.Path)
	v.CSRF = webpage.CSRFToken(sess, csrfPurpose, "l/"+l.ID, nil)
	if err := webpage.Shown(ctx, s.deps.Store, sess, csrfPurpose, "l/"+l.ID); err != nil {
		s.page.storeDown(w, r, l.Backend)
		return
	}
	webpage.AllowFormsTo(w.Header(), s.backends[l.Backend].formTargets(ctx)...)
	s.page.render(w, http.StatusOK, pageData{Kind: "connect", Title: "Connect your account?", User: webpage.UserOf(sess), Backend: &v})
}

// startFromLink starts the authorization round trip from a call's connect link.
func (s *Service) startFromLink(w http.ResponseWriter, r *http.Request, tok string) {
	sess, ok := s.checkForm(w, r)
	if !ok {
		return
	}
	l, ok := s.linkFor(w, r, tok)
	if !ok || !s.sameUser(w, r, sess, l.Issuer, l.Subject, l.Backend, r.URL.Path) {
		return
	}
	if !formToken(s.page, s.deps.Store, w, r, sess, "l/"+l.ID, "l/"+l.ID, l.Backend) {
		return
	}
	s.start(w, r, sess, l.Backend)
}

// backendAction is a form of the list page: connect (b/NAME) or disconnect (b/NAME/disconnect).
func (s *Service) backendAction(w http.ResponseWriter, r *http.Request, rest string) {
	sess, ok := s.checkForm(w, r)
	if !ok {
		return
	}
	name, disconnect := strings.CutSuffix(rest, "/disconnect")
	if !s.PerUser(name) {
		s.page.refuse(w, r, "", http.StatusNotFound, FailBadRequest, "There is no such backend.")
		return
	}
	if !formToken(s.page, s.deps.Store, w, r, sess, r.URL.Path, listForms, name) {
		return
	}
	if !disconnect {
		s.start(w, r, sess, name)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), pageTimeout)
	defer cancel()
	who := vault.Caller{Issuer: sess.Issuer, Subject: sess.Subject}
	_, revoked, err := s.disconnect(ctx, who, name, "user")
	if err != nil {
		s.page.storeDown(w, r, name)
		return
	}
	r.URL.Path = s.cfg.Path + "/"
	s.list(w, r, disconnectedNote(name, revoked))
}

// formToken checks the token of a connect page's form for id (a link's "l/ID", a list form's
// path): from this session's page, and posted at least webpage.MinDwell after the page with
// the form (shown: a link's "l/ID", listForms) was shown, as the approval page's Approve. A
// page elsewhere can make a double-click land on Connect or Disconnect (which revokes the
// user's tokens) as the page appears; a reading user clicks later. It answers the request
// itself (through page; st is the shared store) and returns false otherwise.
func formToken(page pageWriter, st webpage.DwellStore, w http.ResponseWriter, r *http.Request, sess *webpage.Session, id, shown, backend string) bool {
	if _, ok := webpage.OpenCSRF(sess, csrfPurpose, id, r.PostForm.Get("csrf")); !ok {
		page.refuse(w, r, backend, http.StatusForbidden, FailCSRF, "This form was not sent from the connect page, so nothing was done.")
		return false
	}
	ctx, cancel := context.WithTimeout(r.Context(), pageTimeout)
	defer cancel()
	dwelt, err := webpage.Dwelt(ctx, st, sess, csrfPurpose, shown)
	switch {
	case err != nil:
		page.storeDown(w, r, backend)
		return false
	case !dwelt:
		page.refuse(w, r, backend, http.StatusConflict, FailTooSoon, "The button was clicked less than a second after the page "+
			"appeared, so nothing was done: clicks that fast may have been meant for another page. Go back, check the page and click again.")
		return false
	}
	return true
}

// disconnectedNote is what the list page says after a disconnect: that the tokens were revoked
// only when the authorization server revoked them, else that they stay valid there until they
// expire, and where the user can end them.
func disconnectedNote(name string, revoked error) string {
	const rest = " They stay valid there until they expire; to end them now, remove the gateway's access in your account at that server."
	switch {
	case revoked == nil:
		return "Disconnected " + name + ": its tokens were revoked at the authorization server and removed."
	case errors.Is(revoked, errNoRevocation):
		return "Disconnected " + name + ": the gateway removed its tokens. The authorization server offers no revocation." + rest
	}
	return "Disconnected " + name + ": the gateway removed its tokens, but the authorization server could not be asked to revoke them." + rest
}

// checkForm checks a form POST: from the pages' own origin, by a signed-in user, readable.
func (s *Service) checkForm(w http.ResponseWriter, r *http.Request) (*webpage.Session, bool) {
	if !webpage.FromPage(r.Header, s.deps.BaseURL) {
		s.page.refuse(w, r, "", http.StatusForbidden, FailCSRF, "This form did not come from the connect page.")
		return nil, false
	}
	sess, ok := s.deps.SignIn.Session(r)
	if !ok {
		s.page.refuse(w, r, "", http.StatusForbidden, FailBadRequest, "You are not signed in (or your session ended). Open the page again.")
		return nil, false
	}
	if err := webpage.ReadForm(w, r, maxFormBytes); err != nil {
		s.page.refuse(w, r, "", http.StatusBadRequest, FailBadRequest, "The form could not be read.")
		return nil, false
	}
	return sess, true
}

// linkFor opens a connect link, answering the request itself when it is not valid.
func (s *Service) linkFor(w http.ResponseWriter, r *http.Request, tok string) (*link, bool) {
	l, expired, ok := s.openLink(tok)
	switch {
	case !ok:
		s.page.refuse(w, r, "", http.StatusNotFound, FailBadState, "This connect link is not valid.")
		return nil, false
	case expired:
		s.page.refuse(w, r, l.Backend, http.StatusGone, FailExpired, "This connect link has expired. Retry the action in your client to get a new one.")
		return nil, false
	}
	return l, true
}

// sameUser checks that the signed-in user is the caller a link or state is for; otherwise the
// page refuses, and the operator sees it in the logs. The refusal links to a fresh sign-in at
// again, a page the pages serve by GET (a link's page, the list).
func (s *Service) sameUser(w http.ResponseWriter, r *http.Request, sess *webpage.Session, iss, sub, backend, again string) bool {
	if sess.Issuer == iss && sess.Subject == sub {
		return true
	}
	s.obs.Consent(backend, ConsentFailed, FailWrongUser)
	s.log.LogAttrs(r.Context(), slog.LevelWarn, "useroauth: wrong user on the connect page", slog.String("upstream", backend),
		slog.String("subject", callerkey.Of(sess.Issuer, sess.Subject)), slog.String("caller", callerkey.Of(iss, sub)))
	s.page.render(w, http.StatusForbidden, pageData{Kind: "refused", Title: "Not your link",
		Message: "You are signed in as " + webpage.Display(sess) + ", but this link was made for another user. " +
			"Only the user whose call asked can connect an account with it. Nothing was done.",
		SignInAgain: s.prefix.public(again) + "?signin=again"})
	return false
}

// start sends the browser to the backend's authorization server: authorization code with PKCE
// (S256), the sealed state, the resource, and the flow cookie that ties the state to this
// browser.
func (s *Service) start(w http.ResponseWriter, r *http.Request, sess *webpage.Session, backend string) {
	st := s.backends[backend]
	ctx, cancel := context.WithTimeout(r.Context(), pageTimeout)
	defer cancel()
	d, c, err := s.serverAndClient(ctx, st)
	if err != nil {
		s.log.LogAttrs(ctx, slog.LevelWarn, "useroauth: authorization server unavailable", slog.String("upstream", backend),
			slog.String("error", err.Error()))
		s.page.authServerDown(w, r, backend, err)
		return
	}
	exp := s.now().Add(s.cfg.ConsentTTL)
	f := flow{Nonce: rand.Text(), Verifier: oauth2.GenerateVerifier(), Expiry: exp}
	scope := strings.Join(d.scopes, " ")
	stateTok, err1 := sealJSON(s.states, state{Issuer: sess.Issuer, Subject: sess.Subject, Backend: backend,
		AuthServer: d.as.Issuer, ClientID: c.ID, Scope: &scope, Nonce: f.Nonce, Expiry: exp})
	flowTok, err2 := sealJSON(s.flows, f)
	authURL, err3 := url.Parse(d.as.AuthorizationEndpoint)
	if err := errors.Join(err1, err2, err3); err != nil {
		s.page.refuse(w, r, backend, http.StatusInternalServerError, FailBadRequest, "The request to the authorization server could not be made.")
		return
	}
	q := authURL.Query()
	q.Set("response_type", "code")
	q.Set("client_id", c.ID)
	q.Set("redirect_uri", s.oauth.redirectURL(backend))
	q.Set("state", stateTok)
	q.Set("code_challenge", oauth2.S256ChallengeFromVerifier(f.Verifier))
	q.Set("code_challenge_method", "S256")
	q.Set("resource", st.cfg.resource())
	if scope != "" {
		q.Set("scope", scope)
	}
	authURL.RawQuery = q.Encode()
	webpage.SetCookie(w, flowCookiePrefix+backend, flowTok, s.cfg.ConsentTTL)
	s.obs.Consent(backend, ConsentStarted, "")
	http.Redirect(w, r, authURL.String(), http.StatusSeeOther)
}

// backendView is how a page shows backend; with discover, its authorization server and scopes
// are looked up (empty when that fails).
func (s *Service) backendView(ctx context.Context, backend string, discover bool) backendView {
	v := backendView{Name: webpage.NameOf(backend)}
	if !discover {
		return v
	}
	if d, err := s.backends[backend].disc.get(ctx); err == nil {
		v.AuthServer = webpage.NameOf(d.as.Issuer)
		for _, sc := range d.scopes {
			v.Scopes = append(v.Scopes, webpage.NameOf(sc))
		}
	}
	return v
}

// formTargets is where a Connect form of the backend leads the browser: its authorization
// server's authorization endpoint, which the page's form-action must allow (nothing when it
// cannot be discovered now: the form then ends on the gateway's own error page).
func (st *backendState) formTargets(ctx context.Context) []string {
	d, err := st.disc.get(ctx)
	if err != nil {
		return nil
	}
	return []string{d.as.AuthorizationEndpoint}
}

// pageData is what the template renders. Kind is "list" (every per-user backend), "connect" (one
// backend and Continue), "done" (connected) or "refused".
type pageData struct {
	Kind, Title, Message string
	Style                template.CSS
	User                 *webpage.User
	Backend              *backendView
	Backends             []backendView
	// SignInAgain, on a refusal, links to a fresh sign-in for the same page.
	SignInAgain string
}

// backendView is one backend as a page shows it, with the form acting on it.
type backendView struct {
	Name, AuthServer webpage.Name
	Scopes           []webpage.Name
	Connected        bool
	Since            string
	Granted          webpage.Text
	Action, CSRF     string
}

// pathPrefix is BaseURL's path: what the browser's requests carry before the paths the pages
// are served at, since the balancer in front of the gateway takes it off what it forwards.
type pathPrefix string

// public is where the browser reaches path, a path the pages are served at.
func (p pathPrefix) public(path string) string { return string(p) + path }
