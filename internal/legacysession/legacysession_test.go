package legacysession

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/era"
	"github.com/mcp-gateway/gateway/internal/seal"
)

// clock is a settable test clock.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func testKey(id string, b byte) seal.Key {
	return seal.Key{ID: id, Secret: bytes.Repeat([]byte{b}, seal.MinSecretBytes)}
}

func ring(t testing.TB, keys ...seal.Key) *seal.KeyRing {
	t.Helper()
	r, err := seal.New(seal.Config{Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

var (
	start = time.Date(2026, 12, 2, 7, 0, 0, 0, time.UTC)
	alice = Bind("https://issuer.example", "alice")
	bob   = Bind("https://issuer.example", "bob")
)

func mint(t testing.TB, c *Codec, principal string) (string, Session) {
	t.Helper()
	id, s, err := c.Mint(era.V20251125, json.RawMessage(`{"elicitation":{},"roots":{"listChanged":true}}`), "inspector@1.0.3", principal)
	if err != nil {
		t.Fatal(err)
	}
	return id, s
}

func TestRoundTrip(t *testing.T) {
	clk := &clock{start.Add(500 * time.Millisecond)}
	c := New(ring(t, testKey("k1", 1)), time.Hour, clk.now)
	id, minted := mint(t, c, alice)
	want := Session{
		Version:    era.V20251125,
		Caps:       json.RawMessage(`{"elicitation":{"form":{}},"roots":{}}`),
		ClientInfo: "inspector@1.0.3",
		Principal:  alice,
		IssuedAt:   start,
		Expires:    start.Add(time.Hour),
		Nonce:      minted.Nonce,
	}
	if !equal(minted, want) {
		t.Fatalf("Mint returned %+v, want %+v", minted, want)
	}
	if minted.Nonce == [12]byte{} {
		t.Fatal("zero nonce")
	}
	clk.t = start.Add(time.Hour - time.Second)
	got, err := c.Open(id, alice)
	if err != nil || !equal(got, minted) {
		t.Fatalf("Open = %+v, %v; want %+v", got, err, minted)
	}
	if len(got.Key()) != 24 || got.Key() != strings.ToLower(got.Key()) || got.LogKey() != got.Key()[:8] {
		t.Fatalf("Key %q LogKey %q", got.Key(), got.LogKey())
	}
	id2, s2 := mint(t, c, alice)
	if id2 == id || s2.Nonce == minted.Nonce {
		t.Fatal("two mints gave the same id or nonce")
	}

	anon := New(ring(t, testKey("k1", 1)), 0, nil)
	id, s, err := anon.Mint(era.V20250618, nil, "", Anonymous)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := anon.Open(id, Anonymous); err != nil || !equal(got, s) || string(got.Caps) != `{}` || got.Version != era.V20250618 {
		t.Fatalf("anonymous session: %+v, %v", got, err)
	}
	if !s.Expires.Equal(s.IssuedAt.Add(DefaultTTL)) {
		t.Fatalf("default lifetime: %v to %v", s.IssuedAt, s.Expires)
	}
}

func equal(a, b Session) bool {
	return a.Version == b.Version && string(a.Caps) == string(b.Caps) && a.ClientInfo == b.ClientInfo &&
		a.Principal == b.Principal && a.IssuedAt.Equal(b.IssuedAt) && a.Expires.Equal(b.Expires) && a.Nonce == b.Nonce
}

func TestOpenReasons(t *testing.T) {
	clk := &clock{start}
	k1 := testKey("k1", 1)
	c := New(ring(t, k1), time.Hour, clk.now)
	id, _ := mint(t, c, alice)
	token := strings.TrimPrefix(id, Prefix)
	body := token[strings.LastIndexByte(token, '.')+1:]
	// The same key id under another secret: authentic nowhere.
	otherSecret, _ := mint(t, New(ring(t, testKey("k1", 9)), time.Hour, clk.now), alice)
	foreignKey, _ := mint(t, New(ring(t, testKey("k9", 1)), time.Hour, clk.now), alice)
	future, _ := mint(t, New(ring(t, k1), time.Hour, func() time.Time { return start.Add(2 * maxClockSkew) }), alice)
	slightlyAhead, _ := mint(t, New(ring(t, k1), time.Hour, func() time.Time { return start.Add(maxClockSkew / 2) }), alice)
	longLived, _ := mint(t, New(ring(t, k1), 48*time.Hour, clk.now), alice)
	// flip changes the highest of the six bits character i encodes, which is always a bit of
	// the data: the lowest bits of a last character may be padding, which a strict decoder
	// refuses as malformed rather than letting authentication tell.
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	flip := func(s string, i int) string {
		b := []byte(s)
		b[i] = alphabet[strings.IndexByte(alphabet, b[i])^32]
		return string(b)
	}

	tests := []struct {
		name      string
		id        string
		principal string
		at        time.Time
		reason    string // "" = opens
	}{
		{"valid", id, alice, start, ""},
		{"empty", "", alice, start, ReasonMalformed},
		{"no prefix", token, alice, start, ReasonMalformed},
		{"other prefix", "s2." + token, alice, start, ReasonMalformed},
		{"prefix only", Prefix, alice, start, ReasonMalformed},
		{"space", id[:20] + " " + id[21:], alice, start, ReasonMalformed},
		{"DEL", id + "\x7f", alice, start, ReasonMalformed},
		{"non-ASCII", id[:20] + "é" + id[22:], alice, start, ReasonMalformed},
		{"newline", id[:20] + "\n" + id[20:], alice, start, ReasonMalformed},
		{"too long", id + strings.Repeat("A", MaxIDBytes), alice, start, ReasonMalformed},
		{"padding", id + "=", alice, start, ReasonMalformed},
		{"bad alphabet", id[:len(id)-1] + "+", alice, start, ReasonMalformed},
		{"truncated to nothing", Prefix + "v1.k1.", alice, start, ReasonMalformed},
		// A base64 text of 4n+1 characters never decodes.
		{"truncated mid-group", id[:len(id)-((len(body)-1)%4+4)], alice, start, ReasonMalformed},
		{"no key id", Prefix + "v1." + strings.Repeat("A", 80), alice, start, ReasonMalformed},
		{"tampered last char", flip(id, len(id)-1), alice, start, ReasonTampered},
		{"tampered middle", flip(id, len(id)/2+10), alice, start, ReasonTampered},
		// Whole groups of four decode: only authentication can tell.
		{"truncated to whole groups", id[:len(id)-(len(body)%4+4)], alice, start, ReasonTampered},
		{"another secret", otherSecret, alice, start, ReasonTampered},
		{"unknown key", foreignKey, alice, start, ReasonUnknownKey},
		{"expired", id, alice, start.Add(time.Hour), ReasonExpired},
		{"long expired", id, alice, start.Add(1000 * time.Hour), ReasonExpired},
		{"a second before expiry", id, alice, start.Add(time.Hour - time.Second), ""},
		{"issued in the future", future, alice, start, ReasonExpired},
		{"issued within the skew", slightlyAhead, alice, start, ""},
		{"lifetime shortened since", longLived, alice, start.Add(time.Hour), ReasonExpired},
		{"another principal", id, bob, start, ReasonPrincipal},
		{"anonymous", id, Anonymous, start, ReasonPrincipal},
		{"empty principal", id, "", start, ReasonPrincipal},
		{"principal prefix", id, alice[:10], start, ReasonPrincipal},
		{"expired beats principal", id, bob, start.Add(2 * time.Hour), ReasonExpired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk.t = tt.at
			s, err := c.Open(tt.id, tt.principal)
			if tt.reason == "" {
				if err != nil {
					t.Fatalf("Open: %v", err)
				}
				return
			}
			var oe *OpenError
			if !errors.As(err, &oe) || oe.Reason != tt.reason {
				t.Fatalf("Open = %+v, %v; want reason %s", s, err, tt.reason)
			}
			if !equal(s, Session{}) {
				t.Fatalf("a failed Open returned %+v", s)
			}
			if strings.Contains(err.Error(), tt.id) && tt.id != "" {
				t.Fatal("the error names the id")
			}
		})
	}
}

// TestOtherPurposes: tokens of the same ring's other purposes never open as a session, even
// when they seal a well-formed session payload, and a session id opens as nothing else.
func TestOtherPurposes(t *testing.T) {
	r := ring(t, testKey("k1", 1))
	c := New(r, time.Hour, (&clock{start}).now)
	id, s := mint(t, c, alice)
	payload := encode(&s, 1, capElicitationForm)
	for _, purpose := range []string{seal.PurposeRequestState, seal.PurposeCursor, "legacy-reply", "legacy-session"} {
		other := r.Sealer(purpose)
		tok, err := other.Seal(payload)
		if err != nil {
			t.Fatal(err)
		}
		var oe *OpenError
		if _, err := c.Open(Prefix+tok, alice); !errors.As(err, &oe) || oe.Reason != ReasonTampered {
			t.Errorf("a %s token opened as a session: %v", purpose, err)
		}
		if _, err := other.Open(strings.TrimPrefix(id, Prefix)); !errors.Is(err, seal.ErrTampered) {
			t.Errorf("a session id opened as a %s token: %v", purpose, err)
		}
	}
	// The right purpose with a payload Mint never writes is refused too.
	own := r.Sealer(Purpose)
	for _, p := range [][]byte{nil, []byte("{}"), payload[:len(payload)-1], append(bytes.Clone(payload), 0)} {
		tok, _ := own.Seal(p)
		var oe *OpenError
		if _, err := c.Open(Prefix+tok, alice); !errors.As(err, &oe) || oe.Reason != ReasonTampered {
			t.Errorf("payload %x: %v", p, err)
		}
	}
}

// TestRotation: appending a key keeps old ids open and seals new ones under it; removing the
// old key ends its ids as unknown_key.
func TestRotation(t *testing.T) {
	clk := &clock{start}
	k1, k2 := testKey("k1", 1), testKey("k2", 2)
	old := New(ring(t, k1), time.Hour, clk.now)
	oldID, _ := mint(t, old, alice)
	rotated := New(ring(t, k1, k2), time.Hour, clk.now)
	if _, err := rotated.Open(oldID, alice); err != nil {
		t.Fatalf("an id of the old key no longer opens after rotation: %v", err)
	}
	newID, _ := mint(t, rotated, alice)
	if !strings.HasPrefix(newID, Prefix+"v1.k2.") {
		t.Fatalf("new id not sealed under the new key: %.12s", newID)
	}
	removed := New(ring(t, k2), time.Hour, clk.now)
	var oe *OpenError
	if _, err := removed.Open(oldID, alice); !errors.As(err, &oe) || oe.Reason != ReasonUnknownKey {
		t.Fatalf("id of a removed key: %v", err)
	}
	if _, err := removed.Open(newID, alice); err != nil {
		t.Fatalf("id of the remaining key: %v", err)
	}
}

// TestIDShape: ids are visible ASCII within MaxIDBytes at their largest: the longest key id,
// every capability and the longest client info.
func TestIDShape(t *testing.T) {
	kid := strings.Repeat("k", seal.MaxKeyIDBytes)
	c := New(ring(t, testKey(kid, 1)), time.Hour, (&clock{start}).now)
	all := json.RawMessage(`{"elicitation":{"form":{},"url":{}},"roots":{},"sampling":{"context":{},"tools":{}},` +
		`"experimental":{"` + strings.Repeat("x", 600) + `":{}}}`)
	info := strings.Repeat("\"é\\", 100)
	id, s, err := c.Mint(era.V20251125, all, info, strings.Repeat("p", MaxPrincipalBytes))
	if err != nil {
		t.Fatal(err)
	}
	if len(id) > MaxIDBytes || !visibleASCII(id) || !strings.HasPrefix(id, Prefix) {
		t.Fatalf("id of %d bytes: %q", len(id), id)
	}
	if len(s.ClientInfo) > MaxClientInfoBytes || !strings.HasPrefix(info, s.ClientInfo) || len(s.Caps) > era.MaxClientCapsBytes {
		t.Fatalf("session %+v", s)
	}
	t.Logf("largest id: %d bytes", len(id))
	small, _ := mint(t, New(ring(t, testKey("k1", 1)), time.Hour, (&clock{start}).now), alice)
	t.Logf("typical id: %d bytes", len(small))
}

func TestMint(t *testing.T) {
	c := New(ring(t, testKey("k1", 1)), time.Hour, (&clock{start}).now)
	// What a 2025-06-18 client cannot declare is not kept; its sampling reads includeContext,
	// which had no flag of its own before 2025-11-25.
	_, s, err := c.Mint(era.V20250618, json.RawMessage(`{"elicitation":{"url":{}},"sampling":{"tools":{}}}`), "c@1", alice)
	if err != nil || string(s.Caps) != `{"sampling":{"context":{}}}` {
		t.Fatalf("2025-06-18 caps %s, %v", s.Caps, err)
	}
	_, s, _ = c.Mint(era.V20251125, json.RawMessage(`{"elicitation":{"url":{}},"tasks":{}}`), "c@1", alice)
	if string(s.Caps) != `{"elicitation":{"url":{}}}` {
		t.Fatalf("2025-11-25 caps %s", s.Caps)
	}
	_, s, _ = c.Mint(era.V20251125, nil, "ab\xffcd", alice)
	if s.ClientInfo != "ab\uFFFDcd" {
		t.Fatalf("client info %q", s.ClientInfo)
	}
	bad := []struct {
		name, version, caps, principal string
	}{
		{"modern version", era.V20260728, `{}`, alice},
		{"no version", "", `{}`, alice},
		{"caps not an object", era.V20251125, `[]`, alice},
		{"caps duplicate keys", era.V20251125, `{"roots":{},"roots":{}}`, alice},
		{"no principal", era.V20251125, `{}`, ""},
		{"principal too long", era.V20251125, `{}`, strings.Repeat("p", MaxPrincipalBytes+1)},
	}
	for _, tt := range bad {
		if id, _, err := c.Mint(tt.version, json.RawMessage(tt.caps), "c", tt.principal); err == nil {
			t.Errorf("%s: minted %q", tt.name, id)
		}
	}
}

func TestBind(t *testing.T) {
	// base64url(SHA-256("https://issuer.example" 0x00 "alice")[:16]), computed independently.
	if alice != "0MHmqqJrEiansKGj5MaADQ" {
		t.Fatalf("Bind = %q", alice)
	}
	if Bind("ab", "c") == Bind("a", "bc") || Bind("i", "s") == Bind("j", "s") || len(Bind("", "")) != 22 {
		t.Fatal("Bind does not separate issuer and subject")
	}
	if first, again := Bind("i", "s"), Bind("i", "s"); first != again {
		t.Fatal("Bind is not deterministic")
	}
}

func TestTruncate(t *testing.T) {
	for _, tt := range []struct {
		in   string
		max  int
		want string
	}{
		{"abc", 5, "abc"}, {"abcdef", 3, "abc"}, {"aé", 2, "a"}, {"aé", 3, "aé"}, {"日本", 4, "日"}, {"", 3, ""},
	} {
		if got := truncate(tt.in, tt.max); got != tt.want {
			t.Errorf("truncate(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
		}
	}
}

func TestCapsFlags(t *testing.T) {
	for b := 0; b < 256; b++ {
		c, ok := capsOf(byte(b))
		if !ok {
			continue
		}
		if capBits(c) != byte(b) {
			t.Fatalf("flags %08b read back as %08b", b, capBits(c))
		}
		again, err := era.NormalizeClientCaps(c.JSON(), era.V20251125)
		if err != nil || string(again) != string(c.JSON()) {
			t.Fatalf("flags %08b: JSON %s is not normalised (%s, %v)", b, c.JSON(), again, err)
		}
	}
	if _, ok := capsOf(capSamplingTools); ok {
		t.Fatal("sampling.tools without sampling accepted")
	}
	if _, ok := capsOf(0x80); ok {
		t.Fatal("an unknown flag accepted")
	}
}

// TestURLElicitationNeverReaches20250618: a 2025-06-18 client that declares URL-mode
// elicitation anyway still gets no URL-mode request: the session drops what the version
// cannot declare, and the entry needs it.
func TestURLElicitationNeverReaches20250618(t *testing.T) {
	c := New(ring(t, testKey("k1", 1)), time.Hour, (&clock{start}).now)
	url := json.RawMessage(`{"k":{"method":"elicitation/create","params":{"mode":"url","message":"m","url":"https://example.com"}}}`)
	for version, want := range map[string]bool{era.V20250618: false, era.V20251125: true} {
		id, _, err := c.Mint(version, json.RawMessage(`{"elicitation":{"form":{},"url":{}}}`), "c@1", alice)
		if err != nil {
			t.Fatal(err)
		}
		s, err := c.Open(id, alice)
		if err != nil {
			t.Fatal(err)
		}
		reqs, err := era.InputRequests(version, url)
		if err != nil || len(reqs) != 1 {
			t.Fatalf("%s: %+v, %v", version, reqs, err)
		}
		if got := era.Declares(s.Caps, reqs[0].Capability); got != want {
			t.Errorf("%s: a URL-mode request declared = %v, want %v (caps %s)", version, got, want, s.Caps)
		}
		if !era.Declares(s.Caps, era.CapElicitationForm) {
			t.Errorf("%s: form mode lost (caps %s)", version, s.Caps)
		}
	}
}

// TestBindFamily: no two callers share a binding, whatever their subjects hold (NUL, "#",
// 0x01, nothing, 8 KiB), one subject at two issuers included, and no caller's binding is the
// unauthenticated one (Anonymous), so a session id opens for the caller it was minted for only.
func TestBindFamily(t *testing.T) {
	long := strings.Repeat("s", 8<<10)
	callers := [][2]string{
		{"https://issuer.example", "alice"},
		{"https://other.example", "alice"},
		{"https://issuer.example", "alice\x00"},
		{"https://issuer.example", "\x00alice"},
		{"https://issuer.example", "alice\x00https://other.example"},
		{"https://issuer.example", "alice#"},
		{"https://issuer.example", "#alice"},
		{"https://issuer.example", "\x01"},
		{"https://issuer.example", ""},
		{"https://issuer.example", long},
		{"https://issuer.example", long + "\x00"},
		{"https://issuer.example/a", "b"},
		{"https://issuer.example", "/a\x00b"},
	}
	seen := map[string][2]string{}
	for _, c := range callers {
		b := Bind(c[0], c[1])
		if other, dup := seen[b]; dup {
			t.Errorf("%q and %q share the binding %q", c, other, b)
		}
		if b == Anonymous || len(b) > MaxPrincipalBytes {
			t.Errorf("Bind(%q) = %q: the anonymous binding, or longer than a session holds", c, b)
		}
		seen[b] = c
	}
}

// TestHome: an anonymous session keeps the Home it was minted with, exactly; a session minted
// without one (every authenticated session, and ids minted before Home existed) opens with
// none; a payload of the Home format whose Home is zero is not what encode writes and does not
// open.
func TestHome(t *testing.T) {
	c := New(ring(t, testKey("k1", 1)), time.Hour, (&clock{start}).now)
	home := HomeOf("client:192.0.2.7/32")
	if home == ([16]byte{}) || home == HomeOf("client:2001:db8::7/128") {
		t.Fatalf("HomeOf gives %x", home)
	}
	id, minted, err := c.MintAnonymous(era.V20251125, json.RawMessage(`{}`), "raw@1", home)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Open(id, Anonymous)
	if err != nil || got.Home != home || minted.Home != home || got.Key() != minted.Key() {
		t.Fatalf("Open = %+v, %v; want Home %x", got, err, home)
	}
	plain, _ := mint(t, c, Anonymous)
	if got, err := c.Open(plain, Anonymous); err != nil || got.Home != ([16]byte{}) {
		t.Fatalf("a session minted without Home: %+v, %v", got, err)
	}
	s := minted
	pt := encode(&s, 1, 0)
	if _, ok := decode(pt); !ok {
		t.Fatal("the Home format does not decode")
	}
	copy(pt[len(pt)-homeBytes:], make([]byte, homeBytes))
	if _, ok := decode(pt); ok {
		t.Error("a Home-format payload with a zero Home decoded")
	}
	if _, ok := decode(pt[:len(pt)-homeBytes]); ok {
		t.Error("a Home-format payload without its Home decoded")
	}
}
