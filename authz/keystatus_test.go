package authz

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// closedURL is an http URL on loopback where nothing listens.
func closedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := "http://" + ln.Addr().String()
	ln.Close()
	return u
}

// silentURL is an http URL on loopback that accepts connections and never answers.
func silentURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return "http://" + ln.Addr().String()
}

// TestKeysReadyNamesEveryBrokenIssuer: with a real issuer over HTTP beside misconfigured ones,
// KeysReady reports every issuer whose keys were never fetched, each with the class of its
// failure, and nothing about the good one once FetchKeys has run.
func TestKeysReadyNamesEveryBrokenIssuer(t *testing.T) {
	good := startIssuer(t, newClock())
	tlsSrv := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(tlsSrv.Close)
	empty := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"keys":[]}`))
	}))
	t.Cleanup(empty.Close)
	var docs *httptest.Server
	docs = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if strings.HasPrefix(r.URL.Path, "/garbage/") {
			_, _ = w.Write([]byte(`<html>`))
			return
		}
		_, _ = w.Write([]byte(`{"issuer":"` + docs.URL + `/nojwks"}`))
	}))
	t.Cleanup(docs.Close)
	broken := map[string]string{
		good.URL() + "/typo":     FetchHTTPStatus,     // a wrong path: discovery answers 404
		docs.URL + "/other":      FetchIssuerMismatch, // the document names another issuer
		closedURL(t):             FetchConnect,
		"https://issuer.invalid": FetchDNS,
		tlsSrv.URL:               FetchTLS, // a certificate nobody trusts
		silentURL(t):             FetchTimeout,
		docs.URL + "/nojwks":     FetchNoJWKSURI,
		docs.URL + "/garbage":    FetchBadDocument,
	}
	cfg := Config{Issuers: []IssuerConfig{{Issuer: good.URL()}}, FetchTimeout: 3 * time.Second,
		Policy: PolicyConfig{Rules: []RuleConfig{{ID: "any", Tools: []string{"*"}, Issuers: []string{"*"}}}}}
	for u := range broken {
		cfg.Issuers = append(cfg.Issuers, IssuerConfig{Issuer: u})
	}
	cfg.Issuers = append(cfg.Issuers, IssuerConfig{Issuer: good.URL() + "/empty", JWKSURL: empty.URL})
	broken[good.URL()+"/empty"] = FetchNoKeys
	a, err := NewAuthenticator(cfg, Options{ResourceURI: testResource})
	if err != nil {
		t.Fatal(err)
	}
	err = a.KeysReady()
	if err == nil || !strings.Contains(err.Error(), "issuer "+good.URL()+": keys not fetched yet") {
		t.Fatalf("before any fetch: KeysReady = %v, want every issuer pending", err)
	}
	err = a.FetchKeys(context.Background())
	var pending PendingKeysError
	if !errors.As(err, &pending) || len(pending) != len(broken) {
		t.Fatalf("FetchKeys = %v, want %d issuers pending", err, len(broken))
	}
	for _, ie := range pending {
		want, ok := broken[ie.Issuer]
		if !ok {
			t.Errorf("%s reported pending: %v", ie.Issuer, ie)
			continue
		}
		if got := FetchErrorClass(ie); got != want {
			t.Errorf("%s: class %q (%v), want %q", ie.Issuer, got, ie.Err, want)
		}
		if !strings.Contains(ie.Error(), "("+want+")") || !strings.Contains(err.Error(), ie.Issuer) {
			t.Errorf("%s: the report %q does not name the issuer and the class", ie.Issuer, err)
		}
	}
}

// TestKeysReadyAfterRequestFetch: keys fetched by a request's verification count as well.
func TestKeysReadyAfterRequestFetch(t *testing.T) {
	clk := newClock()
	iss := startIssuer(t, clk)
	a := newAuth(t, Config{Issuers: []IssuerConfig{{Issuer: iss.URL()}}}, clk)
	if a.KeysReady() == nil {
		t.Fatal("ready before any fetch")
	}
	wantAuth(t, a, mint(t, iss, nil), nil, ReasonNone)
	if err := a.KeysReady(); err != nil {
		t.Fatalf("after a verified token: %v", err)
	}
}

// TestWatchKeysRetriesUntilFetched: an issuer down at start is logged (warn, with its URL and
// the class of the failure) and tried again with back-off until its keys are fetched; then
// WatchKeys logs the recovery and returns.
func TestWatchKeysRetriesUntilFetched(t *testing.T) {
	iss, err := devissuer.New(devissuer.Options{Audience: testResource})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { iss.Close() })
	iss.SetDown(true)
	var logs mcptest.LogBuffer
	a, err := NewAuthenticator(Config{Issuers: []IssuerConfig{{Issuer: iss.URL()}}, DiscoveryRetryInterval: 20 * time.Millisecond},
		Options{ResourceURI: testResource, Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { a.WatchKeys(context.Background()); close(done) }()
	deadline := time.Now().Add(10 * time.Second)
	for strings.Count(logs.String(), `"level":"WARN"`) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("no second attempt logged: %s", logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := a.KeysReady(); err == nil {
		t.Fatal("ready while the issuer is down")
	}
	line := logs.String()
	for _, want := range []string{`"issuer":"` + iss.URL() + `"`, `"class":"http_status"`, `"retry_in"`, "not ready"} {
		if !strings.Contains(line, want) {
			t.Errorf("the warning lacks %s: %s", want, line)
		}
	}
	iss.SetDown(false)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("WatchKeys did not return once the issuer was back")
	}
	if err := a.KeysReady(); err != nil {
		t.Fatalf("after recovery: %v", err)
	}
	if !strings.Contains(logs.String(), `"msg":"issuer keys fetched"`) {
		t.Errorf("the recovery is not logged: %s", logs.String())
	}
}

// TestPreviousIssuersTakenOver: an authenticator built to replace another takes over the
// issuers whose settings did not change, keys included, so it is ready (and verifies) while
// the issuer is unreachable; a changed issuer starts again.
func TestPreviousIssuersTakenOver(t *testing.T) {
	clk := newClock()
	iss := startIssuer(t, clk)
	cfg := Config{Issuers: []IssuerConfig{{Issuer: iss.URL()}}}
	old := newAuth(t, cfg, clk)
	if err := old.FetchKeys(context.Background()); err != nil {
		t.Fatal(err)
	}
	iss.SetDown(true)
	same, err := NewAuthenticator(cfg, Options{ResourceURI: testResource, Now: clk.Now, Previous: old})
	if err != nil {
		t.Fatal(err)
	}
	if err := same.KeysReady(); err != nil {
		t.Fatalf("unchanged issuer not taken over: %v", err)
	}
	wantAuth(t, same, mint(t, iss, nil), nil, ReasonNone)

	cfg.Issuers[0].Audiences = []string{"https://other.example/mcp"}
	changed, err := NewAuthenticator(cfg, Options{ResourceURI: testResource, Now: clk.Now, Previous: old})
	if err != nil {
		t.Fatal(err)
	}
	if changed.KeysReady() == nil {
		t.Fatal("an issuer whose audiences changed was taken over")
	}
}
