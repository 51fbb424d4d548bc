package useroauth

import (
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/vault"
)

// TestRecordsExpire: a caller's tokens for a backend are kept while used (a call with them or
// their refresh) and at most recordMaxAge after the consent; unused for recordIdle (a user
// deleted at the identity provider, who can no longer call) they are removed and the next call
// asks for consent again; the vault's size counts them no more. Memory and Redis alike.
func TestRecordsExpire(t *testing.T) {
	t.Parallel()
	for _, redis := range []bool{false, true} {
		name := map[bool]string{false: "memory", true: "redis"}[redis]
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, fixtureOptions{redis: redis})
			alice, _ := connected(t, f)
			count := func() int64 {
				n, err := f.svc.Vault().Count(t.Context(), backendName)
				if err != nil {
					t.Fatal(err)
				}
				return n
			}
			// Used every 20 days (each call refreshes the long-expired access token): kept
			// until the consent is recordMaxAge old.
			step := 20 * 24 * time.Hour
			for used := step; used < vault.DefaultRecordMaxAge; used += step {
				f.clock.Advance(step)
				if _, ok, err := f.svc.Token(t.Context(), backendName, alice); err != nil || !ok {
					t.Fatalf("a record used every 20 days, %s after its consent: ok %v, %v", used, ok, err)
				}
			}
			f.clock.Advance(step) // past recordMaxAge, though used 20 days ago
			if _, ok, err := f.svc.Token(t.Context(), backendName, alice); err != nil || ok {
				t.Fatalf("a record past recordMaxAge: ok %v, %v; want consent asked", ok, err)
			}
			if n := count(); n != 0 {
				t.Errorf("vault size %d after the record's max age", n)
			}

			// Another user connects, then never calls: gone after recordIdle, without any
			// read (a fresh fixture: the identity providers' sign-ins are on real time).
			f = newFixture(t, fixtureOptions{redis: redis})
			alice, _ = connected(t, f)
			if n := count(); n != 1 {
				t.Fatalf("vault size %d after a connect", n)
			}
			f.clock.Advance(vault.DefaultRecordIdle + time.Minute)
			if n := count(); n != 0 {
				t.Errorf("vault size %d after recordIdle unused", n)
			}
			if _, ok, err := f.svc.Token(t.Context(), backendName, alice); err != nil || ok {
				t.Fatalf("a record unused for recordIdle: ok %v, %v; want consent asked", ok, err)
			}
		})
	}
}
