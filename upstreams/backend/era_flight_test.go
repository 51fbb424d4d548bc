package backend

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/bodyread"
	"github.com/mcp-gateway/gateway/internal/era"
	"github.com/mcp-gateway/gateway/internal/testsupport/flighttest"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams/names"
)

// A caller that found the era unknown while another's probe was under way, and reached the
// flight only after the probe failed, is given the backoff that failure started: the backend
// sees one probe, not two.
func TestEraFlightAfterAnotherFailed(t *testing.T) {
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		requests.Add(1)
		http.Error(w, "bad gateway", http.StatusBadGateway)
	}))
	defer srv.Close()
	env := &Env{Log: slog.New(slog.DiscardHandler), Now: time.Now, Names: names.New("__", false, []string{"s"}),
		Results: bodyread.NewBudget(1 << 20)}
	b, err := New(Config{Name: "s", URL: srv.URL, Breaker: BreakerConfig{Disabled: true}}, env)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	var second error
	var once int64
	first := flighttest.HeldFirst(&b.legacy.beforeFlight,
		func() error {
			_, _, err := b.isLegacy(context.Background(), &Request{Method: "tools/call"})
			return err
		},
		func() {
			_, _, second = b.isLegacy(context.Background(), &Request{Method: "tools/call"})
			once = requests.Load()
		})
	if first == nil || second == nil {
		t.Fatalf("errors %v and %v, want the probe's failure", first, second)
	}
	if n := requests.Load(); once == 0 || n != once {
		t.Fatalf("%d requests to the backend, want the %d of one probe", n, once)
	}
}

// TestEraFlightJoinerGetsItsOwnOutcome: at a per-user backend the era probe is charged to, and
// carries the token of, the caller who started it. When that caller's probe is refused for
// something about that caller alone (its own circuit open, no account token), a caller who
// joined the flight is not handed that refusal: it probes under its own charge and learns the
// era. The starter still gets its own refusal.
func TestEraFlightJoinerGetsItsOwnOutcome(t *testing.T) {
	const alice, bob = "https://issuer.example#alice", "https://issuer.example#bob"
	for _, tt := range []struct {
		name string
		// prepare makes alice's probe refused for her alone; want is that refusal.
		prepare func(t *testing.T, b *Backend)
		want    error
	}{
		{"her own circuit is open", func(t *testing.T, b *Backend) {
			now := b.env.Now()
			for range 20 {
				if errors.Is(b.breaker.allow(now, false, alice), ErrCallerCircuitOpen) {
					return
				}
				b.breaker.result(now, alice, OutcomeTimeout)
			}
			t.Fatal("alice's own circuit did not open")
		}, ErrCallerCircuitOpen},
		{"she has no account token", func(*testing.T, *Backend) {}, ErrUserTokenNeeded},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// Only bob has connected an account.
			be := mcptest.StartServer(t, "alpha", mcptest.WithAccountToken("bob-account"))
			env := &Env{Log: slog.New(slog.DiscardHandler), Now: time.Now, Names: names.New("__", false, []string{"alpha"}),
				Results: bodyread.NewBudget(1 << 20), UserTokens: mcptest.AccountVault{Caller: bob, Token: "bob-account"}}
			b, err := New(Config{Name: "alpha", URL: be.URL(), Auth: AuthConfig{Type: AuthUserOAuth},
				Breaker: BreakerConfig{Failures: 4, MinCallers: 2}}, env)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			tt.prepare(t, b)

			// Alice's flight is held at its start until bob has joined it.
			joins, release := make(chan struct{}, 8), make(chan struct{})
			var hold sync.Once
			b.legacy.joined = func() { joins <- struct{}{} }
			b.legacy.inFlight = func() { hold.Do(func() { <-release }) }
			call := func(caller string) error {
				_, _, err := b.isLegacy(context.Background(), &Request{Method: "tools/call", Caller: caller, FromCaller: true})
				return err
			}
			aliceDone := make(chan error, 1)
			go func() { aliceDone <- call(alice) }()
			<-joins // alice started the flight
			bobDone := make(chan error, 1)
			go func() { bobDone <- call(bob) }()
			<-joins // bob joined it
			close(release)
			if err := <-aliceDone; !errors.Is(err, tt.want) {
				t.Errorf("alice: %v, want her own %v", err, tt.want)
			}
			if err := <-bobDone; err != nil {
				t.Errorf("bob, who joined alice's flight: %v, want the era learnt under his own charge", err)
			}
			if e := b.legacy.known(); e != era.Modern {
				t.Errorf("era %d, want modern", e)
			}
		})
	}
}
