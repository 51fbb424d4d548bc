package gateway

import (
	"context"
	"encoding/pem"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/testsupport/intercepttest"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/oauthbackend"
	"github.com/mcp-gateway/gateway/internal/testsupport/otlptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/realop"
)

// checkOnlineLines runs check-config --online on a configuration of one backend plus extra and
// checks its output against want (a regexp per line) and its outcome against failed; the
// output must never show any of secrets.
func checkOnlineLines(t *testing.T, extra string, failed bool, want []string, secrets ...string) {
	t.Helper()
	backend := mcptest.StartServer(t, "one", mcptest.WithoutDefaults(), mcptest.WithTool(readTool(nil), noopTool))
	cfg := writeConfigWith(t, extra, backend)
	out, stderr, err := runGateway(t, "check-config", "--config", cfg, "--online")
	if (err != nil) != failed {
		t.Errorf("err = %v, want failed %v\n%s%s", err, failed, out, stderr)
	}
	for _, w := range want {
		if !regexp.MustCompile(w).MatchString(out) {
			t.Errorf("output lacks %s:\n%s%s", w, out, stderr)
		}
	}
	for _, s := range secrets {
		if strings.Contains(out+stderr, s) {
			t.Errorf("the output shows a secret:\n%s%s", out, stderr)
		}
	}
}

// silentListener accepts connections and never answers: a server that hangs.
func silentListener(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
		}
	}()
	return l.Addr().String()
}

// TestCheckConfigOnlineInterceptors: check-config --online asks each Interceptor Server, of
// both eras, what its first invocation would learn (server/discover or initialize, then
// interceptors/list, which must host the configured interceptor with its type) and connects
// to each webhook, TLS included, sending it nothing. A server that does not host the name or
// hosts it with the other type, answers garbage, answers 401, hangs past the interceptor's
// timeout or is not there, and a webhook whose certificate is not trusted or that is not there,
// each fail, named by their key path, as does a webhook whose client-credentials token is
// refused (its token is fetched, the webhook sent nothing); no secret ever shows.
func TestCheckConfigOnlineInterceptors(t *testing.T) {
	const secret = "interceptor-header-secret"
	guard := []intercepttest.Interceptor{{Name: "guard", Type: "validation", Handle: intercepttest.Allow()}}
	modern := intercepttest.Start(t, guard)
	legacy := intercepttest.Start(t, guard, intercepttest.Legacy())
	garbage := intercepttest.Start(t, guard)
	garbage.SetGarbage(true)
	hook := intercepttest.StartWebhook(t, guard)
	tlsHook := httptest.NewTLSServer(nil) // never sent a request: the probe only connects
	t.Cleanup(tlsHook.Close)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tlsHook.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	iss := startIssuer(t, devissuer.Options{Audience: testResource, Clients: map[string]string{"gw": secret}})
	protected := oauthbackend.Start(t, "protected", oauthbackend.Options{Issuer: iss.URL()})
	hookAuth := func(s string) string {
		return ", webhook: true, auth: {type: clientCredentials, tokenURL: \"" + iss.TokenURL() + "\", clientID: gw, clientSecret: {value: " + s + "}}"
	}
	entry := func(name, url, more string) string {
		return "  - {name: " + name + ", url: \"" + url + "\", type: validation, interceptor: guard, timeout: 1s, rules: [{tools: [\"*\"]}]" + more + "}\n"
	}
	ok := "interceptors:\n" +
		entry("modern", modern.URL(), ", headers: {Authorization: {value: \"Bearer "+secret+"\"}}") +
		entry("legacy", legacy.URL(), "") +
		entry("hook", hook.URL(), ", webhook: true") +
		entry("tlshook", tlsHook.URL, ", webhook: true, tls: {caFile: \""+ca+"\"}") +
		entry("authhook", hook.URL(), hookAuth(secret))
	checkOnlineLines(t, ok, false, []string{
		`(?m)^ok     interceptors\[4\] authhook: webhook reachable \(plain http\); nothing sent, since every request is an invocation; client-credentials token fetched$`,
		`(?m)^ok     interceptors\[0\] modern: speaks 2026-07-28 \(server/discover\), declares io\.modelcontextprotocol/interceptors, hosts guard \(validation\)$`,
		`(?m)^ok     interceptors\[1\] legacy: pre-2026 \(initialize, 2025-11-25\), declares io\.modelcontextprotocol/interceptors, hosts guard \(validation\)$`,
		`(?m)^ok     interceptors\[2\] hook: webhook reachable \(plain http\); nothing sent`,
		`(?m)^ok     interceptors\[3\] tlshook: webhook reachable \(TLS 1\.[23]\); nothing sent`,
	}, secret)
	if n := len(hook.Invocations()); n != 0 {
		t.Errorf("the webhook was sent %d invocation(s)", n)
	}

	bad := "interceptors:\n" +
		strings.Replace(entry("unhosted", modern.URL(), ""), "interceptor: guard", "interceptor: other", 1) +
		strings.Replace(entry("mistyped", modern.URL(), ""), "type: validation", "type: mutation", 1) +
		entry("garbage", garbage.URL(), "") +
		entry("refusing", protected.URL(), "") +
		entry("hanging", "http://"+silentListener(t)+"/mcp", "") +
		entry("gone", "http://"+closedPort(t)+"/mcp", "") +
		entry("untrusted", tlsHook.URL, ", webhook: true") +
		entry("gonehook", "http://"+closedPort(t)+"/hook", ", webhook: true") +
		entry("badauthhook", hook.URL(), hookAuth("wrong-"+secret))
	checkOnlineLines(t, bad, true, []string{
		`(?m)^FAILED interceptors\[8\] badauthhook: .*401`,
		`(?m)^FAILED interceptors\[0\] unhosted: the server does not host interceptor "other"`,
		`(?m)^FAILED interceptors\[1\] mistyped: interceptor "guard" is a validation interceptor on the server, configured as mutation`,
		`(?m)^FAILED interceptors\[2\] garbage: `,
		`(?m)^FAILED interceptors\[3\] refusing: .*401`,
		`(?m)^FAILED interceptors\[4\] hanging: `,
		`(?m)^FAILED interceptors\[5\] gone: `,
		`(?m)^FAILED interceptors\[6\] untrusted: .*certificate`,
		`(?m)^FAILED interceptors\[7\] gonehook: .*connect`,
		`(?m)^ok     upstreams\[0\] one: `,
	}, secret)
}

// TestCheckConfigOnlineSignInAndBackendAuth: check-config --online also discovers the approval
// page's sign-in issuer (its authorization and token endpoints, and the key set its ID tokens
// are checked with), each per-user OAuth backend's authorization server as its connect page
// would (from the backend's resource metadata), each token-exchange backend's token endpoint
// (connected to, never sent a token) and the tracing collector (sent one export with no span,
// with the configured header),
// against a real OpenID provider, a real resource server, the dev issuer and an OTLP
// collector. An issuer without an authorization endpoint (the dev issuer) fails as the sign-in
// issuer and as an authorization server; a token endpoint or a collector that is not there
// fails; each is named by its key path, and no client secret shows.
func TestCheckConfigOnlineSignInAndBackendAuth(t *testing.T) {
	const pagesSecret, exchangeSecret, collectorKey = "pages-client-secret", "exchange-client-secret", "collector-key-123"
	op := realop.Start(t, realop.Options{})
	as := realop.Start(t, realop.Options{})
	notes := oauthbackend.Start(t, "notes", oauthbackend.Options{Issuer: as.Issuer(), Scopes: []string{"openid", "notes"}})
	exchanger := newExchangeIssuer(t)
	plain := newIssuer(t)
	collector := otlptest.Start(t, 200)
	write := func(signIn, authServer, tokenURL, tracing string) string {
		return "server: {listen: \"127.0.0.1:0\", publicURL: \"http://localhost:1/mcp\"}\n" +
			"auth:\n  issuers: [{issuer: \"" + signIn + "\", audiences: [" + realop.UserClientID + "]}]\n" +
			"  policy: {rules: [{id: all, issuers: [\"*\"]}]}\n" +
			"approval: {clientID: pages, clientSecret: {value: " + pagesSecret + "}}\n" +
			"userOAuth: {keys: [{id: v1, secret: {value: " + strings.Repeat("v", 32) + "}}]}\n" +
			"tracing: {endpoint: \"" + tracing + "\", insecure: true, headers: {X-Collector-Key: {value: " + collectorKey + "}}}\n" +
			"upstreams:\n" +
			"  - {name: notes, url: \"" + notes.URL() + "\", timeout: 5s, auth: {type: userOAuth, clientID: c" + authServer + "}}\n" +
			"  - {name: exch, url: \"http://" + closedPort(t) + "/mcp\", timeout: 5s, connectTimeout: 1s, auth: {type: tokenExchange, tokenURL: \"" + tokenURL +
			"\", clientID: mcp-gateway, clientSecret: {value: " + exchangeSecret + "}}}\n"
	}
	run := func(cfg string, failed bool, want []string) {
		t.Helper()
		path := filepath.Join(t.TempDir(), "gateway.yaml")
		if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		out, stderr, err := runGateway(t, "check-config", "--config", path, "--online")
		if (err != nil) != failed {
			t.Errorf("err = %v, want failed %v\n%s%s", err, failed, out, stderr)
		}
		for _, w := range want {
			if !regexp.MustCompile(w).MatchString(out) {
				t.Errorf("output lacks %s:\n%s%s", w, out, stderr)
			}
		}
		if strings.Contains(out+stderr, pagesSecret) || strings.Contains(out+stderr, exchangeSecret) || strings.Contains(out+stderr, collectorKey) {
			t.Errorf("the output shows a client secret:\n%s%s", out, stderr)
		}
	}
	// The exchange backend itself is not there in both runs: its own line fails, the lines
	// under test are the others.
	run(write(op.Issuer(), "", exchanger.TokenURL(), collector.URL), true, []string{
		`(?m)^ok     approval\.issuer ` + regexp.QuoteMeta(op.Issuer()) + `: sign-in discovery: authorization and token endpoints, [1-9][0-9]* usable key\(s\); the client is checked by a sign-in only$`,
		`(?m)^ok     upstreams\[0\]\.auth notes: authorization server ` + regexp.QuoteMeta(as.Issuer()) + `: metadata usable`,
		`(?m)^ok     upstreams\[1\]\.auth\.tokenURL exch: reachable \(plain http\); no token sent$`,
		`(?m)^ok     tracing\.endpoint ` + regexp.QuoteMeta(collector.URL) + `: an export with no span accepted$`,
		`(?m)^ok     upstreams\[0\] notes: answers 401 without a user's token, as a per-user OAuth backend does; protocol and tools not checked$`,
		`(?m)^FAILED upstreams\[1\] exch: `,
	})
	if reqs := collector.Requests(); len(reqs) != 1 || reqs[0].Path != otlptest.TracesPath || reqs[0].Header.Get("X-Collector-Key") != collectorKey || len(collector.Spans()) != 0 {
		t.Errorf("the collector was sent %+v, %d span(s); want one export with its key and no span", reqs, len(collector.Spans()))
	}
	run(write(plain.URL(), ", authServer: \""+plain.URL()+"\"", "http://"+closedPort(t)+"/token", "http://"+closedPort(t)), true, []string{
		`(?m)^ok     auth\.issuers\[0\] `,
		`(?m)^FAILED approval\.issuer ` + regexp.QuoteMeta(plain.URL()) + `: .*authorization_endpoint`,
		`(?m)^FAILED upstreams\[0\]\.auth notes: `,
		`(?m)^FAILED upstreams\[1\]\.auth\.tokenURL exch: .*connect`,
		`(?m)^FAILED tracing\.endpoint `,
	})
}

// TestRunOnlineBounded: check-config --online contacts at most maxOnlineChecks items at once,
// each within onlineCheckTimeout, and reports them in configuration order. The checks hold
// until the test lets them go, one at a time.
func TestRunOnlineBounded(t *testing.T) {
	const n = 3*maxOnlineChecks + 1
	var mu sync.Mutex
	inflight, most := 0, 0
	entered, release := make(chan struct{}), make(chan struct{})
	checks := make([]onlineCheck, n)
	for i := range checks {
		checks[i] = func(ctx context.Context) onlineResult {
			mu.Lock()
			inflight++
			most = max(most, inflight)
			mu.Unlock()
			dl, ok := ctx.Deadline()
			entered <- struct{}{}
			<-release
			mu.Lock()
			inflight--
			mu.Unlock()
			if !ok || time.Until(dl) > onlineCheckTimeout {
				return onlineResult{item: strconv.Itoa(i), err: errors.New("no deadline within onlineCheckTimeout")}
			}
			return onlineResult{item: strconv.Itoa(i)}
		}
	}
	done := make(chan []onlineResult)
	full := make(chan int, n) // the runner never waits on the test to tell it is full
	go func() { done <- runOnline(context.Background(), checks, func(started int) { full <- started }) }()
	// None is released until maxOnlineChecks have started and the runner waits for a slot for
	// the next: then the next cannot start. A bound broken either way fails the test at once: a
	// check beyond it starts, or the runner waits with fewer started; nothing here waits on
	// the clock.
	for started, waiting := 0, false; started < maxOnlineChecks || !waiting; {
		select {
		case <-entered:
			if started++; started > maxOnlineChecks {
				t.Fatalf("a check started while %d were running", maxOnlineChecks)
			}
		case s := <-full:
			if s != maxOnlineChecks {
				t.Fatalf("the runner waits for a slot with %d checks started, want %d", s, maxOnlineChecks)
			}
			waiting = true
		}
	}
	for range n - maxOnlineChecks {
		release <- struct{}{}
		<-entered
	}
	for range maxOnlineChecks {
		release <- struct{}{}
	}
	results := <-done
	if most != maxOnlineChecks {
		t.Errorf("%d checks ran at once, want %d", most, maxOnlineChecks)
	}
	for i, r := range results {
		if r.item != strconv.Itoa(i) || r.err != nil {
			t.Errorf("result %d = %q, %v", i, r.item, r.err)
		}
	}
}

// TestCheckConfigOnlineTracing: a collector that is reachable but would refuse every batch
// fails check-config --online, where a connection alone passed: one that refuses the
// configured key (401) and an endpoint whose path is not the receiver's (the export goes to
// the wrong place, 400) each fail with the collector's status; the key never shows.
func TestCheckConfigOnlineTracing(t *testing.T) {
	const key = "collector-key-456"
	good, refusing := otlptest.Start(t, 200), otlptest.Start(t, http.StatusUnauthorized)
	for _, tc := range []struct{ endpoint, want string }{
		{good.URL, `(?m)^ok     tracing\.endpoint ` + regexp.QuoteMeta(good.URL) + `: an export with no span accepted$`},
		{refusing.URL, `(?m)^FAILED tracing\.endpoint ` + regexp.QuoteMeta(refusing.URL) + `: .*401`},
		{good.URL + "/otlp", `(?m)^FAILED tracing\.endpoint ` + regexp.QuoteMeta(good.URL) + `/otlp: .*400`},
	} {
		checkOnlineLines(t, "tracing: {endpoint: \""+tc.endpoint+"\", insecure: true, headers: {X-Collector-Key: {value: "+key+"}}}\n",
			strings.Contains(tc.want, "FAILED"), []string{tc.want}, key)
	}
}
