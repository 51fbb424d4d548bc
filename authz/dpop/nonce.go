package dpop

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/mcp-gateway/gateway/internal/seal"
)

// Nonce lifetimes.
const (
	// DefaultNonceLifetime is how long a server nonce is accepted when none is configured.
	DefaultNonceLifetime = 5 * time.Minute
	// MinNonceLifetime and MaxNonceLifetime bound a configured lifetime: a nonce must outlive a
	// request, and one valid for hours proves little about freshness.
	MinNonceLifetime = 10 * time.Second
	MaxNonceLifetime = time.Hour
	// ReplicaSkew is how far apart the clocks of a gateway's replicas are tolerated: a nonce
	// issued by one that is ahead is not refused by one that is behind, and a proof's jti is
	// remembered for as long as a replica that is behind could still take its iat.
	ReplicaSkew = 30 * time.Second
	// maxNonceBytes bounds a nonce before it is opened.
	maxNonceBytes = 256
	// nonceVersion leads the sealed plaintext, so a later format can be told apart.
	nonceVersion = 1
)

// Nonces issues and checks stateless server nonces (RFC 9449 §8, §9): a nonce is the time it was
// issued, sealed under the gateway's key ring for its own purpose, so every replica holding the
// ring opens every replica's nonce and nothing is stored. A nonce is accepted for its lifetime
// from issue, by any number of proofs: what it proves is that the proof was made after the
// nonce was issued, which bounds how long ago a pre-computed proof can have been made. It is
// safe for concurrent use.
type Nonces struct {
	sealer   *seal.Sealer
	lifetime time.Duration
}

// NewNonces returns Nonces sealed with ring's purpose seal.PurposeDPoPNonce, accepted for
// lifetime (default DefaultNonceLifetime).
func NewNonces(ring *seal.KeyRing, lifetime time.Duration) (*Nonces, error) {
	if ring == nil {
		return nil, errors.New("dpop: nonces need a key ring")
	}
	if lifetime == 0 {
		lifetime = DefaultNonceLifetime
	}
	if lifetime < MinNonceLifetime || lifetime > MaxNonceLifetime {
		return nil, fmt.Errorf("dpop: nonce lifetime %s: want %s to %s", lifetime, MinNonceLifetime, MaxNonceLifetime)
	}
	return &Nonces{sealer: ring.Sealer(seal.PurposeDPoPNonce), lifetime: lifetime}, nil
}

// Lifetime is how long a nonce is accepted after it was issued.
func (n *Nonces) Lifetime() time.Duration { return n.lifetime }

// Issue returns a fresh nonce: 1*NQCHAR, as the DPoP-Nonce header requires.
func (n *Nonces) Issue(now time.Time) (string, error) {
	var pt [9]byte
	pt[0] = nonceVersion
	binary.BigEndian.PutUint64(pt[1:], uint64(now.UnixMilli()))
	return n.sealer.Seal(pt[:])
}

// Check opens nonce and returns when it was issued; false when it is not one of the ring's
// nonces, or is expired or issued in the future.
func (n *Nonces) Check(nonce string, now time.Time) (time.Time, bool) {
	if len(nonce) > maxNonceBytes {
		return time.Time{}, false
	}
	pt, err := n.sealer.Open(nonce)
	if err != nil || len(pt) != 9 || pt[0] != nonceVersion {
		return time.Time{}, false
	}
	issued := time.UnixMilli(int64(binary.BigEndian.Uint64(pt[1:])))
	if issued.After(now.Add(ReplicaSkew)) || now.Sub(issued) > n.lifetime {
		return time.Time{}, false
	}
	return issued, true
}

// Stale reports whether a nonce issued at issued has lived half its lifetime, so a fresh one is
// worth sending before clients need one (RFC 9449 §8.2: the server may send a new nonce on any
// response).
func (n *Nonces) Stale(issued, now time.Time) bool { return now.Sub(issued) > n.lifetime/2 }
