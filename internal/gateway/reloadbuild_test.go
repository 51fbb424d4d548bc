package gateway

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestReloadAskedForWhileFetchingKeys: a SIGHUP that arrives while a reload waits on an issuer's
// key set (up to twice auth.fetchTimeout) is the operator's latest word, and the file may have
// changed since the reload read it. Before, the reload applied the configuration read before
// that SIGHUP, and a second reload then read the latest file and waited, before applying it, for
// the requests of the set the first had replaced, up to their server.shutdownTimeout (an hour
// here): the superseded configuration served all that time. Now the set built from the file as
// it was is dropped unused and the file read again: the one reload applies the latest file, and
// the SIGHUP leaves no reload behind.
func TestReloadAskedForWhileFetchingKeys(t *testing.T) {
	iss := newIssuer(t)
	hold := make(chan struct{})
	alpha := mcptest.StartServer(t, "alpha", holdingTool(hold, nil))
	// The issuer's key set, held on its first fetch until released.
	asked, release := make(chan struct{}), make(chan struct{})
	var first sync.Once
	jwks, err := url.Parse(iss.JWKSURL())
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: jwks.Scheme, Host: jwks.Host})
	gate := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		first.Do(func() {
			close(asked)
			<-release
		})
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(gate.Close)
	gateURL := gate.URL + jwks.Path
	config := func(tools string) string {
		return strings.Replace(authYAML(iss.URL(), tools, "", alpha),
			`{issuer: "`+iss.URL()+`"}`, `{issuer: "`+iss.URL()+`", jwksURL: "`+gateURL+`"}`, 1)
	}
	f := startReloadGateway(t, "1h", "auth: {disabled: true}\nupstreams:\n"+upstreamYAML(alpha))
	// A call held on the running set: a reload that replaced it first would wait for that call
	// before applying another.
	held := startHeldCallOf(t, f.url(), "alpha__hold")
	t.Cleanup(func() { // before the gateway's
		close(hold)
		wantHeldToTheEnd(t, held, "the call held on the first configuration")
	})
	f.write(t, "1h", config(`["echo"]`))
	f.hup <- syscall.SIGHUP
	select {
	case <-asked:
	case <-time.After(reloadWait):
		t.Fatal("the reload did not fetch the issuer's keys")
	}
	f.write(t, "1h", config(`["add"]`))
	f.hup <- syscall.SIGHUP // taken by nobody yet: serve's loop is in the reload
	close(release)
	select {
	case err := <-f.results:
		if err != nil {
			t.Fatalf("reload: %v", err)
		}
	case <-time.After(reloadWait):
		t.Fatal("no reload outcome")
	}
	if names := toolNames(t, mcptest.Connect(t, f.url(), mcptest.WithBearer(mintFor(t, iss, "alice")))); !slices.Equal(names, []string{"alpha__add"}) {
		t.Fatalf("after the reload a client sees %v, want the latest file's alpha__add", names)
	}
	if n := metricValue(t, f.gw, `mcp_gateway_config_reloads_total{result="success"}`); n != 1 {
		t.Fatalf("%v reloads applied, want 1", n)
	}
	if len(f.hup) != 0 {
		t.Fatal("the SIGHUP taken into account is left for another reload")
	}
}
