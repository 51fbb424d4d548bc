package webpage

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strings"
)

// CSRFToken is the token a form of the gateway's pages carries: claim (what the page binds into
// it: a step, the time it was shown) and an HMAC of it, the purpose and the id of what the form
// acts on, under the session's own key. It is worthless in another session, for another
// purpose or another id.
func CSRFToken(s *Session, purpose, id string, claim []byte) string {
	return base64.RawURLEncoding.EncodeToString(claim) + "." + base64.RawURLEncoding.EncodeToString(csrfMAC(s, purpose, id, claim))
}

func csrfMAC(s *Session, purpose, id string, claim []byte) []byte {
	m := hmac.New(sha256.New, s.CSRF)
	m.Write([]byte(purpose + "\x00" + id + "\x00"))
	m.Write(claim)
	return m.Sum(nil)
}

// OpenCSRF checks token for purpose and id in session s and returns its claim.
func OpenCSRF(s *Session, purpose, id, token string) (claim []byte, ok bool) {
	c, m, found := strings.Cut(token, ".")
	claim, err1 := base64.RawURLEncoding.DecodeString(c)
	mac, err2 := base64.RawURLEncoding.DecodeString(m)
	if !found || err1 != nil || err2 != nil || !hmac.Equal(mac, csrfMAC(s, purpose, id, claim)) {
		return nil, false
	}
	return claim, true
}
