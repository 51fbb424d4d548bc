package approval

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"net/http"
	"strings"
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

// Steps of a decision: the page with the call (Approve, Deny) and, after Approve, the
// confirmation step (its own Approve control, elsewhere on the page, and Deny).
const (
	stepAsk     byte = 1
	stepConfirm byte = 2
)

// MinDwell is how long the confirmation step must have been shown before its Approve counts. A
// page elsewhere can make the user's clicks land on the approval page (it asks for a
// double-click and sends the tab to the page on the first press); such clicks come within a
// fraction of a second of the page appearing, a reading user's do not.
const MinDwell = time.Second

// csrfToken is the token the decision forms of one step of call id carry: the step and the
// time the page was shown, and an HMAC of them, the call and the purpose under the session's
// own key, so it is worthless in another session, for another call or another step, and
// tells when its page was shown (the server's clock: the browser cannot change it).
func csrfToken(s *session, id string, step byte, shown time.Time) string {
	var claim [9]byte
	claim[0] = step
	binary.BigEndian.PutUint64(claim[1:], uint64(shown.UnixMilli()))
	return base64.RawURLEncoding.EncodeToString(claim[:]) + "." + base64.RawURLEncoding.EncodeToString(csrfMAC(s, id, claim[:]))
}

func csrfMAC(s *session, id string, claim []byte) []byte {
	m := hmac.New(sha256.New, s.CSRF)
	m.Write([]byte("approval decision\x00" + id + "\x00"))
	m.Write(claim)
	return m.Sum(nil)
}

// openCSRF checks token for call id in session s and returns its step and the time its page
// was shown.
func openCSRF(s *session, id, token string) (step byte, shown time.Time, ok bool) {
	c, m, found := strings.Cut(token, ".")
	claim, err1 := base64.RawURLEncoding.DecodeString(c)
	mac, err2 := base64.RawURLEncoding.DecodeString(m)
	if !found || err1 != nil || err2 != nil || len(claim) != 9 || !hmac.Equal(mac, csrfMAC(s, id, claim)) {
		return 0, time.Time{}, false
	}
	return claim[0], time.UnixMilli(int64(binary.BigEndian.Uint64(claim[1:]))), true
}

func randomKey() []byte {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return b
}
