package gateway

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/mcphttp"
)

// peerFixture is a gateway that authenticates with tokens of a real issuer (go-oidc over HTTP),
// behind a real HAProxy that appends X-Forwarded-For and listens on 127.0.0.1 and ::1. Only
// 127.0.0.1, HAProxy's side, is a trusted proxy; test clients dial from other loopback
// addresses (127.0.0.2...), which are their addresses as clients.
type peerFixture struct {
	gw        Listeners
	iss       *devissuer.Issuer
	proxy     string // HAProxy's IPv4 frontend
	proxy6    string // HAProxy's IPv6 frontend ([::1]:port)
	maxUnauth int
	burst     int
}

func startPeerFixture(t *testing.T) *peerFixture {
	t.Helper()
	f := &peerFixture{iss: newIssuer(t), maxUnauth: 2, burst: 3}
	f.gw = startTestGateway(t, func(c *Config) {
		trustIssuers(c, f.iss)
		c.Server.TrustedProxies = []string{"127.0.0.1/32"}
		// One token earned back a minute: the refusals below cannot expire during the test.
		c.Server.PerClient = mcphttp.PerClientConfig{MaxUnauthenticated: f.maxUnauth,
			FailedAuthPerMinute: 1, FailedAuthBurst: f.burst}
	}, mcptest.StartServer(t, "alpha"))
	f.proxy, f.proxy6 = startForwardingProxy(t, f.gw.MCP)
	return f
}

// startForwardingProxy runs HAProxy in front of backend with option forwardfor, on 127.0.0.1 and,
// where the machine has IPv6 loopback, ::1 (v6 is "" otherwise: some CI containers have no
// IPv6); it fails (never skips) when HAProxy is not installed.
func startForwardingProxy(t *testing.T, backend string) (v4, v6 string) {
	t.Helper()
	bin, err := exec.LookPath("haproxy")
	if err != nil {
		if bin, err = exec.LookPath("/usr/sbin/haproxy"); err != nil {
			t.Fatalf("haproxy is required (apt-get install haproxy): %v", err)
		}
	}
	v4 = "127.0.0.1:" + freePort(t, "tcp4", "127.0.0.1:0")
	binds := "    bind " + v4 + "\n"
	if l, err := net.Listen("tcp6", "[::1]:0"); err == nil {
		v6 = l.Addr().String()
		l.Close()
		binds += "    bind " + v6 + "\n"
	} else {
		t.Logf("no IPv6 loopback (%v): the slow bodies come from 127.0.0.6 over IPv4; internal/clientaddr's tests group IPv6 by prefix", err)
	}
	cfg := fmt.Sprintf(`global
    maxconn 256
defaults
    mode http
    option forwardfor
    timeout connect 2s
    timeout client 30s
    timeout server 30s
frontend mcp
%s    default_backend gateway
backend gateway
    server g1 %s
`, binds, backend)
	dir := t.TempDir()
	path := filepath.Join(dir, "haproxy.cfg")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(dir, "haproxy.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-db", "-f", path)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		logf.Close()
	})
	deadline := time.Now().Add(10 * time.Second)
	for _, addr := range []string{v4, v6} {
		for addr != "" {
			c, err := net.Dial("tcp", addr)
			if err == nil {
				c.Close()
				break
			}
			if time.Now().After(deadline) {
				b, _ := os.ReadFile(filepath.Join(dir, "haproxy.log"))
				t.Fatalf("haproxy did not listen on %s: %v\n%s", addr, err, b)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return v4, v6
}

func freePort(t *testing.T, network, addr string) string {
	t.Helper()
	l, err := net.Listen(network, addr)
	if err != nil {
		t.Fatalf("%s %s: %v", network, addr, err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// from is an HTTP client whose connections leave from the loopback address local.
func from(local string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}, Timeout: 5 * time.Second}
	return &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}}
}

// peerReply is one answer as the tests read it.
type peerReply struct {
	status     int
	retryAfter string
	code       int
	body       string
}

// list sends a 2026-07-28 tools/list to addr (a proxy or the gateway) with token (none when
// empty) and extra headers.
func (f *peerFixture) list(t *testing.T, c *http.Client, addr, token string, extra ...string) peerReply {
	t.Helper()
	return f.send(t, c, addr, token, modernHeaders("tools/list", ""),
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+testMeta+`}}`, extra...)
}

// legacyInit sends a 2025-11-25 client's initialize, which the pre-2026 edge authenticates.
func (f *peerFixture) legacyInit(t *testing.T, c *http.Client, addr, token string) peerReply {
	t.Helper()
	h := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
	return f.send(t, c, addr, token, h, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",`+
		`"capabilities":{},"clientInfo":{"name":"legacy","version":"1"}}}`)
}

func (f *peerFixture) send(t *testing.T, c *http.Client, addr, token string, h http.Header, body string, extra ...string) peerReply {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = h
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(extra); i += 2 {
		req.Header.Add(extra[i], extra[i+1])
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return readPeerReply(res)
}

// readPeerReply reads and closes res.
func readPeerReply(res *http.Response) peerReply {
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	r := peerReply{status: res.StatusCode, retryAfter: res.Header.Get("Retry-After"), body: string(b)}
	var msg struct {
		Error *struct{ Code int } `json:"error"`
	}
	if json.Unmarshal(b, &msg) == nil && msg.Error != nil {
		r.code = msg.Error.Code
	}
	return r
}

// wantLimited checks a per-client refusal: 429, a Retry-After of at least a second, and the
// JSON-RPC error the gateway's other rate limits answer with.
func wantLimited(t *testing.T, what string, r peerReply) {
	t.Helper()
	n, err := strconv.Atoi(r.retryAfter)
	if r.status != http.StatusTooManyRequests || err != nil || n < 1 || r.code != -32012 {
		t.Errorf("%s: status %d, Retry-After %q, code %d; want 429, Retry-After >= 1, -32012\n%s",
			what, r.status, r.retryAfter, r.code, r.body)
	}
}

func wantStatus(t *testing.T, what string, r peerReply, status int) {
	t.Helper()
	if r.status != status {
		t.Errorf("%s: status %d, want %d\n%s", what, r.status, status, r.body)
	}
}

// TestPerClientBoundsBehindProxy: behind a real HAProxy that appends X-Forwarded-For, each
// client address (not the proxy's) has its own bounds before authentication. A client over its
// rate of failed authentications (bad signature, expired, wrong audience, unknown key) gets 429
// with Retry-After for any token not verified before, in both eras, while its token verified
// before goes on and another client is not slowed; a header the client sends itself, through
// the proxy or straight to the gateway, does not make it another client. A client holding its
// share of unauthenticated requests with slow bodies (from ::1, grouped by its /64) is refused
// more, and another client is served.
func TestPerClientBoundsBehindProxy(t *testing.T) {
	f := startPeerFixture(t)
	known := mintFor(t, f.iss, "known")
	a, b := from("127.0.0.2"), from("127.0.0.3")
	wantStatus(t, "A's first call", f.list(t, a, f.proxy, known), http.StatusOK)

	foreign, err := f.iss.MintForeignKeyKnownKID(devissuer.Claims{"scope": "tools:use"})
	if err != nil {
		t.Fatal(err)
	}
	unknownKey, err := f.iss.MintUnknownKey(devissuer.Claims{"scope": "tools:use"})
	if err != nil {
		t.Fatal(err)
	}
	bad := []string{foreign,
		mint(t, f.iss, devissuer.Claims{"sub": "x", "exp": time.Now().Add(-time.Hour).Unix()}),
		mint(t, f.iss, devissuer.Claims{"sub": "x", "aud": "https://elsewhere.example/mcp"}),
		unknownKey}
	for i, tok := range bad[:f.burst] {
		wantStatus(t, fmt.Sprintf("A's bad token %d", i), f.list(t, a, f.proxy, tok), http.StatusUnauthorized)
	}
	wantLimited(t, "A's bad token over the rate", f.list(t, a, f.proxy, bad[f.burst]))
	wantLimited(t, "A's new good token over the rate", f.list(t, a, f.proxy, mintFor(t, f.iss, "fresh")))
	wantStatus(t, "A's token verified before", f.list(t, a, f.proxy, known), http.StatusOK)
	wantStatus(t, "B's new token", f.list(t, b, f.proxy, mintFor(t, f.iss, "b")), http.StatusOK)
	wantStatus(t, "B's bad token", f.list(t, b, f.proxy, foreign), http.StatusUnauthorized)

	// Spoofed headers: through the proxy, A's own X-Forwarded-For is left of the entry HAProxy
	// appends; straight to the gateway, A is not a trusted proxy and its headers are not read.
	wantLimited(t, "A naming another client through the proxy",
		f.list(t, a, f.proxy, mintFor(t, f.iss, "spoof1"), "X-Forwarded-For", "198.51.100.9"))
	wantLimited(t, "A naming another client to the gateway",
		f.list(t, a, f.gw.MCP, mintFor(t, f.iss, "spoof2"), "X-Forwarded-For", "198.51.100.10", "Forwarded", "for=198.51.100.11"))

	// The pre-2026 edge authenticates through the same stage.
	c := from("127.0.0.4")
	for i := range f.burst {
		wantStatus(t, fmt.Sprintf("legacy bad token %d", i), f.legacyInit(t, c, f.proxy, foreign), http.StatusUnauthorized)
	}
	wantLimited(t, "legacy client over the rate", f.legacyInit(t, c, f.proxy, mintFor(t, f.iss, "legacy")))
	wantStatus(t, "another legacy client", f.legacyInit(t, b, f.proxy, mintFor(t, f.iss, "legacy-b")), http.StatusOK)

	t.Run("slow bodies", func(t *testing.T) { f.slowBodies(t) })
	metrics := get(t, "http://"+f.gw.Admin+"/metrics")
	for _, reason := range []string{"failed_auth_rate", "unauthenticated_in_flight"} {
		line := `mcp_gateway_client_refusals_total{reason="` + reason + `"} `
		if !strings.Contains(metrics, line) || strings.Contains(metrics, line+"0\n") {
			t.Errorf("no refusal counted with reason %s", reason)
		}
	}
	if strings.Contains(metrics, "127.0.0.2") || strings.Contains(metrics, "::1") {
		t.Error("a client address is in the metrics")
	}
}

// slowBodies holds f.maxUnauth requests from ::1 whose bodies never end, through the proxy's
// IPv6 frontend (from 127.0.0.6 through its IPv4 one where the machine has no IPv6): that
// client's next request, even one with a complete body, is refused; another client is served,
// and so is the first once its bodies are gone.
func (f *peerFixture) slowBodies(t *testing.T) {
	proxy, dialer := f.proxy6, &net.Dialer{Timeout: 5 * time.Second}
	v6 := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	if proxy == "" {
		proxy, dialer = f.proxy, &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.6")}, Timeout: 5 * time.Second}
		v6 = from("127.0.0.6")
	}
	base := scrapeValue(t, f.gw.Admin, "mcp_gateway_requests_in_flight")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range f.maxUnauth {
		conn, err := dialer.Dial("tcp", proxy)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"+
			"Accept: application/json, text/event-stream\r\nContent-Length: 100000\r\n\r\n{", proxy)
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-stop
			conn.Close()
		}()
	}
	// The bodies are in when the gateway counts them in flight.
	if !settle(10*time.Second, func() bool {
		return scrapeValue(t, f.gw.Admin, "mcp_gateway_requests_in_flight") >= base+float64(f.maxUnauth)
	}) {
		t.Fatal("the slow bodies never reached the gateway")
	}
	wantLimited(t, "the client with its share held", f.list(t, v6, proxy, ""))
	wantStatus(t, "another client meanwhile", f.list(t, from("127.0.0.5"), f.proxy, mintFor(t, f.iss, "e")), http.StatusOK)
	wantStatus(t, "another client without a token meanwhile", f.list(t, from("127.0.0.5"), f.proxy, ""), http.StatusUnauthorized)
	// Routes that take no token are held to the same share: the resource metadata here.
	wantLimited(t, "the client's metadata request", f.metadata(t, v6, proxy))
	wantStatus(t, "another client's metadata request", f.metadata(t, from("127.0.0.5"), f.proxy), http.StatusOK)
	close(stop)
	wg.Wait()
	if !settle(10*time.Second, func() bool {
		return f.list(t, v6, proxy, "").status == http.StatusUnauthorized
	}) {
		t.Error("the client stayed refused once its slow bodies were gone")
	}
}

// metadata fetches the protected resource metadata through addr.
func (f *peerFixture) metadata(t *testing.T, c *http.Client, addr string) peerReply {
	t.Helper()
	res, err := c.Get("http://" + addr + "/.well-known/oauth-protected-resource/mcp")
	if err != nil {
		t.Fatal(err)
	}
	return readPeerReply(res)
}

// TestCheckConfigRefusesBadProxies: check-config names each bad trusted-proxy entry, header and
// prefix length by its key path and line, all in one pass.
func TestCheckConfigRefusesBadProxies(t *testing.T) {
	yaml := "upstreams:\n- name: a\n  url: http://127.0.0.1:1/mcp\nauth: { disabled: true }\n" +
		"server:\n  trustedProxies: [10.0.0.0/8, 10.0.0.0/33, proxy.example]\n" +
		"  clientAddressHeader: X-Real-IP\n  clientIPv6Prefix: 200\n  perClient: { maxTracked: -1 }\n"
	file := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runMain([]string{"check-config", "--config", file}, nil)
	if code != 1 {
		t.Fatalf("exit %d:\n%s", code, errOut)
	}
	for _, want := range []string{
		`server.trustedProxies[1]: "10.0.0.0/33" is not a CIDR`,
		`server.trustedProxies[2]: "proxy.example" is neither a CIDR`,
		`server.clientAddressHeader: "X-Real-IP": want X-Forwarded-For or Forwarded`,
		"server.clientIPv6Prefix: want a prefix length from 1 to 128",
		"server.perClient.maxTracked: must not be negative",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("output lacks %q:\n%s", want, errOut)
		}
	}
	if strings.Contains(errOut, "trustedProxies[0]") {
		t.Errorf("a good entry is reported:\n%s", errOut)
	}
}

// TestReloadKeepsClientFailures: a configuration reload that leaves server.perClient as it was
// keeps what client addresses have failed, so a reload during a flood of bad tokens does not
// give the flood a fresh start.
func TestReloadKeepsClientFailures(t *testing.T) {
	iss := newIssuer(t)
	alpha := mcptest.StartServer(t, "alpha")
	f := startReloadGateway(t, "30s", authYAML(iss.URL(), `["echo"]`, "", alpha))
	p := &peerFixture{}
	foreign, err := iss.MintForeignKeyKnownKID(devissuer.Claims{"scope": "tools:use"})
	if err != nil {
		t.Fatal(err)
	}
	c := from("127.0.0.1")
	for i := range 30 { // server.perClient.failedAuthBurst's default
		wantStatus(t, fmt.Sprintf("bad token %d", i), p.list(t, c, f.gw.MCP, foreign), http.StatusUnauthorized)
	}
	wantLimited(t, "over the rate", p.list(t, c, f.gw.MCP, foreign))
	if err := f.reload(t, "30s", authYAML(iss.URL(), `["echo", "add"]`, "", alpha)); err != nil {
		t.Fatalf("reload: %v", err)
	}
	wantLimited(t, "over the rate after the reload", p.list(t, c, f.gw.MCP, mintFor(t, iss, "new")))
}
