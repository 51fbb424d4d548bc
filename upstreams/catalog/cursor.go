package catalog

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
)

// A gateway list cursor seals: a format version, the list method, the offset of the next item
// in the filtered merged list, and a digest of that list. The digest binds the cursor to the
// exact view it was cut from: a cursor replayed after the list changed, or by a caller who sees
// other items, no longer matches and is refused as a bad cursor (docs/protocol.md §5.1: -32602), so the
// client starts over instead of silently skipping or repeating items.
// ErrBadCursor: a list cursor does not open, belongs to another method, or to a list that has
// changed since (docs/protocol.md §5.1: a bad cursor is -32602).
var ErrBadCursor = errors.New("upstreams: bad cursor")

const (
	// cursorVersion 2: the digest hashes each item's listItem.sum instead of the item itself;
	// a version-1 cursor, cut by a gateway before that change, is refused like any stale one.
	cursorVersion   = 2
	cursorDigestLen = 16
	cursorLen       = 1 + 1 + 4 + cursorDigestLen
)

// listDigester hashes a filtered merged list: its method and, in order, every item's sum. The
// sums are fixed-length, so the sequence needs no separators. They are written to the hash 64 at
// a time: one Write per item cost more than the hashing.
type listDigester struct {
	h   hash.Hash
	buf [64 * itemSumLen]byte
	n   int // bytes in buf
}

func newListDigester(spec listSpec) *listDigester {
	d := &listDigester{h: sha256.New()}
	d.h.Write([]byte(spec.method))
	return d
}

// bindView binds the digest to the endpoint a list is served on (ListRequest.View); the default
// endpoint's "" leaves it as it was, so its cursors are unchanged.
func (d *listDigester) bindView(view string) {
	if view != "" {
		d.h.Write([]byte("\x00view\x00" + view))
	}
}

func (d *listDigester) add(it *listItem) {
	if d.n == len(d.buf) {
		d.h.Write(d.buf[:])
		d.n = 0
	}
	d.n += copy(d.buf[d.n:], it.sum[:])
}

func (d *listDigester) sum() []byte {
	d.h.Write(d.buf[:d.n])
	d.n = 0
	return d.h.Sum(nil)[:cursorDigestLen]
}

func (c *Catalog) sealCursor(spec listSpec, offset int, digest []byte) (string, error) {
	var b [cursorLen]byte
	b[0], b[1] = cursorVersion, spec.index
	binary.BigEndian.PutUint32(b[2:6], uint32(offset))
	copy(b[6:], digest)
	token, err := c.cursors.Seal(b[:])
	if err != nil {
		return "", fmt.Errorf("upstreams: sealing a list cursor: %w", err)
	}
	return token, nil
}

// openCursor returns the offset a cursor points at and the digest of the list it was cut
// from, or ErrBadCursor; checkCursor then holds them against the list of this request.
func (c *Catalog) openCursor(token string, spec listSpec) (int, []byte, error) {
	b, err := c.cursors.Open(token)
	if err != nil {
		return 0, nil, fmt.Errorf("%w: does not open", ErrBadCursor)
	}
	if len(b) != cursorLen || b[0] != cursorVersion || b[1] != spec.index {
		return 0, nil, fmt.Errorf("%w: not a cursor of %s", ErrBadCursor, spec.method)
	}
	off := int(binary.BigEndian.Uint32(b[2:6]))
	if off <= 0 {
		return 0, nil, fmt.Errorf("%w: offset out of range", ErrBadCursor)
	}
	return off, b[6:], nil
}

// checkCursor refuses a cursor cut from another list than this one (digest) or pointing past
// its n items.
func checkCursor(want, digest []byte, off, n int) error {
	if !bytes.Equal(want, digest) {
		return fmt.Errorf("%w: the list has changed since", ErrBadCursor)
	}
	if off > n {
		return fmt.Errorf("%w: offset out of range", ErrBadCursor)
	}
	return nil
}
