package approval

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/seal"
	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/realop"
)

// pageFixture is the page over TLS (its cookies are Secure), signing users in with a real
// OpenID provider that has a login page.
type pageFixture struct {
	svc   *Service
	srv   *httptest.Server
	op    *realop.Provider
	store *store.Memory
	clock *testClock
	log   *mcptest.LogBuffer
	obs   *countingObserver
	// idp is the page's way to the provider, which a test can cut off.
	idp *idpLink
}

// idpLink is the network between the page and the provider: while down, every connection to
// the provider goes to a listener that accepts and never answers (a hung provider), and is
// counted.
type idpLink struct {
	down      atomic.Bool
	hole      net.Listener
	attempts  atomic.Int64
	transport *http.Transport
	// tokenRequests counts requests to the provider's token endpoint.
	tokenRequests atomic.Int64
	mu            sync.Mutex
	held          []net.Conn
}

func newIDPLink(t *testing.T) *idpLink {
	t.Helper()
	hole, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := &idpLink{hole: hole}
	l.transport = &http.Transport{DialContext: l.dial, DisableKeepAlives: true}
	go func() {
		for {
			c, err := hole.Accept()
			if err != nil {
				return
			}
			l.mu.Lock()
			l.held = append(l.held, c)
			l.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = hole.Close()
		l.mu.Lock()
		defer l.mu.Unlock()
		for _, c := range l.held {
			_ = c.Close()
		}
	})
	return l
}

func (l *idpLink) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if l.down.Load() {
		l.attempts.Add(1)
		addr = l.hole.Addr().String()
	}
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

// client reaches the provider through the link; a request gives up after timeout.
func (l *idpLink) client(timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout, Transport: l}
}

// RoundTrip sends r to the provider, counting token requests.
func (l *idpLink) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.HasSuffix(r.URL.Path, "/oauth/token") {
		l.tokenRequests.Add(1)
	}
	return l.transport.RoundTrip(r)
}

// countingObserver counts the page's refusals by reason.
type countingObserver struct {
	nopObserver
	mu       sync.Mutex
	refusals map[string]int
}

func (o *countingObserver) Refused(reason string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.refusals[reason]++
}

func (o *countingObserver) refused(reason string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.refusals[reason]
}

// testClock is the page's clock: the time the fixture started, plus what a test moved it
// forward by; it does not move by itself.
type testClock struct {
	start time.Time
	ahead atomic.Int64
}

func (c *testClock) now() time.Time { return c.start.Add(time.Duration(c.ahead.Load())) }

// advance moves the clock forward by d.
func (c *testClock) advance(d time.Duration) { c.ahead.Add(int64(d)) }

const testClientID, testClientSecret = "gateway-approval", "approval-secret"

// storeAndKeys are a memory store on the clock now and the page's sealing keys.
func storeAndKeys(t *testing.T, now func() time.Time) (*store.Memory, *seal.KeyRing) {
	t.Helper()
	mem, err := store.NewMemory(store.MemoryOptions{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mem.Close() })
	ring, err := seal.New(seal.Config{Keys: []seal.Key{{ID: "k1", Secret: []byte("a-test-only-secret-of-at-least-32-bytes")}},
		MaxTokenBytes: 2 * MaxRecordBytes})
	if err != nil {
		t.Fatal(err)
	}
	return mem, ring
}

func newPageFixture(t *testing.T, configure ...func(*Config)) *pageFixture {
	t.Helper()
	op := realop.Start(t, realop.Options{})
	clock := &testClock{start: time.Now()}
	mem, ring := storeAndKeys(t, clock.now)
	f := &pageFixture{op: op, store: mem, clock: clock, log: &mcptest.LogBuffer{},
		obs: &countingObserver{refusals: map[string]int{}}, idp: newIDPLink(t)}
	f.srv = httptest.NewUnstartedServer(nil)
	f.srv.StartTLS()
	t.Cleanup(f.srv.Close)
	cfg := Config{BaseURL: f.srv.URL, Issuer: op.Issuer(), ClientID: testClientID, ClientSecret: testClientSecret}
	for _, c := range configure {
		c(&cfg)
	}
	cfg = cfg.WithDefaults()
	op.AddWebClient(testClientID, testClientSecret, cfg.redirectURL())
	var err error
	f.svc, err = New(cfg, Deps{Store: mem, Keys: ring, Logger: slog.New(slog.NewTextHandler(f.log, nil)), Clock: f.clock.now,
		Observer: f.obs, HTTPClient: f.idp.client(2 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	f.srv.Config.Handler = f.svc
	return f
}

// renderPage renders step of call's page for sess and returns the HTML.
func (f *pageFixture) renderPage(t *testing.T, c Call, sess *session, step byte) string {
	t.Helper()
	page, err := f.svc.askPage(c, sess, step, "")
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	f.svc.render(rec, http.StatusOK, page)
	return rec.Body.String()
}

// ask stores a call of the first example user with args and returns its id and page URL.
func (f *pageFixture) ask(t *testing.T, subject, args string) (string, string) {
	t.Helper()
	var nonce [16]byte
	_, _ = rand.Read(nonce[:])
	id := hex.EncodeToString(nonce[:])
	page, err := f.svc.Ask(context.Background(), Call{ID: id, Issuer: f.op.Issuer(), Subject: subject,
		Upstream: "files", Tool: "files__delete", UpstreamTool: "delete", Arguments: json.RawMessage(args),
		Digest: []byte("digest-of-the-arguments-32-bytes"), Client: "test-client 1.0", Expiry: time.Now().Add(5 * time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	return id, page
}

// signedIn stores a call of the first example user and signs that user in on its page in a
// new browser; it returns the call's id and page, the browser and the page it shows.
func (f *pageFixture) signedIn(t *testing.T) (id, page string, c *http.Client, body string) {
	t.Helper()
	id, page = f.ask(t, realop.UserID, `{"path":"/tmp/x"}`)
	c = f.browser(t)
	_, body = f.signIn(t, c, page, f.op.Username())
	return id, page, c, body
}

// browser is an HTTP client with a cookie jar that trusts the fixture's certificate.
func (f *pageFixture) browser(t *testing.T) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	// A copy: srv.Client returns one shared client, and each browser has its own cookies.
	return &http.Client{Transport: f.srv.Client().Transport, Jar: jar, Timeout: 20 * time.Second}
}

// signIn opens page (which sends the browser to the provider), signs in with the provider's
// login form and returns the page the browser lands on.
func (f *pageFixture) signIn(t *testing.T, c *http.Client, page, username string) (*http.Response, string) {
	t.Helper()
	resp, err := c.Get(page)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	id := resp.Request.URL.Query().Get("authRequestID")
	if id == "" {
		t.Fatalf("not sent to the provider's login page: %s", resp.Request.URL)
	}
	login := resp.Request.URL.ResolveReference(&url.URL{Path: "/login/username"})
	resp, err = c.PostForm(login.String(), url.Values{"id": {id}, "username": {username}, "password": {realop.UserPassword}})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	return resp, string(body)
}

// csrfOf extracts the decision forms' token from a page.
func csrfOf(t *testing.T, body string) string {
	t.Helper()
	_, rest, ok := strings.Cut(body, `name="csrf" value="`)
	if !ok {
		t.Fatalf("no CSRF token on the page:\n%s", body)
	}
	tok, _, _ := strings.Cut(rest, `"`)
	return tok
}

// postDecision posts a decision form to page as the page's own form does in a browser: with
// the page's Origin and Sec-Fetch-Site: same-origin.
func (f *pageFixture) postDecision(t *testing.T, c *http.Client, page string, form url.Values) (int, string) {
	t.Helper()
	return f.postDecisionWith(t, c, page, form, http.Header{"Origin": {f.srv.URL}, "Sec-Fetch-Site": {"same-origin"}})
}

// postDecisionWith posts a decision form with the given request headers.
func (f *pageFixture) postDecisionWith(t *testing.T, c *http.Client, page string, form url.Values, h http.Header) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, page, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = h.Clone()
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode, string(body)
}

// approve approves a call on its page as a user does: Approve with the page's token, then,
// MinDwell later, the confirmation step's Approve with that step's token. body is the page
// with the call; it returns the status of the last post.
func (f *pageFixture) approve(t *testing.T, c *http.Client, page, body string) int {
	t.Helper()
	status, confirm := f.postDecision(t, c, page, url.Values{"decision": {"approve"}, "csrf": {csrfOf(t, body)}})
	if status != http.StatusOK || !strings.Contains(confirm, `value="confirm"`) {
		return status
	}
	f.clock.advance(MinDwell)
	status, _ = f.postDecision(t, c, page, url.Values{"decision": {"confirm"}, "csrf": {csrfOf(t, confirm)}})
	return status
}
