// Package seal provides authenticated encryption of small opaque tokens
// (MRTR requestState, list cursors) under a rotating key ring.
//
// Tokens look like "v1.<kid>.<base64url(nonce|ciphertext|tag)>". The AEAD is
// XChaCha20-Poly1305: its 24-byte nonces can be drawn at random by every
// replica without coordination and without the 2^32-messages-per-key limit
// that random 12-byte AES-GCM nonces carry, and it is constant-time without
// AES hardware. Each (key, purpose) pair gets its own AEAD key derived once
// with HKDF-SHA256, so a token sealed for one purpose never opens for another.
package seal

import (
	"errors"
	"fmt"
)

// Sentinel errors returned by Sealer.Open. They are distinct so callers can
// count them separately; clients should see one generic message for all.
var (
	// ErrMalformed means the token is not in the v1 token syntax.
	ErrMalformed = errors.New("seal: malformed token")
	// ErrOversized means the token exceeds the configured maximum size; it is
	// returned before any decoding or cryptography.
	ErrOversized = errors.New("seal: token too large")
	// ErrUnknownKey means the token names a key id not in the ring.
	ErrUnknownKey = errors.New("seal: unknown key id")
	// ErrTampered means authentication failed: the token was altered, was
	// sealed for another purpose, or was sealed under another secret.
	ErrTampered = errors.New("seal: authentication failed")
	// ErrInvalidConfig wraps every problem reported by Config.Validate.
	ErrInvalidConfig = errors.New("seal: invalid config")
)

const (
	// MinSecretBytes is the minimum length of a key secret.
	MinSecretBytes = 32
	// MaxKeyIDBytes bounds the length of a key id, which travels in every token.
	MaxKeyIDBytes = 32
	// DefaultMaxTokenBytes is the default for Config.MaxTokenBytes.
	DefaultMaxTokenBytes = 8 << 10
	// PurposeRequestState is the purpose for MRTR requestState tokens.
	PurposeRequestState = "mcp-gateway/requestState/v1"
	// PurposeCursor is the purpose for list pagination cursors.
	PurposeCursor = "mcp-gateway/cursor/v1"
	// PurposeDPoPNonce is the purpose for DPoP server nonces (authz/dpop).
	PurposeDPoPNonce = "mcp-gateway/dpop-nonce/v1"
	// PurposeAuthorizationContext is the purpose for the authorizationContextId of the
	// gateway's authorization denials (SEP-2643).
	PurposeAuthorizationContext = "mcp-gateway/authorization-context/v1"
)

// Key is one secret in the ring.
type Key struct {
	// ID names the key inside tokens: 1 to MaxKeyIDBytes characters from
	// [A-Za-z0-9_-], unique within the ring. It is not secret.
	ID string
	// Secret is the input keying material, at least MinSecretBytes bytes of
	// high-entropy random data. It is never used directly as an AEAD key.
	Secret []byte
	// OpenOnly keys open tokens but never seal: the first step of a rotation,
	// so that every replica can open what the new key will seal before any
	// replica seals with it.
	OpenOnly bool
}

// Config describes a key ring.
type Config struct {
	// Keys lists the secrets, oldest first. The last key that is not
	// OpenOnly seals new tokens; every key opens. Rotate across replicas in
	// three steps: add the new key OpenOnly everywhere, then let it seal,
	// then, after the longest token lifetime, remove the oldest.
	Keys []Key
	// MaxTokenBytes is the largest token Open accepts, in bytes; zero means
	// DefaultMaxTokenBytes. Seal refuses to produce larger tokens.
	MaxTokenBytes int
}

// Validate reports every problem in c without changing it.
func (c Config) Validate() error {
	var errs []error
	if len(c.Keys) == 0 {
		errs = append(errs, fmt.Errorf("%w: at least one key is required", ErrInvalidConfig))
	} else if sealing(c.Keys) < 0 {
		errs = append(errs, fmt.Errorf("%w: every key is open-only: one must seal", ErrInvalidConfig))
	}
	if c.MaxTokenBytes < 0 {
		errs = append(errs, fmt.Errorf("%w: maxTokenBytes must not be negative", ErrInvalidConfig))
	}
	seen := make(map[string]bool, len(c.Keys))
	for i, k := range c.Keys {
		if !validKeyID(k.ID) {
			errs = append(errs, fmt.Errorf("%w: key %d: id must be 1-%d characters of [A-Za-z0-9_-]",
				ErrInvalidConfig, i, MaxKeyIDBytes))
		} else if seen[k.ID] {
			errs = append(errs, fmt.Errorf("%w: key %d: duplicate id %q", ErrInvalidConfig, i, k.ID))
		}
		seen[k.ID] = true
		if len(k.Secret) < MinSecretBytes {
			// The id is safe to print; the secret and its length are not needed.
			errs = append(errs, fmt.Errorf("%w: key %q: secret must be at least %d bytes",
				ErrInvalidConfig, k.ID, MinSecretBytes))
		}
	}
	return errors.Join(errs...)
}

// sealing is the index of the key that seals: the last one not OpenOnly; -1 when there is none.
func sealing(keys []Key) int {
	for i := len(keys) - 1; i >= 0; i-- {
		if !keys[i].OpenOnly {
			return i
		}
	}
	return -1
}

func (c Config) maxTokenBytes() int {
	if c.MaxTokenBytes == 0 {
		return DefaultMaxTokenBytes
	}
	return c.MaxTokenBytes
}

// ValidKeyID reports whether id is a valid key id: 1 to MaxKeyIDBytes characters of
// [A-Za-z0-9_-].
func ValidKeyID(id string) bool { return validKeyID(id) }

func validKeyID(id string) bool {
	if len(id) == 0 || len(id) > MaxKeyIDBytes {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
		if !ok {
			return false
		}
	}
	return true
}
