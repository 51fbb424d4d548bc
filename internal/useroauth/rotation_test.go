package useroauth

import (
	"errors"
	"testing"

	"github.com/mcp-gateway/gateway/internal/seal"
	"github.com/mcp-gateway/gateway/internal/vault"
)

// TestRecordUnderAKeyNotHeldStays: during a rollout that adds a vault key, a replica already
// updated seals with the new key while one not yet updated does not hold it (the key was
// appended in one step, or the replica runs the configuration before). The replica that cannot
// open such a record does not remove it, which would end the caller's connection on every
// replica, those that hold the key included, and leave its tokens valid at the server with
// nobody holding them: to that replica the caller is not connected (asked to connect), and
// every replica holding the key goes on using the record. A record under a key nobody holds
// any more is left to its expiry or to the caller's next connect, which replaces it.
func TestRecordUnderAKeyNotHeldStays(t *testing.T) {
	t.Parallel()
	older := newFixture(t, fixtureOptions{redis: true})
	newKey := seal.Key{ID: "k2", Secret: []byte("another-test-only-secret-of-32-bytes-or-more")}
	updated := newFixture(t, fixtureOptions{replicaOf: older, vaultKeys: append(append([]seal.Key{}, testKeys...), newKey)})
	alice, tok := connected(t, updated)

	if got, ok, err := older.svc.Token(t.Context(), backendName, alice); ok || err != nil {
		t.Fatalf("a replica without the record's key: %q, %v, %v; want not connected there", got, ok, err)
	}
	if _, err := older.svc.Vault().Get(t.Context(), alice, backendName); !errors.Is(err, vault.ErrUnreadable) {
		t.Fatalf("the record, read by the replica without its key: %v, want there and unreadable", err)
	}
	if got := updated.mustToken(t, alice); got != tok {
		t.Error("the replica holding the key got another token than the one it stored")
	}
	if who, err := updated.whoami(t, tok); err != nil || who == "" {
		t.Errorf("the backend with the token: %q, %v", who, err)
	}
	expectContains(t, "the log", older.log.String(), "useroauth: a token record is sealed under a key this replica does not hold")
}
