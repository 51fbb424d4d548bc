package useroauth

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/vault"
)

// TestRefreshRefusals: an authorization server that answers a refresh with a refusal of its own
// (RFC 6749 §5.2, or an error member in a 200 answer as some servers send) has ended the grant,
// whatever the code: the record is removed and the next call asks for consent, instead of the
// caller getting a retryable error on every call for ever. The server failing (HTTP 5xx, 429,
// temporarily_unavailable, server_error) and the server refusing the gateway as its client
// (invalid_client: the operator's configuration) keep the record and stay retryable.
func TestRefreshRefusals(t *testing.T) {
	for _, tt := range []struct {
		name   string
		answer tokenAnswer
		ends   bool
	}{
		{"unauthorized_client", tokenAnswer{http.StatusBadRequest, `{"error":"unauthorized_client"}`}, true},
		{"unsupported_grant_type", tokenAnswer{http.StatusBadRequest, `{"error":"unsupported_grant_type"}`}, true},
		{"invalid_request with a description", tokenAnswer{http.StatusBadRequest,
			`{"error":"invalid_request","error_description":"refresh token expired"}`}, true},
		{"invalid_token with 401", tokenAnswer{http.StatusUnauthorized, `{"error":"invalid_token"}`}, true},
		{"an error in a 200 answer", tokenAnswer{http.StatusOK, `{"error":"bad_refresh_token"}`}, true},
		{"temporarily_unavailable", tokenAnswer{http.StatusBadRequest, `{"error":"temporarily_unavailable"}`}, false},
		{"server_error", tokenAnswer{http.StatusBadRequest, `{"error":"server_error"}`}, false},
		{"HTTP 503", tokenAnswer{http.StatusServiceUnavailable, `{"error":"invalid_grant"}`}, false},
		{"invalid_client", tokenAnswer{http.StatusUnauthorized, `{"error":"invalid_client"}`}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, fixtureOptions{}) // one each: its clock moves a day
			alice, _ := connected(t, f)
			f.clock.Advance(24 * time.Hour) // the access token expired; past any cooldown
			f.asLink.answer.Store(&tt.answer)
			_, ok, err := f.svc.Token(t.Context(), backendName, alice)
			f.asLink.answer.Store(nil)
			_, gerr := f.svc.Vault().Get(t.Context(), alice, backendName)
			switch {
			case tt.ends && (ok || err != nil || !errors.Is(gerr, vault.ErrNotFound)):
				t.Errorf("ok %v, %v, record %v; want no token, no error, the record removed (consent)", ok, err, gerr)
			case !tt.ends && (ok || !errors.Is(err, ErrUnavailable) || gerr != nil):
				t.Errorf("ok %v, %v, record %v; want ErrUnavailable and the record kept", ok, err, gerr)
			}
			logs := f.log.String()
			if strings.Contains(logs, "refresh token expired") {
				t.Error("the log repeats the server's error_description")
			}
			if tt.ends {
				expectContains(t, "the log", logs, "useroauth: token record removed", "refused the refresh token (")
			}
		})
	}
}
