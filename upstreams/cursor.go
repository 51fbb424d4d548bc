package upstreams

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
)

// A gateway list cursor seals: a format version, the list method, the offset of the next item
// in the filtered merged list, and a digest of that list. The digest binds the cursor to the
// exact view it was cut from: a cursor replayed after the list changed, or by a caller who sees
// other items, no longer matches and is refused as a bad cursor (digest §5.1: -32602), so the
// client starts over instead of silently skipping or repeating items.
const (
	// cursorVersion 2: the digest hashes each item's listItem.sum instead of the item itself;
	// a version-1 cursor, cut by a gateway before that change, is refused like any stale one.
	cursorVersion   = 2
	cursorDigestLen = 16
	cursorLen       = 1 + 1 + 4 + cursorDigestLen
)

// listDigest hashes the filtered merged list: its method and, in order, every item's sum. The
// sums are fixed-length, so the sequence needs no separators.
func listDigest(spec listSpec, items []listItem) []byte {
	h := sha256.New()
	h.Write([]byte(spec.method))
	for i := range items {
		h.Write(items[i].sum[:])
	}
	return h.Sum(nil)[:cursorDigestLen]
}

func (r *Registry) sealCursor(spec listSpec, offset int, digest []byte) (string, error) {
	var b [cursorLen]byte
	b[0], b[1] = cursorVersion, spec.index
	binary.BigEndian.PutUint32(b[2:6], uint32(offset))
	copy(b[6:], digest)
	token, err := r.cursors.Seal(b[:])
	if err != nil {
		return "", fmt.Errorf("upstreams: sealing a list cursor: %w", err)
	}
	return token, nil
}

// openCursor returns the offset a cursor points at, or ErrBadCursor.
func (r *Registry) openCursor(token string, spec listSpec, digest []byte, n int) (int, error) {
	b, err := r.cursors.Open(token)
	if err != nil {
		return 0, fmt.Errorf("%w: does not open", ErrBadCursor)
	}
	if len(b) != cursorLen || b[0] != cursorVersion || b[1] != spec.index {
		return 0, fmt.Errorf("%w: not a cursor of %s", ErrBadCursor, spec.method)
	}
	if !bytes.Equal(b[6:], digest) {
		return 0, fmt.Errorf("%w: the list has changed since", ErrBadCursor)
	}
	off := int(binary.BigEndian.Uint32(b[2:6]))
	if off <= 0 || off > n {
		return 0, fmt.Errorf("%w: offset out of range", ErrBadCursor)
	}
	return off, nil
}
