package webpage

import (
	"context"
	"encoding/base64"
	"time"
)

// MinDwell is how long a page must have been shown before a form of it whose button acts (an
// approval, a connect, a disconnect) counts. A page elsewhere can make the user's clicks land
// on the gateway's page (it asks for a double-click and sends the tab to the page on the first
// press); such clicks come within a fraction of a second of the page appearing, a reading
// user's do not.
const MinDwell = time.Second

// DwellStore is the part of the gateway's shared store the guard uses (store.Store has it).
type DwellStore interface {
	Get(ctx context.Context, key string) ([]byte, bool, error)
	Set(ctx context.Context, key string, value []byte, ttl time.Duration) error
}

// Shown records that a page with the form of purpose and id was shown to session s: until
// MinDwell has passed, Dwelt reports false for that form.
//
// The time is kept by the shared store, as a key that lives MinDwell (Redis expires it on its
// own clock), never by comparing the clocks of two replicas: the replica that shows a page and
// the one that receives its form need not agree on the time, and a disagreement of a second
// would otherwise refuse every form or drop the guard. One key per session and form, living
// MinDwell: showing the form again re-arms it.
func Shown(ctx context.Context, st DwellStore, s *Session, purpose, id string) error {
	return st.Set(ctx, dwellKey(s, purpose, id), []byte{1}, MinDwell)
}

// Dwelt reports whether the form of purpose and id may count for session s: no page with it
// was shown to s within the last MinDwell. An error means the store could not say; callers
// fail closed.
func Dwelt(ctx context.Context, st DwellStore, s *Session, purpose, id string) (bool, error) {
	_, recent, err := st.Get(ctx, dwellKey(s, purpose, id))
	return err == nil && !recent, err
}

// dwellKey names the form's key: a MAC under the session's own key, so the store never holds
// the session's identity or the form's id, and no one else's form shares it.
func dwellKey(s *Session, purpose, id string) string {
	return "pages/dwell/" + base64.RawURLEncoding.EncodeToString(csrfMAC(s, "dwell\x00"+purpose, id, nil))
}
