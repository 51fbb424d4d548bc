package useroauth

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestCloseIdleConnections: the service's own client (the default, egress-judged one) keeps
// its connection to an authorization server alive after a token request; CloseIdleConnections,
// which the gateway calls when a reload retires the configuration, closes it, as counted on
// the server, instead of leaving it open with its goroutines until the idle timeout.
func TestCloseIdleConnections(t *testing.T) {
	t.Parallel()
	var open atomic.Int64
	as := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"access_token":"at-idle","token_type":"Bearer","expires_in":300}`)
	}))
	as.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			open.Add(1)
		case http.StateClosed, http.StateHijacked:
			open.Add(-1)
		}
	}
	as.Start()
	t.Cleanup(as.Close)
	svc := bareService(t, nil)
	meta := &asMetadata{Issuer: as.URL, TokenEndpoint: as.URL + "/token"}
	if _, err := svc.oauth.tokenRequest(t.Context(), meta, client{ID: "gw", Secret: "s"},
		url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"rt"}}); err != nil {
		t.Fatalf("the token request: %v", err)
	}
	if n := open.Load(); n != 1 {
		t.Fatalf("%d connections open after the token request, want the one kept alive", n)
	}
	svc.CloseIdleConnections()
	mcptest.WaitFor(t, "the idle connection to close", func() bool { return open.Load() == 0 })
}
