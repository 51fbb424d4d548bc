package devissuer

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// The authorization code flow (RFC 6749 §4.1) with PKCE (RFC 7636, S256 only) and OpenID
// Connect ID tokens, for relying parties that sign users in through a browser, such as the
// gateway's approval page. The sign-in page asks only for a username among Options.Users: no
// password, no session, a development convenience that must never face the network.

const (
	authorizePath = "/authorize"
	// codeTTL bounds how long an issued code can be exchanged.
	codeTTL = time.Minute
	// maxPendingCodes bounds the codes waiting to be exchanged; a sign-in beyond it is refused.
	maxPendingCodes = 256
	// PKCE verifiers are 43 to 128 characters (RFC 7636 §4.1), so S256 challenges are 43.
	minVerifierLen, maxVerifierLen = 43, 128
)

// WebClient is a client of the authorization code flow.
type WebClient struct {
	// Secret authenticates the client at the token endpoint (client_secret_basic or
	// client_secret_post). Empty: a public client, which PKCE alone protects.
	Secret string
	// RedirectURIs are the exact redirect URIs the client may use.
	RedirectURIs []string
}

// authRequest is an authorization request's parameters, carried through the sign-in form.
type authRequest struct {
	ClientID, RedirectURI, ResponseType, Scope, State, Nonce, Challenge, Method string
}

func readAuthRequest(v url.Values) authRequest {
	return authRequest{ClientID: v.Get("client_id"), RedirectURI: v.Get("redirect_uri"),
		ResponseType: v.Get("response_type"), Scope: v.Get("scope"), State: v.Get("state"),
		Nonce: v.Get("nonce"), Challenge: v.Get("code_challenge"), Method: v.Get("code_challenge_method")}
}

// pendingCode is what an issued code stands for until it is exchanged.
type pendingCode struct {
	req     authRequest
	user    string
	expires time.Time
}

// codes holds the issued, not yet exchanged codes.
type codes struct {
	mu      sync.Mutex
	pending map[string]pendingCode
}

// issue stores p under a fresh code; false when too many codes are pending.
func (c *codes) issue(p pendingCode, now time.Time) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pending == nil {
		c.pending = map[string]pendingCode{}
	}
	if len(c.pending) >= maxPendingCodes {
		for k, v := range c.pending {
			if !now.Before(v.expires) {
				delete(c.pending, k)
			}
		}
		if len(c.pending) >= maxPendingCodes {
			return "", false
		}
	}
	code := rand.Text()
	c.pending[code] = p
	return code, true
}

// take removes and returns the code's record: a code is exchanged once, even when the
// exchange then fails.
func (c *codes) take(code string) (pendingCode, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.pending[code]
	delete(c.pending, code)
	return p, ok
}

// checkClient reports whether the request names a registered client and one of its redirect
// URIs: only then may errors be sent back to the redirect URI (RFC 6749 §4.1.2.1).
func (i *Issuer) checkClient(req authRequest) bool {
	c, ok := i.opts.WebClients[req.ClientID]
	return ok && req.ClientID != "" && slices.Contains(c.RedirectURIs, req.RedirectURI)
}

// authError returns the OAuth error code for an authorization request that is otherwise
// unacceptable, "" when it is fine.
func authError(req authRequest) string {
	switch {
	case req.ResponseType != "code":
		return "unsupported_response_type"
	case req.Method != "S256" || len(req.Challenge) != minVerifierLen:
		return "invalid_request" // PKCE with S256 is required
	case !slices.Contains(strings.Fields(req.Scope), "openid"):
		return "invalid_scope"
	}
	return ""
}

// serveAuthorize shows the sign-in form (GET) or signs the user in and sends the browser back
// to the client with a code (POST).
func (i *Issuer) serveAuthorize(w http.ResponseWriter, r *http.Request) {
	if len(i.opts.WebClients) == 0 {
		http.NotFound(w, r)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		i.renderSignIn(w, http.StatusBadRequest, signInPage{Error: "The request could not be read."})
		return
	}
	req := readAuthRequest(r.Form)
	if !i.checkClient(req) {
		i.renderSignIn(w, http.StatusBadRequest, signInPage{Error: "Unknown client or redirect URI: nothing can be sent back."})
		return
	}
	if e := authError(req); e != "" {
		redirectBack(w, r, req, url.Values{"error": {e}})
		return
	}
	if r.Method != http.MethodPost {
		i.renderSignIn(w, http.StatusOK, i.signInPage(req, ""))
		return
	}
	user := r.PostForm.Get("username")
	if _, known := i.opts.Users[user]; !known || user == "" {
		i.renderSignIn(w, http.StatusBadRequest, i.signInPage(req, "Unknown user."))
		return
	}
	code, ok := i.codes.issue(pendingCode{req: req, user: user, expires: i.opts.Now().Add(codeTTL)}, i.opts.Now())
	if !ok {
		i.renderSignIn(w, http.StatusServiceUnavailable, signInPage{Error: "Too many sign-ins in progress; try again in a minute."})
		return
	}
	redirectBack(w, r, req, url.Values{"code": {code}})
}

// redirectBack sends the browser to the client's redirect URI with params and the state.
func redirectBack(w http.ResponseWriter, r *http.Request, req authRequest, params url.Values) {
	u, err := url.Parse(req.RedirectURI)
	if err != nil {
		http.Error(w, "bad redirect URI", http.StatusBadRequest)
		return
	}
	q := u.Query()
	for k, v := range params {
		q[k] = v
	}
	if req.State != "" {
		q.Set("state", req.State)
	}
	u.RawQuery = q.Encode()
	http.Redirect(w, r, u.String(), http.StatusSeeOther)
}

// serveCodeGrant exchanges a code for an ID token and an access token (RFC 6749 §4.1.3,
// RFC 7636 §4.6, OpenID Connect Core §3.1.3).
func (i *Issuer) serveCodeGrant(w http.ResponseWriter, r *http.Request) {
	id, secret, basic := r.BasicAuth()
	if !basic {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	client, known := i.opts.WebClients[id]
	if !known || id == "" || subtle.ConstantTimeCompare([]byte(secret), []byte(client.Secret)) != 1 {
		writeOAuthError(w, http.StatusUnauthorized, "invalid_client")
		return
	}
	p, ok := i.codes.take(r.PostForm.Get("code"))
	if !ok || !i.opts.Now().Before(p.expires) || p.req.ClientID != id ||
		p.req.RedirectURI != r.PostForm.Get("redirect_uri") || !pkceHolds(r.PostForm.Get("code_verifier"), p.req.Challenge) {
		writeOAuthError(w, http.StatusBadRequest, "invalid_grant")
		return
	}
	binding := Claims{}
	tokenType, ok := i.bindToProof(w, r, binding)
	if !ok {
		return
	}
	idToken, access, err := i.mintSignIn(p, binding)
	if err != nil {
		writeOAuthError(w, http.StatusInternalServerError, "server_error")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"access_token": access, "id_token": idToken, "token_type": tokenType,
		"expires_in": int(i.opts.TTL.Seconds()), "scope": p.req.Scope,
	})
}

// pkceHolds checks the verifier against the S256 challenge (RFC 7636 §4.6).
func pkceHolds(verifier, challenge string) bool {
	if len(verifier) < minVerifierLen || len(verifier) > maxVerifierLen {
		return false
	}
	sum := sha256.Sum256([]byte(verifier))
	return subtle.ConstantTimeCompare([]byte(base64.RawURLEncoding.EncodeToString(sum[:])), []byte(challenge)) == 1
}

// mintSignIn mints the ID token for the client (the user's claims but scope, the nonce) and
// an access token with the user's claims and binding (cnf, with a DPoP proof) for the issuer's
// default audience.
func (i *Issuer) mintSignIn(p pendingCode, binding Claims) (idToken, access string, err error) {
	user := i.opts.Users[p.user]
	idc := Claims{"sub": p.user, "preferred_username": p.user, "aud": p.req.ClientID,
		"auth_time": i.opts.Now().Unix()}
	acc := Claims{"sub": p.user, "client_id": p.req.ClientID}
	for k, v := range user {
		if k != "scope" {
			idc[k] = v
		}
		acc[k] = v
	}
	if p.req.Nonce != "" {
		idc["nonce"] = p.req.Nonce
	}
	for k, v := range binding {
		acc[k] = v
	}
	if idToken, err = i.Mint(idc); err != nil {
		return "", "", err
	}
	access, err = i.Mint(acc)
	return idToken, access, err
}

// AuthorizeURL is the authorization endpoint, or "" when Options.WebClients is empty.
func (i *Issuer) AuthorizeURL() string {
	if len(i.opts.WebClients) == 0 {
		return ""
	}
	return i.url + authorizePath
}

// signInPage is what the sign-in form shows.
type signInPage struct {
	Error  string
	Users  []string
	Hidden []hiddenField
}

type hiddenField struct{ Name, Value string }

func (i *Issuer) signInPage(req authRequest, msg string) signInPage {
	p := signInPage{Error: msg}
	for u := range i.opts.Users {
		p.Users = append(p.Users, u)
	}
	slices.Sort(p.Users)
	for _, f := range []hiddenField{
		{"client_id", req.ClientID}, {"redirect_uri", req.RedirectURI}, {"response_type", req.ResponseType},
		{"scope", req.Scope}, {"state", req.State}, {"nonce", req.Nonce},
		{"code_challenge", req.Challenge}, {"code_challenge_method", req.Method},
	} {
		if f.Value != "" {
			p.Hidden = append(p.Hidden, f)
		}
	}
	return p
}

var signInTemplate = template.Must(template.New("signin").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>Sign in: development issuer</title></head>
<body><main>
<h1>Sign in</h1>
<p>Development issuer: for local testing only. It asks for no password.</p>
{{if .Error}}<p role="alert" id="error">{{.Error}}</p>{{end}}
{{if .Hidden}}<form method="post" action="` + authorizePath + `">
{{range .Hidden}}<input type="hidden" name="{{.Name}}" value="{{.Value}}">
{{end}}<label for="username">User</label>
<input id="username" name="username" autocomplete="username" required autofocus>
<button type="submit">Sign in</button>
</form>
<p>Users: {{range $i, $u := .Users}}{{if $i}}, {{end}}{{$u}}{{end}}</p>{{end}}
</main></body></html>
`))

func (i *Issuer) renderSignIn(w http.ResponseWriter, status int, p signInPage) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'")
	w.Header().Set("X-Frame-Options", "DENY")
	w.WriteHeader(status)
	_ = signInTemplate.Execute(w, p)
}
