package mrtr

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/seal"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// memReplays is a minimal in-memory Replays with expiry on the test clock.
type memReplays struct {
	mu    sync.Mutex
	clock *mcptest.Clock
	seen  map[string]time.Time
	err   error // returned by UseOnce when set
	keys  []string
	ttls  []time.Duration
}

func (m *memReplays) UseOnce(_ context.Context, key string, ttl time.Duration) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return false, m.err
	}
	m.keys, m.ttls = append(m.keys, key), append(m.ttls, ttl)
	if exp, ok := m.seen[key]; ok && m.clock.Now().Before(exp) {
		return false, nil
	}
	m.seen[key] = m.clock.Now().Add(ttl)
	return true, nil
}

func testSealer(t testing.TB, ids ...string) *seal.Sealer {
	t.Helper()
	var keys []seal.Key
	for i, id := range ids {
		keys = append(keys, seal.Key{ID: id, Secret: bytes.Repeat([]byte{byte(i + 1)}, seal.MinSecretBytes)})
	}
	r, err := seal.New(seal.Config{Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	return r.Sealer(seal.PurposeRequestState)
}

type fixture struct {
	clock   *mcptest.Clock
	replays *memReplays
	codec   *Codec
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	clock := mcptest.NewClock(time.Date(2026, 11, 3, 12, 0, 0, 0, time.UTC))
	replays := &memReplays{clock: clock, seen: map[string]time.Time{}}
	codec, err := New(testSealer(t, "k1"), Config{}, replays, clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{clock: clock, replays: replays, codec: codec}
}

func testDigest(t testing.TB, args string) [32]byte {
	t.Helper()
	d, err := Digest([]byte(args))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func testBinding(t testing.TB) Binding {
	return Binding{
		Issuer: "https://idp.example/", Subject: "alice", Upstream: "github",
		Method: MethodToolsCall, Name: "github__create_issue",
		ArgsDigest: testDigest(t, `{"title":"bug","labels":["p1"]}`),
	}
}

func stateFor(b Binding, kind Kind) State {
	return State{
		Kind: kind, Issuer: b.Issuer, Subject: b.Subject, Upstream: b.Upstream,
		Method: b.Method, Name: b.Name, ArgsDigest: b.ArgsDigest,
	}
}

func TestSealOpenRoundTrip(t *testing.T) {
	for _, onPage := range []bool{false, true} {
		testSealOpenRoundTrip(t, onPage)
	}
}

func testSealOpenRoundTrip(t *testing.T, onPage bool) {
	f := newFixture(t)
	b := testBinding(t)
	in := stateFor(b, KindUpstream)
	in.UpstreamState, in.HasUpstreamState, in.Confirmed, in.ApprovedOnPage = "backend-state", true, true, onPage
	tok, err := f.codec.Seal(in)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(tok, "backend-state") || strings.Contains(tok, "alice") {
		t.Fatal("token reveals its payload")
	}
	got, err := f.codec.Open(tok, b)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if !got.Expiry.Equal(f.clock.Now().Add(DefaultTTL)) {
		t.Fatalf("expiry %v, want now+TTL", got.Expiry)
	}
	in.Expiry, in.Issued = got.Expiry, got.Issued
	in.Nonce = got.Nonce
	if *got != in {
		t.Fatalf("round trip:\n got %+v\nwant %+v", *got, in)
	}
	if got.Nonce == ([16]byte{}) {
		t.Fatal("nonce not set")
	}
}

func TestOpenExpiry(t *testing.T) {
	f := newFixture(t)
	b := testBinding(t)
	tok, _ := f.codec.Seal(stateFor(b, KindConfirm))
	f.clock.Advance(DefaultTTL - time.Millisecond)
	if _, err := f.codec.Open(tok, b); err != nil {
		t.Fatalf("just before expiry: %v", err)
	}
	f.clock.Advance(time.Millisecond)
	_, err := f.codec.Open(tok, b)
	if !errors.Is(err, ErrInvalidState) || Reason(err) != ReasonExpired {
		t.Fatalf("at expiry: got %v (reason %q), want expired", err, Reason(err))
	}
}

func TestOpenBinding(t *testing.T) {
	f := newFixture(t)
	b := testBinding(t)
	tok, _ := f.codec.Seal(stateFor(b, KindConfirm))
	tests := []struct {
		name   string
		change func(*Binding)
		reason string
	}{
		{"issuer", func(b *Binding) { b.Issuer = "https://evil.example/" }, ReasonPrincipal},
		{"subject", func(b *Binding) { b.Subject = "mallory" }, ReasonPrincipal},
		{"upstream", func(b *Binding) { b.Upstream = "gitlab" }, ReasonTarget},
		{"method", func(b *Binding) { b.Method = MethodPromptsGet }, ReasonTarget},
		{"name", func(b *Binding) { b.Name = "github__delete_repo" }, ReasonTarget},
		{"arguments", func(b *Binding) { b.ArgsDigest = testDigest(t, `{"title":"bug","labels":["p2"]}`) }, ReasonArguments},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			other := b
			tc.change(&other)
			_, err := f.codec.Open(tok, other)
			if !errors.Is(err, ErrInvalidState) || Reason(err) != tc.reason {
				t.Fatalf("got %v (reason %q), want reason %q", err, Reason(err), tc.reason)
			}
		})
	}
	if _, err := f.codec.Open(tok, b); err != nil {
		t.Fatalf("unchanged binding: %v", err)
	}
}

func TestOpenSealFailures(t *testing.T) {
	f := newFixture(t)
	b := testBinding(t)
	tok, _ := f.codec.Seal(stateFor(b, KindConfirm))
	otherKey, _ := New(testSealer(t, "k9"), Config{}, f.replays, f.clock.Now)
	foreign, _ := otherKey.Seal(stateFor(b, KindConfirm))
	// A payload sealed with the right key but not a State.
	garbage, _ := testSealer(t, "k1").Seal([]byte("not a state"))
	flipped := []byte(tok)
	// Another alphabet character, so the token stays well-formed.
	if flipped[len(flipped)-3] == 'A' {
		flipped[len(flipped)-3] = 'B'
	} else {
		flipped[len(flipped)-3] = 'A'
	}
	tests := []struct {
		name, token, reason string
	}{
		{"empty", "", ReasonMalformed},
		// Three bytes fewer, the last characters kept so that it still decodes whatever the
		// token's length.
		{"truncated", tok[:len(tok)-8] + tok[len(tok)-4:], ReasonTampered},
		{"flipped", string(flipped), ReasonTampered},
		{"unknown key", foreign, ReasonUnknownKey},
		{"oversized", tok + strings.Repeat("A", seal.DefaultMaxTokenBytes), ReasonOversized},
		{"undecodable payload", garbage, ReasonMalformed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, err := f.codec.Open(tc.token, b)
			if st != nil || !errors.Is(err, ErrInvalidState) || Reason(err) != tc.reason {
				t.Fatalf("got %v, %v (reason %q), want reason %q", st, err, Reason(err), tc.reason)
			}
		})
	}
}

func TestConsume(t *testing.T) {
	f := newFixture(t)
	b := testBinding(t)
	tok, _ := f.codec.Seal(stateFor(b, KindConfirm))
	st, err := f.codec.Open(tok, b)
	if err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(time.Minute)
	if err := f.codec.Consume(context.Background(), st); err != nil {
		t.Fatalf("first use: %v", err)
	}
	if !strings.HasPrefix(f.replays.keys[0], ReplayKeyPrefix) || f.replays.ttls[0] != DefaultTTL-time.Minute+ReplicaSkew {
		t.Fatalf("store got key %q ttl %v; want prefix %q and the remaining lifetime and ReplicaSkew",
			f.replays.keys[0], f.replays.ttls[0], ReplayKeyPrefix)
	}
	again, _ := f.codec.Open(tok, b)
	err = f.codec.Consume(context.Background(), again)
	if !errors.Is(err, ErrInvalidState) || Reason(err) != ReasonReplayed {
		t.Fatalf("second use: got %v (reason %q), want replayed", err, Reason(err))
	}
	// A fresh state for the same call has its own nonce.
	tok2, _ := f.codec.Seal(stateFor(b, KindConfirm))
	st2, _ := f.codec.Open(tok2, b)
	if err := f.codec.Consume(context.Background(), st2); err != nil {
		t.Fatalf("fresh state: %v", err)
	}
}

func TestConsumeStoreDown(t *testing.T) {
	f := newFixture(t)
	f.replays.err = errors.New("connection refused")
	tok, _ := f.codec.Seal(stateFor(testBinding(t), KindConfirm))
	st, _ := f.codec.Open(tok, testBinding(t))
	err := f.codec.Consume(context.Background(), st)
	if !errors.Is(err, ErrStoreUnavailable) || errors.Is(err, ErrInvalidState) {
		t.Fatalf("got %v, want ErrStoreUnavailable and not ErrInvalidState", err)
	}
}

func TestConsumeExpired(t *testing.T) {
	f := newFixture(t)
	tok, _ := f.codec.Seal(stateFor(testBinding(t), KindConfirm))
	st, _ := f.codec.Open(tok, testBinding(t))
	f.clock.Advance(DefaultTTL)
	if err := f.codec.Consume(context.Background(), st); Reason(err) != ReasonExpired {
		t.Fatalf("got %v, want expired", err)
	}
	if len(f.replays.keys) != 0 {
		t.Fatal("an expired state reached the store")
	}
}

func TestSingleUse(t *testing.T) {
	tests := []struct {
		st   State
		want bool
	}{
		{State{Kind: KindConfirm}, true},
		{State{Kind: KindUpstream, Confirmed: true}, true},
		{State{Kind: KindUpstream}, false},
	}
	for _, tc := range tests {
		if got := tc.st.SingleUse(); got != tc.want {
			t.Errorf("%v confirmed=%v: SingleUse=%v want %v", tc.st.Kind, tc.st.Confirmed, got, tc.want)
		}
	}
}

func TestSealRejects(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		name string
		st   State
	}{
		{"no kind", State{Method: MethodToolsCall}},
		{"bad method", State{Kind: KindConfirm, Method: "tools/list"}},
		{"too large", State{Kind: KindUpstream, Method: MethodToolsCall, UpstreamState: strings.Repeat("x", 9000)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := f.codec.Seal(tc.st); !errors.Is(err, ErrUnsealable) {
				t.Fatalf("got %v, want ErrUnsealable", err)
			}
		})
	}
}

// TestSealTooLargeSaysWhose: a state too large to seal says whether its binding alone (a name,
// as a long resource URI is) is too large, ErrBindingTooLarge, which is the client's, or only
// with a backend's state, which is the backend's; both stay ErrUnsealable.
func TestSealTooLargeSaysWhose(t *testing.T) {
	f := newFixture(t)
	long := State{Kind: KindConfirm, Method: MethodResourcesRead, Name: "mem://items/" + strings.Repeat("x", 7000)}
	if _, _, err := f.codec.SealState(long); !errors.Is(err, ErrUnsealable) || !errors.Is(err, ErrBindingTooLarge) {
		t.Errorf("a name too long for any state: %v, want ErrUnsealable and ErrBindingTooLarge", err)
	}
	round := State{Method: MethodResourcesRead, Name: long.Name}
	if _, err := f.codec.WrapUpstream([]byte(`{"resultType":"input_required","requestState":"s"}`), round); !errors.Is(err, ErrBindingTooLarge) {
		t.Errorf("a backend's round of a name too long for any state: %v, want ErrBindingTooLarge", err)
	}
	backends := State{Kind: KindUpstream, Method: MethodResourcesRead, Name: "mem://items/1",
		UpstreamState: `"` + strings.Repeat("x", 9000) + `"`, HasUpstreamState: true}
	if _, err := f.codec.Seal(backends); !errors.Is(err, ErrUnsealable) || errors.Is(err, ErrBindingTooLarge) {
		t.Errorf("a backend's state too large: %v, want ErrUnsealable only", err)
	}
}

func TestNewValidates(t *testing.T) {
	s := testSealer(t, "k1")
	r := &memReplays{}
	tests := []struct {
		name    string
		sealer  *seal.Sealer
		cfg     Config
		replays Replays
		ok      bool
	}{
		{"defaults", s, Config{}, r, true},
		{"ttl", s, Config{TTL: 5 * time.Minute}, r, true},
		{"ttl too short", s, Config{TTL: time.Millisecond}, r, false},
		{"ttl too long", s, Config{TTL: 48 * time.Hour}, r, false},
		{"negative ttl", s, Config{TTL: -time.Minute}, r, false},
		{"no sealer", nil, Config{}, r, false},
		{"no store", s, Config{}, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.sealer, tc.cfg, tc.replays, nil)
			if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrInvalidConfig)) {
				t.Fatalf("got %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

func TestReasons(t *testing.T) {
	if got := Reason(errors.New("other")); got != "" {
		t.Fatalf("Reason of a foreign error = %q", got)
	}
	seen := map[string]bool{}
	for _, r := range Reasons() {
		if seen[r] || r == "" {
			t.Fatalf("reason %q duplicated or empty", r)
		}
		seen[r] = true
	}
	if len(seen) != 9 {
		t.Fatalf("got %d reasons, want the 9 of the closed set", len(seen))
	}
}
