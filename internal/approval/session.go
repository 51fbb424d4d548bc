package approval

import (
	"github.com/mcp-gateway/gateway/internal/webpage"
)

// session is who signed in on the page (the gateway's pages share one sign-in).
type session = webpage.Session

// Steps of a decision: the page with the call (Approve, Deny) and, after Approve, the
// confirmation step (its own Approve control, elsewhere on the page, and Deny).
const (
	stepAsk     byte = 1
	stepConfirm byte = 2
)

// MinDwell is how long the confirmation step must have been shown before its Approve counts
// (webpage.MinDwell, the guard every page of the gateway shares).
const MinDwell = webpage.MinDwell

// csrfPurpose separates the decision forms' tokens from every other form of the pages.
const csrfPurpose = "approval decision"

// csrfToken is the token the decision forms of one step of call id carry: the step and the
// time the page was shown, bound to the session and the call (webpage.CSRFToken), so it is
// worthless in another session, for another call or another step. When the confirmation step
// was shown is kept by the shared store (webpage.Shown), not by the token.
func csrfToken(s *session, id string, step byte) string {
	return webpage.CSRFToken(s, csrfPurpose, id, []byte{step})
}

// openCSRF checks token for call id in session s and returns its step.
func openCSRF(s *session, id, token string) (step byte, ok bool) {
	claim, ok := webpage.OpenCSRF(s, csrfPurpose, id, token)
	if !ok || len(claim) != 1 {
		return 0, false
	}
	return claim[0], true
}
