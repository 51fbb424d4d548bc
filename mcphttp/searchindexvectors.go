package mcphttp

import (
	"crypto/sha256"
	"time"

	"github.com/mcp-gateway/gateway/internal/sharelru"
)

// An index's tools' vectors arrive after its build and count in its size (catalogIndex.size):
// an index they take past its bound is dropped. Its next build would ask for them again, only
// to be dropped again, at every search; so for a while it is built without them, and kept.

// lexicalFor is how long the builds of a version whose vectors made its index too large to keep
// embed nothing (its searches rank lexically): long enough that its searches stop asking for
// vectors that cannot be kept, short enough that a bound raised by a reload, or a catalog made
// public, soon has them again.
const lexicalFor = time.Minute

// lexicalVersions bounds the versions remembered so (each a digest and a time); one caller's
// private catalogs hold at most an eighth of them, so one caller's churn cannot make the others'
// be embedded again at every search.
const lexicalVersions = 64

// fits reports whether an index of size bytes, built for owner's private catalog ("" a public
// one), can be kept: within the bound, or within the owner's share of it.
func (c *indexCache) fits(size int64, owner string) bool {
	switch {
	case c.maxBytes <= 0:
		return true
	case owner != "":
		return size <= c.entries.ShareBytes()
	}
	return size <= c.maxBytes
}

// embedsFor reports whether the tools of e, just built for owner, are to be embedded: not when
// e cannot be kept even without its vectors, nor for lexicalFor after its vectors made it too
// large to keep. Either way they would be dropped with it, and asked for again at each search.
func (c *indexCache) embedsFor(e *catalogIndex, owner string) bool {
	if !c.fits(e.size, owner) {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	l, ok := c.lexical.Peek(e.version)
	switch {
	case !ok:
		return true
	case !c.now().Before(l.until):
		c.lexical.Remove(e.version)
		return true
	}
	// A private catalog's index too large for its caller's share may fit the whole bound once
	// public.
	return l.private && owner == ""
}

// lexicalUntil is when a version's builds embed again, and whether the index its vectors made
// too large was a private catalog's (bounded by its caller's share).
type lexicalUntil struct {
	until   time.Time
	private bool
}

// vectorsAdded counts n more bytes of e's vectors (e built for owner) in its size, and in the
// cache's when the cache holds e: past its bound (or its caller's share) others go for room, or e
// itself when it no longer fits, as if it had been built with them; then its version's next
// builds embed nothing for lexicalFor.
func (c *indexCache) vectorsAdded(e *catalogIndex, owner string, n int64) {
	if n == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e.size += n
	held, ok := c.entries.Peek(e.version)
	if ok && held == e {
		if c.entries.Resize(e.version, e.size) {
			return
		}
		c.evicted(sharelru.Full)
	} else if c.fits(e.size, owner) {
		return
	}
	c.rememberLexical(e.version, owner)
}

// rememberLexical has version's builds embed nothing for lexicalFor; c.mu is held.
func (c *indexCache) rememberLexical(v [sha256.Size]byte, owner string) {
	c.lexical.Put(v, lexicalUntil{until: c.now().Add(lexicalFor), private: owner != ""}, owner, 0)
}
