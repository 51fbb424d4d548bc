package useroauth

import (
	"testing"
	"time"
)

// TestMetadataKeptAnHour: a backend's discovered metadata is kept an hour per replica
// (docs/user-oauth.md): discoveries within it ask the authorization server nothing more, the
// first after it asks again.
func TestMetadataKeptAnHour(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{})
	disc := f.svc.backends[backendName].disc
	if _, err := disc.get(t.Context()); err != nil {
		t.Fatal(err)
	}
	first := f.metadata.Load()
	if first == 0 {
		t.Fatal("the authorization server's metadata was not asked for")
	}
	f.clock.Advance(time.Hour - time.Second)
	if _, err := disc.get(t.Context()); err != nil || f.metadata.Load() != first {
		t.Fatalf("within the hour: %v, %d metadata requests, want %d", err, f.metadata.Load(), first)
	}
	f.clock.Advance(time.Second)
	if _, err := disc.get(t.Context()); err != nil || f.metadata.Load() <= first {
		t.Fatalf("after the hour: %v, %d metadata requests, want more than %d", err, f.metadata.Load(), first)
	}
}
