package gateway

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/testsupport/browsertest"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/realop"
)

// The promise that an authorization server that is down gives the client a clear, retryable
// error and forwards nothing, end to end: a connected user's access token has expired, the
// backend's authorization server is unreachable, hangs, or answers 500 or garbage (or the
// vault's store is paused), and the calls of a 2026-07-28 client and a 2025-11-25 client, on
// either replica, are answered -32014 (503, Retry-After) within the configured timeout while
// the backend receives nothing; once the server is back the next call refreshes and succeeds.

const (
	// uoTokenLifetime is the access tokens' lifetime at the backend's authorization server:
	// each case waits for one token to expire.
	uoTokenLifetime = 2 * time.Second
	// uoASTimeout is the backend's auth.timeout: one request to its authorization server.
	uoASTimeout = time.Second
	// uoRefreshCooldown is userOAuth.refreshCooldown: how long a replica leaves the server
	// alone after a refresh failed there, the Retry-After its callers are given (the default
	// of 5 s would be waited through in every case).
	uoRefreshCooldown = time.Second
	// uoUnavailableRetry is the Retry-After of a call whose token could not be had for another
	// reason than a cooldown (the store is down).
	uoUnavailableRetry = 5 * time.Second
)

// asMode is how asFront answers a connection.
type asMode string

const (
	asUp      asMode = "up"      // the authorization server serves it
	asDown    asMode = "down"    // nothing listens: connection refused
	asHang    asMode = "hang"    // accepted, never answered
	as500     asMode = "500"     // an HTTP 500 with a text body
	asGarbage asMode = "garbage" // an HTTP 200 whose JSON body is cut short
)

// asFront is the authorization server's listener, owned by the test: it hands connections to
// the server while up, and otherwise refuses, holds or answers them itself, at the same
// address (so at the same issuer) throughout.
type asFront struct {
	addr  net.Addr
	toSrv chan net.Conn
	done  chan struct{}
	once  sync.Once

	mu   sync.Mutex
	mode asMode
	ln   net.Listener          // nil while down
	held map[net.Conn]struct{} // closed at every change of mode
}

func newASFront(t *testing.T) *asFront {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &asFront{addr: ln.Addr(), toSrv: make(chan net.Conn), done: make(chan struct{}), mode: asUp, ln: ln,
		held: map[net.Conn]struct{}{}}
	go f.serve(ln)
	t.Cleanup(func() { _ = f.Close() })
	return f
}

// Accept gives the authorization server the connections it is to serve (net.Listener).
func (f *asFront) Accept() (net.Conn, error) {
	select {
	case c := <-f.toSrv:
		return c, nil
	case <-f.done:
		return nil, net.ErrClosed
	}
}

// Close stops the front and drops every connection (net.Listener).
func (f *asFront) Close() error {
	f.once.Do(func() {
		close(f.done)
		f.set(asDown)
	})
	return nil
}

// Addr is the authorization server's address (net.Listener).
func (f *asFront) Addr() net.Addr { return f.addr }

// set changes how the next connections are answered; the open ones are closed, so that no
// connection kept alive by the gateway carries the old behaviour.
func (f *asFront) set(m asMode) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for c := range f.held {
		_ = c.Close()
	}
	clear(f.held)
	f.mode = m
	switch {
	case m == asDown && f.ln != nil:
		err := f.ln.Close()
		f.ln = nil
		return err
	case m != asDown && f.ln == nil:
		ln, err := net.Listen("tcp", f.addr.String())
		if err != nil {
			return err
		}
		f.ln = ln
		go f.serve(ln)
	}
	return nil
}

func (f *asFront) serve(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		f.mu.Lock()
		m := f.mode
		f.held[c] = struct{}{}
		f.mu.Unlock()
		switch m {
		case asUp:
			select {
			case f.toSrv <- c:
			case <-f.done:
				_ = c.Close()
			}
		case as500:
			go answerRaw(c, "HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/plain\r\nContent-Length: 5\r\nConnection: close\r\n\r\noops\n")
		case asGarbage:
			go answerRaw(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 17\r\nConnection: close\r\n\r\n{\"access_token\":")
		}
	}
}

// answerRaw reads one request from c and writes resp.
func answerRaw(c net.Conn, resp string) {
	defer c.Close()
	req, err := http.ReadRequest(bufio.NewReader(c))
	if err != nil {
		return
	}
	_, _ = io.Copy(io.Discard, req.Body)
	_, _ = io.WriteString(c, resp)
}

// secretsSeen keeps the codes and refresh tokens the gateway sends the authorization server,
// so that the test can look for them in the logs.
type secretsSeen struct {
	mu     sync.Mutex
	values []string
	// onRefresh, when set, runs once as the next refresh grant arrives, before it is served.
	onRefresh atomic.Pointer[func()]
}

func (s *secretsSeen) observe(r *http.Request) {
	if r.Method != http.MethodPost || !strings.Contains(r.URL.Path, "token") {
		return
	}
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	form, _ := url.ParseQuery(string(body))
	if form.Get("grant_type") == "refresh_token" && s.onRefresh.Load() != nil {
		(*s.onRefresh.Swap(nil))()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range []string{"code", "refresh_token", "code_verifier"} {
		if v := form.Get(k); v != "" {
			s.values = append(s.values, v)
		}
	}
}

func (s *secretsSeen) all() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.values...)
}

// unavailableSeen records the gateway's 503 answers a client receives.
type unavailableSeen struct {
	mu    sync.Mutex
	last  string // Retry-After and body of the last 503
	count int
}

func (u *unavailableSeen) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil || resp.StatusCode != http.StatusServiceUnavailable {
		return resp, err
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body = io.NopCloser(bytes.NewReader(body))
	u.mu.Lock()
	u.last, u.count = "Retry-After: "+resp.Header.Get("Retry-After")+"\n"+string(body), u.count+1
	u.mu.Unlock()
	return resp, nil
}

func (u *unavailableSeen) take() (string, int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	last, n := u.last, u.count
	u.last, u.count = "", 0
	return last, n
}

// TestUserOAuthAuthServerDown: with the user's access token expired, an authorization server
// that refuses connections, hangs, answers 500 or garbage, and a store paused during the
// refresh, each give both eras' clients the retryable -32014 within the timeout, the backend
// receives nothing and no token reaches the logs; the next call after recovery, once the
// Retry-After given has passed, refreshes and succeeds.
func TestUserOAuthAuthServerDown(t *testing.T) {
	t.Parallel()
	browser := browsertest.New(t)
	front, seen := newASFront(t), &secretsSeen{}
	site := startUserOAuthSite(t, uoSiteOptions{asTimeout: uoASTimeout.String(), refreshCooldown: uoRefreshCooldown.String(),
		as: realop.Options{Listener: front, AccessTokenLifetime: uoTokenLifetime, Observe: seen.observe}})
	tok, err := site.op.UserToken(callCtx(t), site.op.Username(), realop.UserPassword)
	if err != nil {
		t.Fatal(err)
	}
	wantSub := "sub=" + realop.OtherUserID
	modernSeen, legacySeen := &unavailableSeen{}, &unavailableSeen{}
	modern := mcptest.Connect(t, "http://"+site.replicas["a"].mcp+"/mcp", mcptest.WithBearer(tok),
		mcptest.WithCapabilities(urlElicitation), mcptest.WithManualMRTR(), mcptest.WithRoundTripper(modernSeen))
	legacy := mcptest.Connect(t, "http://"+site.replicas["b"].mcp+"/mcp", mcptest.WithBearer(tok),
		mcptest.WithProtocolVersion("2025-11-25"), mcptest.WithRoundTripper(legacySeen))

	// The user connects once, in the browser.
	site.connectInBrowser(t, browsertest.Tab(t, browser), site.needsConnect(t, modern), "a", "b", realop.OtherUsername)
	if got := whoami(t, modern); got != wantSub {
		t.Fatalf("after connecting: %q", got)
	}
	refreshed := time.Now()

	// retry is the Retry-After each client is told: the cooldown's when the server failed.
	down := func(t *testing.T, retry time.Duration, breakIt, repair func() error) {
		// The gateway took the token's expiry from expires_in when it received it, before
		// refreshed: once uoTokenLifetime has passed since, the token has expired.
		time.Sleep(time.Until(refreshed.Add(uoTokenLifetime)))
		if err := breakIt(); err != nil {
			t.Fatal(err)
		}
		before := toolCalls(site.backend.Server)
		for _, c := range []struct {
			era  string
			cs   *mcp.ClientSession
			seen *unavailableSeen
		}{{"2026-07-28", modern, modernSeen}, {"2025-11-25", legacy, legacySeen}} {
			// The refresh waits at most twice the timeout (discovery, then the token request);
			// a call still open after more than that has waited for the server.
			ctx, cancel := context.WithTimeout(t.Context(), 3*uoASTimeout+5*time.Second)
			res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: uoWhoami, Arguments: map[string]any{}})
			cancel()
			answer, n := c.seen.take()
			if err == nil || !strings.Contains(err.Error(), "Service Unavailable") || n != 1 {
				t.Fatalf("%s client: %v %+v, want the retryable 503", c.era, err, res)
			}
			for _, want := range []string{"Retry-After: " + strconv.Itoa(int(retry/time.Second)) + "\n", `"code":-32014`, "authorization server or the gateway's token store is unavailable; retry later"} {
				if !strings.Contains(answer, want) {
					t.Errorf("%s client's answer lacks %q:\n%s", c.era, want, answer)
				}
			}
		}
		if n := toolCalls(site.backend.Server); n != before {
			t.Errorf("the backend was called %d times without a token", n-before)
		}
		// A replica whose refresh failed at the server leaves it alone for the Retry-After
		// it gave (docs/user-oauth.md): the clients retry once that has passed.
		retryAt := time.Now().Add(retry)
		if err := repair(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Until(retryAt))
		if got := whoami(t, modern); got != wantSub {
			t.Errorf("after recovery: %q", got)
		}
		refreshed = time.Now()
		if got := whoami(t, legacy); got != wantSub {
			t.Errorf("after recovery, the 2025-11-25 client: %q", got)
		}
	}
	up := func() error { return front.set(asUp) }
	for _, m := range []asMode{asDown, asHang, as500, asGarbage} {
		t.Run("authorization server "+string(m), func(t *testing.T) {
			down(t, uoRefreshCooldown, func() error { return front.set(m) }, up)
		})
	}
	t.Run("store paused", func(t *testing.T) {
		down(t, uoUnavailableRetry, func() error { site.redis.Pause(); return nil }, func() error { site.redis.Resume(); return nil })
	})

	// The store stops while the authorization server answers the refresh: the server has
	// rotated the refresh token, and the gateway cannot store the new one yet.
	t.Run("store paused during the refresh", func(t *testing.T) {
		down(t, uoUnavailableRetry, func() error {
			pause := func() { site.redis.Pause() }
			seen.onRefresh.Store(&pause)
			return nil
		}, func() error { site.redis.Resume(); return nil })
	})

	t.Run("no token in the logs", func(t *testing.T) {
		seenSecrets := seen.all()
		if len(seenSecrets) < 2 {
			t.Fatalf("the authorization server saw %d codes and refresh tokens", len(seenSecrets))
		}
		secrets := append(append(site.backend.Tokens(), seenSecrets...), tok, uoASSecret, uoVaultKey)
		if all := site.logsWithout(t, secrets); !bytes.Contains(all, []byte("useroauth: refresh failed")) {
			t.Error("no replica logged the failed refreshes")
		}
	})
}
