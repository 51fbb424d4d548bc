package approval

import (
	"context"
	"encoding/json"
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
