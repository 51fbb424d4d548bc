package approval

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/store"
)

// failDecisions is the page's store with its decision writes failing while fail is set, as a
// Redis that fails between the two writes of a decision does.
type failDecisions struct {
	Store
	fail atomic.Bool
}

func (s *failDecisions) Set(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	if s.fail.Load() && strings.HasPrefix(key, keyDecision) {
		return fmt.Errorf("%w: injected", store.ErrUnavailable)
	}
	return s.Store.Set(ctx, key, value, ttl)
}

func (s *failDecisions) SetNX(ctx context.Context, key string, value []byte, ttl time.Duration) (bool, []byte, error) {
	if s.fail.Load() && strings.HasPrefix(key, keyDecision) {
		return false, nil, fmt.Errorf("%w: injected", store.ErrUnavailable)
	}
	return s.Store.SetNX(ctx, key, value, ttl)
}

// TestDecisionLostToTheStoreCanBeMadeAgain: the store failing after the decision was claimed
// but before it was recorded leaves nothing recorded, as the 503 page says, and the user's
// next try records the decision. Before, the claim stood: the next try was refused as
// "already decided" with no decision anywhere, and the waiting call could only expire.
func TestDecisionLostToTheStoreCanBeMadeAgain(t *testing.T) {
	f := newPageFixture(t)
	id, page, c, body := f.signedIn(t)
	fs := &failDecisions{Store: f.svc.ledger.store}
	f.svc.ledger.store = fs
	fs.fail.Store(true)
	status, confirm := f.postDecision(t, c, page, url.Values{"decision": {"approve"}, "csrf": {csrfOf(t, body)}})
	if status == http.StatusOK && strings.Contains(confirm, `value="confirm"`) {
		f.clock.advance(MinDwell)
		status, confirm = f.postDecision(t, c, page, url.Values{"decision": {"confirm"}, "csrf": {csrfOf(t, confirm)}})
	}
	if status != http.StatusServiceUnavailable || !strings.Contains(confirm, "nothing was recorded") {
		t.Fatalf("decision with its write failing: status %d: %.300s", status, confirm)
	}
	fs.fail.Store(false)
	if got := f.approve(t, c, page, body); got != http.StatusOK {
		t.Fatalf("the decision made again once the store answers: status %d, want 200", got)
	}
	if v, err := f.svc.Verdict(context.Background(), id, []byte("digest-of-the-arguments-32-bytes")); err != nil || v != Approved {
		t.Fatalf("verdict %q %v, want approved", v, err)
	}
	if got, _ := f.postDecision(t, c, page, url.Values{"decision": {"deny"}, "csrf": {csrfOf(t, body)}}); got != http.StatusConflict {
		t.Errorf("a second decision: status %d, want 409 (the first stands)", got)
	}
}
