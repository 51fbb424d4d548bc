package useroauth

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/internal/testsupport/realop"
)

// barrierRecords holds the first two record writes that store a new record (the two racing
// connects' writes, on whichever replica) until both have arrived, then lets them go together:
// both have read "no record" before either writes.
type barrierRecords struct {
	store.Records
	armed   atomic.Bool
	arrived atomic.Int32
	all     chan struct{}
	// missed is set when a write waited in vain for the other.
	missed atomic.Bool
}

func newBarrierRecords() *barrierRecords { return &barrierRecords{all: make(chan struct{})} }

func (b *barrierRecords) wait() {
	if !b.armed.Load() {
		return
	}
	switch b.arrived.Add(1) {
	case 1:
		select {
		case <-b.all:
		case <-time.After(30 * time.Second): // a bound on the wait, not a timing asserted
			b.missed.Store(true)
		}
	case 2:
		close(b.all)
	}
}

func (b *barrierRecords) PutRecord(ctx context.Context, owner, name string, value []byte, bu store.Budget, life store.RecordLife) (bool, error) {
	b.wait()
	return b.Records.PutRecord(ctx, owner, name, value, bu, life)
}

func (b *barrierRecords) AddRecord(ctx context.Context, owner, name string, value []byte, bu store.Budget, life store.RecordLife) (bool, error) {
	b.wait()
	return b.Records.AddRecord(ctx, owner, name, value, bu, life)
}

// TestFirstConnectsRace: two first connects of the same user and backend complete together, one
// callback on each of two replicas sharing Redis, both held at a barrier after each found no
// record and before either stored: one grant is kept, and the other's tokens (refresh and
// access) are revoked at the authorization server, not left valid with nobody holding them.
func TestFirstConnectsRace(t *testing.T) {
	t.Parallel()
	barrier := newBarrierRecords()
	wrap := func(r store.Records) store.Records { barrier.Records = r; return barrier }
	f := newFixture(t, fixtureOptions{redis: true, records: wrap})
	other := newFixture(t, fixtureOptions{replicaOf: f, sharedURL: true, records: func(r store.Records) store.Records { return barrier }})
	alice := f.caller(realop.UserID)
	// Two browsers, each held before its callback; the second's callback goes to the other
	// replica (the browsers' cookies are the host's, whatever the port).
	b1, b2 := f.browser(t), f.browser(t)
	u1 := held(t, f, b1, f.idp.Username(), f.as.Username(), f.link(t, alice))
	u2 := held(t, f, b2, f.idp.Username(), f.as.Username(), f.link(t, alice))
	o, err := url.Parse(other.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	u2.Host = o.Host
	revokedBefore := f.asLink.revokeSent.Load()
	barrier.armed.Store(true)
	var wg sync.WaitGroup
	for _, c := range []struct {
		b *browser
		u string
	}{{b1, u1.String()}, {b2, u2.String()}} {
		wg.Go(func() {
			if status, _, body := c.b.get(c.u); status != http.StatusOK {
				t.Errorf("callback: %d\n%s", status, body)
			}
		})
	}
	wg.Wait()
	barrier.armed.Store(false)
	if barrier.missed.Load() || barrier.arrived.Load() < 2 {
		t.Fatalf("the two connects did not meet at the barrier (%d arrived)", barrier.arrived.Load())
	}
	kept, err := f.svc.Vault().Get(t.Context(), alice, backendName)
	if err != nil {
		t.Fatal(err)
	}
	f.asLink.revokedMu.Lock()
	revoked := slices.Clone(f.asLink.revokedTokens)
	f.asLink.revokedMu.Unlock()
	if n := f.asLink.revokeSent.Load() - revokedBefore; n != 2 {
		t.Errorf("%d revocation requests, want 2 (the losing grant's refresh and access tokens)", n)
	}
	f.asLink.issuedMu.Lock()
	issued := slices.Clone(f.asLink.issued)
	f.asLink.issuedMu.Unlock()
	for _, tok := range revoked {
		if tok == kept.AccessToken || tok == kept.RefreshToken {
			t.Error("the kept grant's tokens were revoked")
		}
		if !slices.Contains(issued, tok) {
			t.Error("a token revoked that the server never issued")
		}
	}
	if kept.RefreshToken == "" || slices.Contains(revoked, kept.RefreshToken) {
		t.Error("the kept record has no refresh token, or it was revoked")
	}
	if who, err := f.whoami(t, kept.AccessToken); err != nil || who != "sub="+realop.UserID {
		t.Errorf("the kept token at the backend: %q, %v", who, err)
	}
}
