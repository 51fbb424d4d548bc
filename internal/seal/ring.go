package seal

import (
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strings"

	"golang.org/x/crypto/chacha20poly1305"
)

const (
	version   = "v1."
	nonceSize = chacha20poly1305.NonceSizeX
	tagSize   = chacha20poly1305.Overhead
	// hkdfSalt domain-separates this project's derivations from any other use
	// of the same secret.
	hkdfSalt = "mcp-gateway/seal/hkdf-salt/v1"
)

// KeyRing holds validated key material. It is immutable and safe for
// concurrent use; build it once at start-up with New.
type KeyRing struct {
	keys []Key
	seal int // the index in keys of the key that seals
	max  int
}

// New validates cfg and returns a key ring holding a private copy of the
// secrets.
func New(cfg Config) (*KeyRing, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	// Probe once so an unusable AEAD (FIPS 140-only mode rejects ChaCha20)
	// fails start-up instead of the first request.
	if _, err := chacha20poly1305.NewX(make([]byte, chacha20poly1305.KeySize)); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	keys := make([]Key, len(cfg.Keys))
	for i, k := range cfg.Keys {
		keys[i] = Key{ID: k.ID, Secret: append([]byte(nil), k.Secret...), OpenOnly: k.OpenOnly}
	}
	return &KeyRing{keys: keys, seal: sealing(keys), max: cfg.maxTokenBytes()}, nil
}

// KeyIDs returns the key ids, oldest first; SealingKeyID's seals.
func (r *KeyRing) KeyIDs() []string {
	ids := make([]string, len(r.keys))
	for i, k := range r.keys {
		ids[i] = k.ID
	}
	return ids
}

// SealingKeyID returns the id of the key that seals: the last one that is not open-only.
func (r *KeyRing) SealingKeyID() string { return r.keys[r.seal].ID }

// Sealer derives the AEAD keys for purpose (HKDF-SHA256, info = purpose) and
// returns a Sealer for it. Derivation happens here, not per message: call it
// once per purpose at start-up and keep the result. Distinct purposes never
// open each other's tokens.
func (r *KeyRing) Sealer(purpose string) *Sealer {
	s := &Sealer{
		keys: make([]sealerKey, len(r.keys)),
		seal: r.seal,
		max:  r.max,
		enc:  base64.RawURLEncoding.Strict(),
	}
	for i, k := range r.keys {
		aeadKey, err := hkdf.Key(sha256.New, k.Secret, []byte(hkdfSalt), purpose, chacha20poly1305.KeySize)
		if err != nil {
			panic("seal: HKDF-SHA256 refused a 32-byte output: " + err.Error())
		}
		aead, err := chacha20poly1305.NewX(aeadKey)
		if err != nil {
			// New probed the same constructor, so this cannot happen.
			panic("seal: XChaCha20-Poly1305 unavailable: " + err.Error())
		}
		prefix := version + k.ID + "."
		s.keys[i] = sealerKey{
			id:     k.ID,
			aead:   aead,
			prefix: prefix,
			// Binding the version, kid and purpose as associated data means a
			// token cannot be relabelled to another key id or purpose even if
			// two derived keys were ever equal.
			ad: []byte(prefix + purpose),
		}
	}
	return s
}

// SealerUpTo is Sealer with its own bound on a token's size instead of the ring's: for values
// the gateway seals for itself alone (a client's answer handed to another replica), which may be
// larger than any token a client presents.
func (r *KeyRing) SealerUpTo(purpose string, maxTokenBytes int) *Sealer {
	s := r.Sealer(purpose)
	s.max = maxTokenBytes
	return s
}

// SealedLen is the length of the token Seal makes of plaintextBytes bytes under a key id of
// MaxKeyIDBytes, the longest: the most room a sealed value of that size takes wherever it is
// kept, for a caller to size a bound on sealed values by the plaintext it allows.
func SealedLen(plaintextBytes int) int {
	return len(version) + MaxKeyIDBytes + len(".") + base64.RawURLEncoding.EncodedLen(nonceSize+plaintextBytes+tagSize)
}

type sealerKey struct {
	id     string
	aead   cipher.AEAD
	prefix string
	ad     []byte
}

// Sealer seals and opens tokens for one purpose. It is immutable and safe for
// concurrent use.
type Sealer struct {
	keys []sealerKey // oldest first
	seal int         // the index in keys of the key that seals
	max  int
	enc  *base64.Encoding
}

// MaxTokenBytes returns the largest token this Sealer produces or accepts.
func (s *Sealer) MaxTokenBytes() int { return s.max }

// Seal encrypts and authenticates plaintext under the sealing key (the newest that is not
// open-only). It returns ErrOversized when the token would exceed the maximum size.
func (s *Sealer) Seal(plaintext []byte) (string, error) {
	k := &s.keys[s.seal]
	rawLen := nonceSize + len(plaintext) + tagSize
	total := len(k.prefix) + s.enc.EncodedLen(rawLen)
	if total > s.max {
		return "", ErrOversized
	}
	// One buffer: the encoded token in front, the raw nonce|ciphertext behind.
	buf := make([]byte, total+rawLen)
	raw := buf[total : total+nonceSize]
	if _, err := rand.Read(raw); err != nil {
		return "", fmt.Errorf("seal: reading random nonce: %w", err)
	}
	raw = k.aead.Seal(raw, raw[:nonceSize], plaintext, k.ad)
	copy(buf, k.prefix)
	s.enc.Encode(buf[len(k.prefix):total], raw)
	return string(buf[:total]), nil
}

// Open authenticates and decrypts token. Errors are ErrOversized (checked
// before anything else), ErrMalformed, ErrUnknownKey or ErrTampered.
func (s *Sealer) Open(token string) ([]byte, error) {
	if len(token) > s.max {
		return nil, ErrOversized
	}
	rest, ok := strings.CutPrefix(token, version)
	if !ok {
		return nil, ErrMalformed
	}
	kid, body, ok := strings.Cut(rest, ".")
	if !ok || !validKeyID(kid) || !validBody(body) {
		return nil, ErrMalformed
	}
	k := s.key(kid)
	if k == nil {
		return nil, ErrUnknownKey
	}
	raw := make([]byte, s.enc.DecodedLen(len(body)))
	n, err := s.enc.Decode(raw, []byte(body))
	if err != nil || n < nonceSize+tagSize {
		return nil, ErrMalformed
	}
	raw = raw[:n]
	ct := raw[nonceSize:]
	pt, err := k.aead.Open(ct[:0], raw[:nonceSize], ct, k.ad)
	if err != nil {
		return nil, ErrTampered
	}
	return pt, nil
}

func (s *Sealer) key(id string) *sealerKey {
	for i := range s.keys {
		if s.keys[i].id == id {
			return &s.keys[i]
		}
	}
	return nil
}

// validBody accepts only the unpadded URL-safe alphabet. The base64 decoder
// silently skips CR and LF, which would let many strings open as one token.
func validBody(b string) bool {
	for i := 0; i < len(b); i++ {
		c := b[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
		if !ok {
			return false
		}
	}
	return true
}
