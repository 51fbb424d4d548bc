package approval

import "testing"

// RenderAskPage renders the ask step of the approval page of c, as its subject signed in at its
// issuer sees it, for the tests of package approval_test: those that drive a browser, whose
// support package imports this one.
func RenderAskPage(t *testing.T, c Call) string {
	t.Helper()
	f := newPageFixture(t)
	return f.renderPage(t, c, &session{Subject: c.Subject, Issuer: c.Issuer, CSRF: make([]byte, 32)}, stepAsk)
}
