package gateway

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// fastIssuerRetry makes the gateway try an issuer again soon after a failure, so the tests need
// not wait for the default back-off.
const fastIssuerRetry = 50 * time.Millisecond

// TestTypoIssuerNotReady: a gateway trusting a real issuer and one whose URL is wrong is not
// ready, and says why in /readyz and in the log (a warning with the issuer URL and the class of
// the failure, repeated as it is retried). The good issuer's tokens are still accepted: being
// not ready only keeps the load balancer away.
func TestTypoIssuerNotReady(t *testing.T) {
	good := newIssuer(t)
	typo := good.URL() + "/typo" // discovery answers 404 there
	alpha := mcptest.StartServer(t, "alpha")
	gw, logs, _ := startLoggedGateway(t, func(c *Config) {
		trustIssuers(c, good)
		c.Auth.Issuers = append(c.Auth.Issuers, authz.IssuerConfig{Issuer: typo})
		c.Auth.DiscoveryRetryInterval = fastIssuerRetry
		c.Auth.Policy.Rules = []authz.RuleConfig{{ID: "all", Upstream: "alpha", Tools: []string{"*"}, Issuers: []string{good.URL()}}}
	}, alpha)
	goodPending := "issuer " + good.URL() + ": "
	var body readinessBody
	// Both issuers' first fetches run concurrently: wait until the good one has finished and the
	// typo'd one has failed once, whichever comes last.
	mcptest.WaitFor(t, "the good issuer's keys fetched and the typo'd one's first failure", func() bool {
		_, body = readyz(t, gw)
		got := body.Checks["issuers"]
		return !strings.Contains(got, goodPending) && !strings.Contains(got, "keys not fetched yet")
	})
	status, body := readyz(t, gw)
	if status != http.StatusServiceUnavailable || body.Ready {
		t.Fatalf("/readyz %d %+v, want 503 while an issuer's keys cannot be fetched", status, body)
	}
	if got := body.Checks["issuers"]; !strings.Contains(got, "issuer "+typo+": ") || !strings.Contains(got, "("+authz.FetchHTTPStatus+")") {
		t.Fatalf("/readyz issuers check = %q, want the typo'd issuer and the class of its failure", got)
	}
	mcptest.WaitFor(t, "the failure retried and logged again", func() bool {
		return strings.Count(logs.String(), `"issuer":"`+typo+`"`) >= 2
	})
	for _, want := range []string{`"level":"WARN"`, `"class":"http_status"`, `"msg":"issuer keys not fetched`} {
		mcptest.WaitFor(t, "the log to hold "+want, func() bool { return strings.Contains(logs.String(), want) })
	}
	cs := mcptest.Connect(t, "http://"+gw.MCP+"/mcp", mcptest.WithBearer(mintFor(t, good, "alice")))
	if names := toolNames(t, cs); len(names) == 0 {
		t.Error("the good issuer's caller lists nothing")
	}
}

// TestIssuerDownAtStartBecomesReady: an issuer unreachable when the gateway starts keeps it not
// ready; once the issuer answers, the retry fetches its keys and the gateway becomes ready.
func TestIssuerDownAtStartBecomesReady(t *testing.T) {
	iss := startIssuer(t, devissuer.Options{Audience: testResource})
	iss.SetDown(true)
	alpha := mcptest.StartServer(t, "alpha")
	gw, logs, _ := startLoggedGateway(t, func(c *Config) {
		trustIssuers(c, iss)
		c.Auth.DiscoveryRetryInterval = fastIssuerRetry
		c.Auth.Policy.Rules = []authz.RuleConfig{{ID: "all", Upstream: "alpha", Tools: []string{"*"}}}
	}, alpha)
	mcptest.WaitFor(t, "the failure logged", func() bool { return strings.Contains(logs.String(), `"issuer":"`+iss.URL()+`"`) })
	if status, body := readyz(t, gw); status != http.StatusServiceUnavailable || !strings.Contains(body.Checks["issuers"], iss.URL()) {
		t.Fatalf("/readyz %d %+v while the issuer is down, want 503 naming it", status, body)
	}
	iss.SetDown(false)
	mcptest.WaitFor(t, "ready once the issuer answers", func() bool {
		status, body := readyz(t, gw)
		return status == http.StatusOK && body.Checks["issuers"] == "ok"
	})
	mcptest.WaitFor(t, "the recovery logged", func() bool { return strings.Contains(logs.String(), `"msg":"issuer keys fetched"`) })
}
