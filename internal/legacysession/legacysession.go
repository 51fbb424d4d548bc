// Package legacysession mints and opens the Mcp-Session-Id the gateway gives a pre-2026
// (2025-11-25, 2025-06-18, 2025-03-26) client at initialize. The id is the session: a sealed,
// self-describing token that any replica opens with one AEAD operation (about a microsecond,
// no key derivation per call), so no replica keeps session state and no load balancer needs
// affinity.
//
// What is in the id, and only that: the negotiated version; the client capabilities declared
// at initialize, normalised to the 2026-07-28 shape every internal request carries; the
// client's name@version, truncated, for logs only; a binding to the caller; the issue and
// expiry times; a 96-bit random nonce that names the session for routing the client's
// answers and cancellations between replicas; and, for a session without authentication, a
// digest of the client address it was opened from (Home), where its state is kept.
//
// What is not in it, and why:
//   - No backend state (backend session ids, routes): 2026-07-28 backends have none, pre-2026
//     backends use the gateway's own per-replica pools, so the id stays small and constant in
//     the number of backends and never needs re-minting.
//   - No credential: the session never authenticates anything. The caller's token is verified
//     on every request as before, and the id is only accepted for the principal it was minted
//     for.
//   - No hash of the token: the binding is to (issuer, subject) (Bind), because a client that
//     refreshes its token must keep its session; a token binding would end it at every refresh.
//
// An id that does not open (malformed, tampered, sealed under a key no longer in the ring,
// expired, or minted for another principal) is answered by the edge with 404, which tells a
// pre-2026 client to initialize again, as its revision requires; OpenError.Reason says which,
// for a metric label. Beyond expiry there is no revocation.
//
// The id is "s1." followed by a seal token (internal/seal) of the purpose Purpose, so a session
// id never opens as a requestState or a cursor, nor they as it. Rotation is the key ring's:
// old keys open ids until their expiry passes.
package legacysession

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcp-gateway/gateway/internal/era"
	"github.com/mcp-gateway/gateway/internal/seal"
)

const (
	// Purpose is the key ring purpose of session ids.
	Purpose = "mcp-gateway/legacy-session/v1"
	// Anonymous is the Principal when the gateway runs without authentication.
	Anonymous = "anon"
	// Prefix starts every session id; it names this format.
	Prefix = "s1."
	// MaxIDBytes bounds a session id. Ids are far smaller (at most about 250 bytes with the
	// longest key id and client info); anything longer is refused before any decoding.
	MaxIDBytes = 400
	// MaxClientInfoBytes bounds Session.ClientInfo; Mint truncates longer values.
	MaxClientInfoBytes = 64
	// MaxPrincipalBytes bounds Session.Principal; Bind's are 22 bytes.
	MaxPrincipalBytes = 64
	// DefaultTTL is the session lifetime when New is given none.
	DefaultTTL = 24 * time.Hour
	// maxClockSkew is how far in the future an id's issue time may lie: replicas' clocks
	// differ a little, never by more.
	maxClockSkew = time.Minute
)

// The reasons an id does not open (OpenError.Reason): a closed set, used as a metric label.
const (
	ReasonMalformed  = "malformed"
	ReasonTampered   = "tampered"
	ReasonUnknownKey = "unknown_key"
	ReasonExpired    = "expired"
	ReasonPrincipal  = "principal"
	// ReasonVersion is an id that opens but whose negotiated version the edge no longer
	// serves; the codec does not know what is served, so only the edge gives this reason.
	ReasonVersion = "version"
)

// Session is what a sealed session id carries. No backend state.
type Session struct {
	Version    string          // negotiated: "2025-11-25" or "2025-06-18"
	Caps       json.RawMessage // client capabilities normalised to the 2026-07-28 shape (era.NormalizeClientCaps); compact object, `{}` when none
	ClientInfo string          // "name@version", at most 64 bytes, for logs only
	Principal  string          // Bind(issuer, subject), or Anonymous
	IssuedAt   time.Time
	Expires    time.Time
	Nonce      [12]byte // random; zero for a session-less request
	// Home is, for an Anonymous session, HomeOf the client it was opened by (its address
	// group): the record its state is kept in, whichever address its later requests come
	// from. Zero for an authenticated session, whose caller is its home, and for an id minted
	// before the field existed.
	Home [16]byte
	// key is Key, computed once when the session is opened; "" for a Session built otherwise.
	key string
}

// Key is the lowercase hex of Nonce: the routing key for the client's answers and
// cancellations, which may reach any replica.
func (s *Session) Key() string {
	if s.key != "" {
		return s.key
	}
	return hex.EncodeToString(s.Nonce[:])
}

// LogKey is the first 8 hex characters of Key, for the access log: enough to follow one
// session through the logs, too little to name it anywhere else.
func (s *Session) LogKey() string { return s.Key()[:8] }

// Bind returns the principal a session is bound to: base64url (no padding) of the first 16
// bytes of SHA-256(issuer || 0x00 || subject). The separator keeps ("ab","c") and ("a","bc")
// apart, whatever the subject holds (NUL included), because an issuer never holds NUL (authz
// refuses an issuer URL with a control character); issuer and subject are what a token refresh
// keeps. It is not a digest of callerkey.Of: every session id a client holds is bound this way,
// and another spelling would void them all (404, initialize again) at the next rolling update.
func Bind(issuer, subject string) string {
	h := sha256.New()
	h.Write([]byte(issuer))
	h.Write([]byte{0})
	h.Write([]byte(subject))
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:16])
}

// OpenError says why a session id did not open. Reason is one of the Reason* constants.
type OpenError struct{ Reason string }

// Error implements error; it never includes the id.
func (e *OpenError) Error() string { return "legacysession: session id " + e.Reason }

// Codec mints and opens session ids. It is immutable and safe for concurrent use.
type Codec struct {
	sealer *seal.Sealer
	ttl    time.Duration
	now    func() time.Time
}

// New returns a codec sealing with ring.Sealer(Purpose), so a session id never opens as a
// requestState or a cursor, and vice versa. ttl is the session lifetime (DefaultTTL when not
// positive); now is the clock (time.Now when nil).
func New(ring *seal.KeyRing, ttl time.Duration, now func() time.Time) *Codec {
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	if now == nil {
		now = time.Now
	}
	return &Codec{sealer: ring.Sealer(Purpose), ttl: ttl, now: now}
}

// HomeOf is the Home of an Anonymous session opened by the client whose caller key (its address
// group, callerkey.Client) is key: the first 16 bytes of its SHA-256, never zero.
func HomeOf(key string) [16]byte {
	var h [16]byte
	sum := sha256.Sum256([]byte(key))
	copy(h[:], sum[:])
	if h == [16]byte{} {
		h[0] = 1 // zero is "none"; a real digest is never zero anyway
	}
	return h
}

// MintAnonymous is Mint for a client without authentication, whose session keeps home
// (HomeOf its address group at initialize).
func (c *Codec) MintAnonymous(version string, caps json.RawMessage, clientInfo string, home [16]byte) (string, Session, error) {
	return c.mint(version, caps, clientInfo, Anonymous, home)
}

// Mint seals a new session for a client that negotiated version (a pre-2026 one), declared
// caps (normalised again here, so the id carries nothing but the 2026 shape, and without what
// version cannot declare: see era.ClientCaps.ForVersion), and named itself clientInfo
// (truncated to MaxClientInfoBytes of valid UTF-8), for principal (Bind's, or Anonymous). It
// returns the id and the session exactly as Open will return it.
func (c *Codec) Mint(version string, caps json.RawMessage, clientInfo, principal string) (id string, s Session, err error) {
	return c.mint(version, caps, clientInfo, principal, [16]byte{})
}

// mint is Mint with the session's Home.
func (c *Codec) mint(version string, caps json.RawMessage, clientInfo, principal string, home [16]byte) (id string, s Session, err error) {
	pv, ok := versionCode(version)
	if !ok {
		return "", Session{}, fmt.Errorf("legacysession: %q is not a pre-2026 version", version)
	}
	cc, err := era.ParseClientCaps(caps)
	if err != nil {
		return "", Session{}, fmt.Errorf("legacysession: %w", err)
	}
	cc = cc.ForVersion(version)
	if principal == "" || len(principal) > MaxPrincipalBytes {
		return "", Session{}, errors.New("legacysession: the principal must be 1 to 64 bytes")
	}
	s = Session{
		Version:    version,
		Caps:       cc.JSON(),
		ClientInfo: truncate(clientInfo, MaxClientInfoBytes),
		Principal:  principal,
		Home:       home,
	}
	now := c.now().Truncate(time.Second)
	s.IssuedAt, s.Expires = now, now.Add(c.ttl).Truncate(time.Second)
	for s.Nonce == [12]byte{} { // zero names a session-less request
		if _, err := rand.Read(s.Nonce[:]); err != nil {
			return "", Session{}, fmt.Errorf("legacysession: reading a random nonce: %w", err)
		}
	}
	token, err := c.sealer.Seal(encode(&s, pv, capBits(cc)))
	if err != nil {
		return "", Session{}, fmt.Errorf("legacysession: sealing: %w", err)
	}
	id = Prefix + token
	if len(id) > MaxIDBytes {
		return "", Session{}, fmt.Errorf("legacysession: a session id of %d bytes exceeds %d", len(id), MaxIDBytes)
	}
	return id, s, nil
}

// Open returns the session id names, or an *OpenError. principal is Bind() of this request's
// verified caller (or Anonymous); it is compared in constant time. An id is expired when now
// is at or past its expiry or past its issue time plus the codec's current lifetime (so a
// shortened lifetime applies to ids already out), and refused as expired when its issue time
// lies further in the future than clocks drift.
func (c *Codec) Open(id, principal string) (Session, error) {
	if len(id) > MaxIDBytes || !visibleASCII(id) {
		return Session{}, &OpenError{ReasonMalformed}
	}
	token, ok := strings.CutPrefix(id, Prefix)
	if !ok {
		return Session{}, &OpenError{ReasonMalformed}
	}
	pt, err := c.sealer.Open(token)
	switch {
	case err == nil:
	case errors.Is(err, seal.ErrUnknownKey):
		return Session{}, &OpenError{ReasonUnknownKey}
	case errors.Is(err, seal.ErrTampered):
		return Session{}, &OpenError{ReasonTampered}
	default: // ErrMalformed, ErrOversized
		return Session{}, &OpenError{ReasonMalformed}
	}
	s, ok := decode(pt)
	if !ok {
		// Authentic but unreadable: only a key compromise or a bug gets here.
		return Session{}, &OpenError{ReasonTampered}
	}
	now := c.now()
	if !now.Before(s.Expires) || !now.Before(s.IssuedAt.Add(c.ttl)) || s.IssuedAt.After(now.Add(maxClockSkew)) {
		return Session{}, &OpenError{ReasonExpired}
	}
	if subtle.ConstantTimeCompare([]byte(s.Principal), []byte(principal)) != 1 {
		return Session{}, &OpenError{ReasonPrincipal}
	}
	return s, nil
}

// The sealed payload is binary rather than JSON: it is read on every pre-2026 request, and a
// fixed layout decodes in a few nanoseconds with nothing to be lenient about (no member order,
// duplicates or escapes), keeps the id within MaxIDBytes whatever the client declared (the
// capabilities are one byte of flags), and leaves nothing an encoder could add unnoticed.
//
//	0      format (1)
//	1      version code (versionCode)
//	2      capability flags (capBits)
//	3-10   issued at, Unix seconds, big-endian
//	11-18  expires, Unix seconds, big-endian
//	19-30  nonce
//	31     principal length p (1..MaxPrincipalBytes), then p bytes
//	       client info length n (0..MaxClientInfoBytes), then n bytes
//	       format 2 only: Home (16 bytes, not zero)
//
// Format 1 is a session without Home; ids minted before Home existed are format 1 and still
// open.
const (
	payloadFormat     = 1
	payloadFormatHome = 2
	fixedBytes        = 31
	homeBytes         = 16
)

// encode lays s out as the sealed payload.
func encode(s *Session, pv, caps byte) []byte {
	b := make([]byte, fixedBytes, fixedBytes+2+len(s.Principal)+len(s.ClientInfo)+homeBytes)
	b[0], b[1], b[2] = payloadFormat, pv, caps
	if s.Home != [homeBytes]byte{} {
		b[0] = payloadFormatHome
	}
	binary.BigEndian.PutUint64(b[3:], uint64(s.IssuedAt.Unix()))
	binary.BigEndian.PutUint64(b[11:], uint64(s.Expires.Unix()))
	copy(b[19:], s.Nonce[:])
	b = append(b, byte(len(s.Principal)))
	b = append(b, s.Principal...)
	b = append(b, byte(len(s.ClientInfo)))
	b = append(b, s.ClientInfo...)
	if b[0] == payloadFormatHome {
		b = append(b, s.Home[:]...)
	}
	return b
}

// decode reads a sealed payload, strictly: every byte must be accounted for.
func decode(b []byte) (Session, bool) {
	var s Session
	if len(b) < fixedBytes+2 || (b[0] != payloadFormat && b[0] != payloadFormatHome) {
		return s, false
	}
	if b[0] == payloadFormatHome {
		if len(b) < fixedBytes+2+homeBytes {
			return s, false
		}
		copy(s.Home[:], b[len(b)-homeBytes:])
		if s.Home == [homeBytes]byte{} {
			return s, false // encode writes format 2 only with a Home
		}
		b = b[:len(b)-homeBytes]
	}
	var ok bool
	if s.Version, ok = versionOf(b[1]); !ok {
		return s, false
	}
	cc, ok := capsOf(b[2])
	if !ok {
		return s, false
	}
	s.Caps = cc.JSON()
	s.IssuedAt = time.Unix(int64(binary.BigEndian.Uint64(b[3:])), 0)
	s.Expires = time.Unix(int64(binary.BigEndian.Uint64(b[11:])), 0)
	copy(s.Nonce[:], b[19:fixedBytes])
	rest := b[fixedBytes:]
	p := int(rest[0])
	if p == 0 || p > MaxPrincipalBytes || len(rest) < 1+p+1 {
		return s, false
	}
	n := int(rest[1+p])
	if n > MaxClientInfoBytes || len(rest) != 1+p+1+n {
		return s, false
	}
	// One allocation for the principal, the client and the key, which every request reads.
	var sb strings.Builder
	sb.Grow(len(rest) + hex.EncodedLen(len(s.Nonce)))
	sb.Write(rest)
	var key [2 * len(s.Nonce)]byte
	hex.Encode(key[:], s.Nonce[:])
	sb.Write(key[:])
	strs := sb.String()
	s.Principal, s.ClientInfo, s.key = strs[1:1+p], strs[1+p+1:len(rest)], strs[len(rest):]
	return s, true
}

// versionCode and versionOf map the pre-2026 versions to one byte.
func versionCode(v string) (byte, bool) {
	switch v {
	case era.V20251125:
		return 1, true
	case era.V20250618:
		return 2, true
	case era.V20250326:
		return 3, true
	}
	return 0, false
}

func versionOf(b byte) (string, bool) {
	switch b {
	case 1:
		return era.V20251125, true
	case 2:
		return era.V20250618, true
	case 3:
		return era.V20250326, true
	}
	return "", false
}

// Capability flags.
const (
	capElicitationForm byte = 1 << iota
	capElicitationURL
	capRoots
	capSampling
	capSamplingContext
	capSamplingTools
	capAll = 1<<iota - 1
)

// capBits and capsOf map client capabilities to one byte of flags and back.
func capBits(c era.ClientCaps) byte {
	var b byte
	for _, f := range []struct {
		on  bool
		bit byte
	}{
		{c.ElicitationForm, capElicitationForm}, {c.ElicitationURL, capElicitationURL}, {c.Roots, capRoots},
		{c.Sampling, capSampling}, {c.SamplingContext, capSamplingContext}, {c.SamplingTools, capSamplingTools},
	} {
		if f.on {
			b |= f.bit
		}
	}
	return b
}

func capsOf(b byte) (era.ClientCaps, bool) {
	c := era.ClientCaps{
		ElicitationForm: b&capElicitationForm != 0,
		ElicitationURL:  b&capElicitationURL != 0,
		Roots:           b&capRoots != 0,
		Sampling:        b&capSampling != 0,
		SamplingContext: b&capSamplingContext != 0,
		SamplingTools:   b&capSamplingTools != 0,
	}
	// Unknown flags, or sampling details without sampling, are not what Mint writes.
	ok := b&^capAll == 0 && (c.Sampling || !(c.SamplingContext || c.SamplingTools))
	return c, ok
}

// truncate cuts s to at most max bytes of valid UTF-8, never inside a character.
func truncate(s string, max int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= max {
		return s
	}
	s = s[:max]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}

// visibleASCII reports whether id is made of visible ASCII (0x21-0x7E) only, as the 2025-11-25
// transport requires of session ids.
func visibleASCII(id string) bool {
	for i := 0; i < len(id); i++ {
		if id[i] < 0x21 || id[i] > 0x7e {
			return false
		}
	}
	return true
}
