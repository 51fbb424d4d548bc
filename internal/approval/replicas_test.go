package approval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
)

// TestDecisionsOnTwoReplicasAtOnce: a call's Deny and its confirmed Approve, posted at the same
// moment to two replicas over one real Redis (the user's two tabs, or a double submit a balancer
// spreads), record one decision: one page says it was recorded, the other that the call was
// already decided and shows that decision, and both replicas then tell the gateway the same
// verdict. Repeated over many calls, so that either may win.
func TestDecisionsOnTwoReplicasAtOnce(t *testing.T) {
	srv := testredis.Start(t)
	_, ring := storeAndKeys(t, time.Now)
	cfg := Config{BaseURL: "https://gw.example", Issuer: "https://issuer.example", ClientID: testClientID}.WithDefaults()
	replica := func() *Service {
		r, err := store.NewRedis(store.RedisConfig{URL: srv.URL()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = r.Close() })
		s, err := New(cfg, Deps{Store: r, Keys: ring, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a, b := replica(), replica()
	sess := session{Issuer: cfg.Issuer, Subject: "alice", Expiry: time.Now().Add(time.Hour), CSRF: make([]byte, 32)}
	cookie, err := a.signin.Seal(ring.Sealer("mcp-gateway/approval-session/v1"), sess)
	if err != nil {
		t.Fatal(err)
	}
	post := func(s *Service, id, decision, token string) (int, string) {
		form := url.Values{"csrf": {token}, "decision": {decision}}
		r := httptest.NewRequestWithContext(t.Context(), http.MethodPost, cfg.Path+"/c/"+id, strings.NewReader(form.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.Header.Set("Origin", cfg.BaseURL)
		r.Header.Set("Sec-Fetch-Site", "same-origin")
		r.AddCookie(&http.Cookie{Name: "__Host-mcpgw_approval", Value: cookie})
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		return w.Code, w.Body.String()
	}
	wins := map[Verdict]int{}
	for i := range 20 {
		id := fmt.Sprintf("%032x", i+1)
		digest := []byte("digest-of-the-arguments-32-bytes")
		if _, err := a.Ask(context.Background(), Call{ID: id, Issuer: cfg.Issuer, Subject: "alice", Upstream: "files",
			Tool: "files__delete", UpstreamTool: "delete", Arguments: json.RawMessage(`{"path":"/x"}`), Digest: digest,
			Expiry: time.Now().Add(time.Minute)}); err != nil {
			t.Fatal(err)
		}
		confirm := csrfToken(&sess, id, stepConfirm) // its step shown long ago: the store holds no recent showing
		var wg sync.WaitGroup
		var denied, approved struct {
			status int
			body   string
		}
		wg.Go(func() { denied.status, denied.body = post(a, id, "deny", confirm) })
		wg.Go(func() { approved.status, approved.body = post(b, id, "confirm", confirm) })
		wg.Wait()
		var won Verdict
		switch {
		case denied.status == http.StatusOK && approved.status == http.StatusConflict:
			won = Denied
		case approved.status == http.StatusOK && denied.status == http.StatusConflict:
			won = Approved
		default:
			t.Fatalf("call %d: deny answered %d, approve %d; want one recorded and one already decided", i, denied.status, approved.status)
		}
		wins[won]++
		for _, body := range []string{denied.body, approved.body} {
			if !strings.Contains(body, "outcome-"+string(won)) {
				t.Errorf("call %d: a page does not show the decision recorded (%s)", i, won)
			}
		}
		for _, s := range []*Service{a, b} {
			if v, err := s.Verdict(context.Background(), id, digest); err != nil || v != won {
				t.Errorf("call %d: a replica tells %q (%v), want %q", i, v, err, won)
			}
		}
		// As the gateway does once the retry is used: the call leaves the caller's budget.
		if err := a.Finish(context.Background(), id, cfg.Issuer, "alice", time.Now().Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("decisions recorded: %v", wins)
}

// TestDecisionsOutliveTheirStateOnSkewedReplicas: a call's records last as long as any replica
// whose clock is within mrtr.ReplicaSkew still takes the call's state for valid. Replica A's
// clock runs 2 seconds ahead of B's; the call's state expires 4 seconds from now by B's clock
// (B asked, and sealed it). A records the user's Deny for one call and finishes another (its
// retry was used); B is then asked, until by its own clock the state has expired, for their
// verdicts, and its page tries to decide the first call again. The records used to live until
// the state's expiry by A's clock, 2 seconds: B then found the first call undecided, and its
// page recorded an approval over the user's Deny, and took the finished call for one the store
// forgot.
func TestDecisionsOutliveTheirStateOnSkewedReplicas(t *testing.T) {
	srv := testredis.Start(t)
	_, ring := storeAndKeys(t, time.Now)
	cfg := Config{BaseURL: "https://gw.example", Issuer: "https://issuer.example", ClientID: testClientID}.WithDefaults()
	replica := func(now func() time.Time) *Service {
		r, err := store.NewRedis(store.RedisConfig{URL: srv.URL()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = r.Close() })
		s, err := New(cfg, Deps{Store: r, Keys: ring, Logger: slog.New(slog.DiscardHandler), Clock: now})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a, b := replica(func() time.Time { return time.Now().Add(2 * time.Second) }), replica(time.Now)
	ctx := context.Background()
	digest := []byte("digest-of-the-arguments-32-bytes")
	expiry := time.Now().Add(4 * time.Second) // A has 2 seconds to decide, on a busy machine too
	denied, finished := fmt.Sprintf("%032x", 1), fmt.Sprintf("%032x", 2)
	for _, id := range []string{denied, finished} {
		if _, err := b.Ask(ctx, Call{ID: id, Issuer: cfg.Issuer, Subject: "alice", Upstream: "files", Tool: "files__delete",
			UpstreamTool: "delete", Arguments: json.RawMessage(`{"path":"/x"}`), Digest: digest, Expiry: expiry}); err != nil {
			t.Fatal(err)
		}
	}
	c, err := a.ledger.load(ctx, denied)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.ledger.decide(ctx, c, Denied, "alice"); err != nil {
		t.Fatalf("A records the Deny: %v", err)
	}
	if err := a.Finish(ctx, finished, cfg.Issuer, "alice", expiry); err != nil {
		t.Fatalf("A finishes the other call: %v", err)
	}
	checks := 0
	for time.Now().Before(expiry) {
		if v, err := b.Verdict(ctx, denied, digest); err != nil || v != Denied {
			t.Fatalf("B's verdict on the denied call after %d checks: %q, %v; want %q", checks, v, err, Denied)
		}
		if v, err := b.Verdict(ctx, finished, digest); err != nil || v != Finished {
			t.Fatalf("B's verdict on the finished call after %d checks: %q, %v; want %q", checks, v, err, Finished)
		}
		if err := b.ledger.decide(ctx, c, Approved, "alice"); !errors.Is(err, ErrDecided) && !(errors.Is(err, ErrUnknown) && !time.Now().Before(expiry)) {
			t.Fatalf("B's page decides the denied call again after %d checks: %v, want ErrDecided", checks, err)
		}
		checks++
		time.Sleep(50 * time.Millisecond) // paces the checks; the loop ends on the state's expiry
	}
	if checks == 0 {
		t.Fatal("the state expired on B before any check")
	}
}
