package approval

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-gateway/gateway/internal/callerkey"
	"github.com/mcp-gateway/gateway/internal/webpage"
)

// maxFormBytes bounds a decision POST's body: a CSRF token and one word.
const maxFormBytes = 4 << 10

// ServeHTTP serves everything under Path: the call pages (GET shows, POST decides) and the
// sign-in callback. Every response carries the page's security headers.
//
// A call's page takes no HEAD: its GET starts a sign-in in a browser not signed in (replacing
// the sign-in cookie of one under way) and signs the browser out for "sign in as another
// user", so a HEAD from a link prefetcher or a scanner sending the browser's cookies gets 405
// and changes nothing, as on the connect pages.
func (s *Service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	webpage.SetSecurityHeaders(w.Header())
	rest, ok := strings.CutPrefix(r.URL.Path, s.cfg.Path+"/")
	switch {
	case !ok:
		s.refuse(w, http.StatusNotFound, RefusedBadRequest, "There is nothing here.")
	case rest == "callback" && r.Method == http.MethodGet:
		s.callback(w, r)
	case strings.HasPrefix(rest, "c/") && validID(rest[2:]) && r.Method == http.MethodGet:
		s.show(w, r, rest[2:])
	case strings.HasPrefix(rest, "c/") && validID(rest[2:]) && r.Method == http.MethodPost:
		s.decide(w, r, rest[2:])
	case strings.HasPrefix(rest, "c/") && validID(rest[2:]):
		w.Header().Set("Allow", "GET, POST")
		s.refuse(w, http.StatusMethodNotAllowed, RefusedBadRequest, "This page takes GET and POST only.")
	default:
		s.refuse(w, http.StatusNotFound, RefusedUnknown, "This approval link is not valid.")
	}
}

// show renders the call's page, after sign-in.
func (s *Service) show(w http.ResponseWriter, r *http.Request, id string) {
	sess, ok := s.signin.Session(r)
	again := webpage.SignInAgain(r)
	if !ok || again {
		s.startSignIn(w, r, id, again)
		return
	}
	s.present(w, r, sess, id, stepAsk, http.StatusOK, "")
}

// present shows call id to the signed-in user: at step, with its decision forms, while it is
// undecided; its outcome once decided. note, if any, is said below the forms.
func (s *Service) present(w http.ResponseWriter, r *http.Request, sess *session, id string, step byte, status int, note string) {
	c, ok := s.loadFor(w, r.Context(), sess, id)
	if !ok {
		return
	}
	v, err := s.ledger.verdict(r.Context(), id, c.Digest)
	if err != nil {
		s.unavailable(w, err)
		return
	}
	if v != Undecided {
		s.render(w, http.StatusOK, s.outcomePage(c, sess, v, "This call was already decided."))
		return
	}
	p, err := s.askPage(c, sess, step, note)
	if err != nil {
		s.refuse(w, http.StatusUnprocessableEntity, RefusedBadRequest, "The call's arguments cannot be shown, so it cannot be approved here.")
		return
	}
	if step == stepAsk {
		s.obs.PageShown()
	} else if err := webpage.Shown(r.Context(), s.ledger.store, sess, csrfPurpose, id); err != nil {
		// Without the store's record of when the step was shown, its Approve could never be
		// judged: nothing is shown that could not be decided.
		s.unavailable(w, err)
		return
	}
	s.render(w, status, p)
}

// decide takes a decision form. Deny is recorded at once. Approve is two steps: the first
// shows the confirmation step, whose own Approve sits where Deny was, and that one counts
// only once the confirmation has been on screen for MinDwell, by the shared store's clock
// (webpage.Shown), whichever replicas show the step and receive the click. So clicks that a page elsewhere
// makes land on the page as it appears (double-clickjacking) cannot approve.
func (s *Service) decide(w http.ResponseWriter, r *http.Request, id string) {
	if !webpage.FromPage(r.Header, s.cfg.BaseURL) {
		s.refuse(w, http.StatusForbidden, RefusedOriginMismatch, "This decision did not come from the approval page.")
		return
	}
	sess, ok := s.signin.Session(r)
	if !ok {
		s.refuse(w, http.StatusForbidden, RefusedNoSession, "You are not signed in (or your session ended). Open the approval link again.")
		return
	}
	if err := webpage.ReadForm(w, r, maxFormBytes); err != nil {
		s.refuse(w, http.StatusBadRequest, RefusedBadRequest, "The decision could not be read.")
		return
	}
	step, ok := openCSRF(sess, id, r.PostForm.Get("csrf"))
	if !ok {
		s.refuse(w, http.StatusForbidden, RefusedCSRF, "This decision was not sent from the approval page, so it was not recorded.")
		return
	}
	var v Verdict
	dwelt := false
	if d := r.PostForm.Get("decision"); d == "confirm" && step == stepConfirm {
		var err error
		if dwelt, err = webpage.Dwelt(r.Context(), s.ledger.store, sess, csrfPurpose, id); err != nil {
			s.unavailable(w, err)
			return
		}
	}
	switch d := r.PostForm.Get("decision"); {
	case d == "deny":
		v = Denied
	case d == "approve" && step == stepAsk:
		s.present(w, r, sess, id, stepConfirm, http.StatusOK, "")
		return
	case d == "confirm" && step == stepConfirm && dwelt:
		v = Approved
	case d == "confirm" && step == stepConfirm:
		s.obs.Refused(RefusedTooSoon)
		s.log.LogAttrs(r.Context(), slog.LevelWarn, "approval: confirmation too soon after the page appeared",
			slog.String("call_ref", CallRef(id)), slog.String("subject", callerkey.Of(sess.Issuer, sess.Subject)))
		s.present(w, r, sess, id, stepConfirm, http.StatusConflict, "Approve was clicked less than a second after this page "+
			"appeared, so it was not recorded: clicks that fast may have been meant for another page. Check the call and approve again.")
		return
	case d == "approve" || d == "confirm":
		s.refuse(w, http.StatusForbidden, RefusedCSRF, "This decision was not sent from the approval page's current step, so it was not recorded.")
		return
	default:
		s.refuse(w, http.StatusBadRequest, RefusedBadRequest, "Choose Approve or Deny.")
		return
	}
	s.record(w, r, sess, id, v)
}

// record records decision v of the signed-in user on call id, once.
func (s *Service) record(w http.ResponseWriter, r *http.Request, sess *session, id string, v Verdict) {
	c, ok := s.loadFor(w, r.Context(), sess, id)
	if !ok {
		return
	}
	by := callerkey.Of(sess.Issuer, sess.Subject)
	switch err := s.ledger.decide(r.Context(), c, v, by); {
	case errors.Is(err, ErrDecided):
		s.obs.Refused(RefusedDecided)
		prev, _ := s.ledger.verdict(r.Context(), id, c.Digest)
		s.render(w, http.StatusConflict, s.outcomePage(c, sess, prev, "This call was already decided; the first decision stands."))
		return
	case errors.Is(err, ErrUnknown):
		s.refuse(w, http.StatusGone, RefusedExpired, "This call expired before the decision was recorded. Nothing will run; the client will ask again.")
		return
	case err != nil:
		s.unavailable(w, err)
		return
	}
	s.obs.Decided(v)
	s.log.LogAttrs(r.Context(), slog.LevelInfo, "approval decision",
		slog.String("decision", string(v)), slog.String("call_ref", CallRef(id)),
		slog.String("subject", by), slog.String("upstream", c.Upstream), slog.String("name", c.Tool),
		slog.Time("at", s.now().UTC()))
	s.render(w, http.StatusOK, s.outcomePage(c, sess, v, ""))
}

// loadFor loads the call and checks that it is live and that the signed-in user made it; it
// answers the request itself and returns false otherwise.
func (s *Service) loadFor(w http.ResponseWriter, ctx context.Context, sess *session, id string) (Call, bool) {
	c, err := s.ledger.load(ctx, id)
	switch {
	case errors.Is(err, ErrUnknown):
		s.refuse(w, http.StatusNotFound, RefusedUnknown, "This approval link is unknown, has expired, or its call was "+
			"already run, denied or declined in your client. Nothing more will run; retry the action in your client to be asked again.")
		return Call{}, false
	case err != nil:
		s.unavailable(w, err)
		return Call{}, false
	case !s.now().Before(c.Expiry):
		s.refuse(w, http.StatusGone, RefusedExpired, "This approval link has expired. Nothing will run; retry the action in your client to be asked again.")
		return Call{}, false
	case sess.Issuer != c.Issuer || sess.Subject != c.Subject:
		// Someone signed in who did not make the call: a mix-up, or someone trying calls
		// that are not theirs. Either way the operator should see it.
		s.obs.Refused(RefusedWrongUser)
		s.log.LogAttrs(ctx, slog.LevelWarn, "approval: wrong user", slog.String("call_ref", CallRef(id)),
			slog.String("subject", callerkey.Of(sess.Issuer, sess.Subject)), slog.String("caller", callerkey.Of(c.Issuer, c.Subject)),
			slog.String("upstream", c.Upstream), slog.String("name", c.Tool))
		s.render(w, http.StatusForbidden, pageData{Kind: "refused", Title: "Not your call",
			Message: "You are signed in as " + webpage.Display(sess) + ", but this call was made by another user. " +
				"Only the user who made a call can approve it. Nothing was recorded.",
			SignInAgain: s.callPath(id) + "?signin=again"})
		return Call{}, false
	}
	return c, true
}

// startSignIn sends the browser to the issuer to sign in (webpage.SignIn), to come back to
// the page of call id.
func (s *Service) startSignIn(w http.ResponseWriter, r *http.Request, id string, again bool) {
	if err := s.signin.Start(w, r, s.callPath(id), again); err != nil {
		s.issuerDown(w, r, err)
	}
}

// callback completes a sign-in the gateway's pages started, this one's or another page's
// (the connect page signs users in the same way, through this callback): a session cookie,
// then back to the page that asked.
func (s *Service) callback(w http.ResponseWriter, r *http.Request) {
	ret, err := s.signin.Finish(w, r)
	var failed *webpage.ErrSignIn
	switch {
	case errors.As(err, &failed):
		s.signInFailed(w, r, failed.Why, failed.Err)
		return
	case err != nil:
		s.issuerDown(w, r, err)
		return
	}
	s.obs.SignIn(true)
	http.Redirect(w, r, ret, http.StatusSeeOther)
}

func (s *Service) signInFailed(w http.ResponseWriter, r *http.Request, why string, err error) {
	s.obs.SignIn(false)
	attrs := []slog.Attr{slog.String("why", why)}
	if err != nil {
		attrs = append(attrs, slog.String("error", err.Error()))
	}
	s.log.LogAttrs(r.Context(), slog.LevelWarn, "approval: sign-in failed", attrs...)
	s.refuse(w, http.StatusBadRequest, RefusedSignIn, "Sign-in failed: "+why+". Open the approval link again.")
}

// issuerDown answers a sign-in that cannot reach the identity provider: 503, with when the
// page will try the provider again. Nothing was recorded; the user retries.
func (s *Service) issuerDown(w http.ResponseWriter, r *http.Request, err error) {
	retry := 5 * time.Second
	var ue *webpage.UnreachableError
	if errors.As(err, &ue) {
		retry = ue.RetryAfter
	}
	secs := max(int((retry+time.Second-1)/time.Second), 1)
	s.log.LogAttrs(r.Context(), slog.LevelWarn, "approval: issuer unavailable", slog.String("issuer", s.cfg.Issuer),
		slog.String("error", err.Error()))
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	s.refuse(w, http.StatusServiceUnavailable, RefusedIssuerDown, fmt.Sprintf("The identity provider (%s) cannot be "+
		"reached, so you cannot sign in now. Nothing was recorded. Try again in %d seconds.", s.cfg.Issuer, secs))
}

func (s *Service) unavailable(w http.ResponseWriter, err error) {
	s.log.Warn("approval: store unavailable", "error", err)
	w.Header().Set("Retry-After", "1")
	s.refuse(w, http.StatusServiceUnavailable, RefusedUnavailable, "The approval service is unavailable; nothing was recorded. Try again in a moment.")
}

func (s *Service) refuse(w http.ResponseWriter, status int, reason, msg string) {
	s.obs.Refused(reason)
	s.render(w, status, pageData{Kind: "refused", Title: "Not possible", Message: msg})
}

// callPath is the path the browser reaches call id's page at.
func (s *Service) callPath(id string) string { return s.public + "/c/" + id }
