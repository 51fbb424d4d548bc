package webpage

import (
	"encoding/binary"
	"time"
)

// MinDwell is how long a page must have been shown before a form of it whose button acts (an
// approval, a connect, a disconnect) counts. A page elsewhere can make the user's clicks land
// on the gateway's page (it asks for a double-click and sends the tab to the page on the first
// press); such clicks come within a fraction of a second of the page appearing, a reading
// user's do not.
const MinDwell = time.Second

// ShownToken is CSRFToken with the time its page was shown (by the server's clock: the browser
// cannot change it) bound after claim, for a form that counts only once its page has been on
// screen for MinDwell (OpenShown, Dwelt).
func ShownToken(s *Session, purpose, id string, claim []byte, shown time.Time) string {
	return CSRFToken(s, purpose, id, binary.BigEndian.AppendUint64(claim, uint64(shown.UnixMilli())))
}

// OpenShown checks a ShownToken for purpose and id in session s and returns its claim and the
// time its page was shown.
func OpenShown(s *Session, purpose, id, token string) (claim []byte, shown time.Time, ok bool) {
	c, ok := OpenCSRF(s, purpose, id, token)
	if !ok || len(c) < 8 {
		return nil, time.Time{}, false
	}
	return c[:len(c)-8], time.UnixMilli(int64(binary.BigEndian.Uint64(c[len(c)-8:]))), true
}

// Dwelt reports whether a page shown at shown has been on screen for MinDwell at now.
func Dwelt(shown, now time.Time) bool {
	return now.Sub(shown) >= MinDwell
}
