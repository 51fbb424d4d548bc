package approval

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/realop"
)

// askAs stores a call of subject with args, as the gateway does, and returns its id and error.
func (f *pageFixture) askAs(subject, args string) (string, error) {
	var nonce [16]byte
	_, _ = rand.Read(nonce[:])
	id := hex.EncodeToString(nonce[:])
	_, err := f.svc.Ask(context.Background(), Call{ID: id, Issuer: f.op.Issuer(), Subject: subject,
		Upstream: "files", Tool: "files__delete", UpstreamTool: "delete", Arguments: json.RawMessage(args),
		Digest: []byte("digest-of-the-arguments-32-bytes"), Expiry: f.clock.now().Add(5 * time.Minute)})
	return id, err
}

// TestPendingApprovalsBounded: a caller keeps at most MaxPendingPerCaller calls, of at most
// MaxPendingBytesPerCaller sealed bytes together, waiting for the page; more are refused
// before anything is stored, other callers are not affected, and a call that is finished
// (used, denied, declined) or expired gives its share back.
func TestPendingApprovalsBounded(t *testing.T) {
	f := newPageFixture(t, func(c *Config) { c.MaxPendingPerCaller, c.MaxPendingBytesPerCaller = 3, 64<<10 })
	var ids []string
	for i := range 3 {
		id, err := f.askAs(realop.UserID, `{"path":"/tmp/x"}`)
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		ids = append(ids, id)
	}
	before := f.store.Len()
	if _, err := f.askAs(realop.UserID, `{"path":"/tmp/x"}`); !errors.Is(err, ErrTooManyPending) {
		t.Fatalf("a fourth call: %v, want ErrTooManyPending", err)
	}
	if f.store.Len() != before {
		t.Error("a refused call was stored")
	}
	if _, err := f.askAs(realop.OtherUserID, `{"path":"/tmp/x"}`); err != nil {
		t.Fatalf("another caller: %v", err)
	}
	if err := f.svc.Finish(context.Background(), ids[0], f.op.Issuer(), realop.UserID, f.clock.now().Add(5*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := f.store.Get(context.Background(), keyCall+ids[0]); ok {
		t.Error("a finished call is still stored")
	}
	if v, err := f.svc.Verdict(context.Background(), ids[0], []byte("any digest")); err != nil || v != Finished {
		t.Errorf("verdict of a finished call: %q %v", v, err)
	}
	if _, err := f.askAs(realop.UserID, `{"path":"/tmp/x"}`); err != nil {
		t.Fatalf("a call after one was finished: %v", err)
	}
	// Bytes: two calls of 20 KiB (about 28 KB sealed each) fit in 64 KiB; a third does not.
	f.clock.advance(5 * time.Minute)
	big := `{"blob":"` + strings.Repeat("x", 20<<10) + `"}`
	for i := range 2 {
		if _, err := f.askAs(realop.UserID, big); err != nil {
			t.Fatalf("large call %d after the others expired: %v", i, err)
		}
	}
	if _, err := f.askAs(realop.UserID, big); !errors.Is(err, ErrTooManyPending) {
		t.Fatalf("a third large call: %v, want ErrTooManyPending", err)
	}
}
