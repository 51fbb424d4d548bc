package approval

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"time"

	"github.com/mcp-gateway/gateway/internal/seal"
)

// Cookie names. The __Host- prefix makes browsers accept the cookie only when it is Secure,
// set by a secure origin (https, or a loopback origin the browser treats as secure), with
// Path=/ and no Domain: a sibling host of the same site cannot set ("toss") a cookie of that
// name for the page's host, so the page never reads a session or sign-in it did not set.
// Both are HttpOnly and SameSite=Lax: Lax because the sign-in returns from the issuer by a
// cross-site navigation, and the decisions, being POSTs, are not sent cross-site under Lax
// and carry a CSRF token besides. Path=/ (which the prefix requires) also sends them to the
// MCP endpoint, which reads no cookies and forwards none.
const (
	sessionCookie = "__Host-mcpgw_approval"
	loginCookie   = "__Host-mcpgw_approval_login"
)

// session is who signed in on the page, sealed into the session cookie.
type session struct {
	Issuer  string    `json:"iss"`
	Subject string    `json:"sub"`
	Name    string    `json:"name,omitempty"`
	Expiry  time.Time `json:"exp"`
	// CSRF keys the session's CSRF tokens (one per call, see csrfToken).
	CSRF []byte `json:"csrf"`
}

// login is one sign-in in progress, sealed into the login cookie: what the callback checks.
type login struct {
	State    string    `json:"state"`
	Nonce    string    `json:"nonce"`
	Verifier string    `json:"verifier"`
	Return   string    `json:"return"` // the call id whose page to show after sign-in
	Expiry   time.Time `json:"exp"`
}

// cookies seals and opens the page's cookies.
type cookies struct {
	sessions *seal.Sealer
	logins   *seal.Sealer
	now      func() time.Time
}

func (c *cookies) set(w http.ResponseWriter, name, value string, ttl time.Duration) {
	http.SetCookie(w, &http.Cookie{
		Name: name, Value: value, Path: "/", MaxAge: int(ttl / time.Second),
		HttpOnly: true, Secure: true, SameSite: http.SameSiteLaxMode,
	})
}

func (c *cookies) clear(w http.ResponseWriter, name string) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, Secure: true, SameSite: http.SameSiteLaxMode})
}

// open reads the sealed JSON value of cookie name into v; false when it is absent, does not
// open, or has expired.
func (c *cookies) open(r *http.Request, name string, s *seal.Sealer, v any, expiry func() time.Time) bool {
	ck, err := r.Cookie(name)
	if err != nil || ck.Value == "" {
		return false
	}
	pt, err := s.Open(ck.Value)
	if err != nil || json.Unmarshal(pt, v) != nil {
		return false
	}
	return c.now().Before(expiry())
}

func (c *cookies) seal(s *seal.Sealer, v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return s.Seal(b)
}

func (c *cookies) session(r *http.Request) (*session, bool) {
	var s session
	if !c.open(r, sessionCookie, c.sessions, &s, func() time.Time { return s.Expiry }) || len(s.CSRF) < 16 {
		return nil, false
	}
	return &s, true
}

func (c *cookies) login(r *http.Request) (*login, bool) {
	var l login
	if !c.open(r, loginCookie, c.logins, &l, func() time.Time { return l.Expiry }) {
		return nil, false
	}
	return &l, true
}

// csrfToken is the token a decision form for call id must carry: an HMAC under the session's
// own key, so it is worthless in another session or for another call.
func csrfToken(s *session, id string) string {
	m := hmac.New(sha256.New, s.CSRF)
	m.Write([]byte("approval decision\x00" + id))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func validCSRF(s *session, id, token string) bool {
	want := csrfToken(s, id)
	return token != "" && hmac.Equal([]byte(want), []byte(token))
}

func randomKey() []byte {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return b
}
