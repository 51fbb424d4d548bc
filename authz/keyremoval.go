package authz

import (
	"context"
	"crypto"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// keyStamp says which key set verified a token, and how many removals of a key that set had
// seen then: a cached Principal is served only while no key has left the set since, so a key
// the issuer withdraws (a compromised key is withdrawn so) stops admitting the tokens it
// signed, cached or not, at the next fetch of the set. Which key went is not tracked: removals
// are rare, and every token of the issuer is verified again once, which costs one signature
// check each.
type keyStamp struct {
	keys     *keySet
	removals uint64
}

// stamp is the keyStamp of a verification about to use is's key set; read before the
// signature is checked, so a removal that lands meanwhile is seen at the next hit.
func (is *issuer) stamp() keyStamp {
	is.mu.Lock()
	ks := is.keys
	is.mu.Unlock()
	if ks == nil {
		return keyStamp{}
	}
	return keyStamp{keys: ks, removals: ks.removals.Load()}
}

// withdrawn reports whether a key left the stamped set since the stamp was taken. A set older
// than jwksMaxAge starts a fetch when one is allowed, without waiting for it: without that, an
// issuer whose callers all hold cached tokens would never have its set fetched, and a withdrawn
// key would keep its tokens in for as long as they are used; waiting would make every hit wait
// on an issuer that hangs, which hits never do. The hits after the fetch see its answer; a
// failed fetch keeps the old set, as it does for a token not cached. While the set is stale a
// hit still takes no lock and, but for the one that starts a fetch, allocates nothing.
func (s keyStamp) withdrawn(ctx context.Context, now time.Time) bool {
	k := s.keys
	if k == nil {
		return false
	}
	if n := now.UnixNano(); n > k.staleAt.Load() && n >= k.nextTry.Load() && k.inFlight.CompareAndSwap(false, true) {
		// Cleared when the answer is out, not inside the fetch: a hit that joined a flight
		// about to end would otherwise leave it set for good.
		ch := k.fetch(ctx)
		go func() {
			<-ch
			k.inFlight.Store(false)
		}()
	}
	return k.removals.Load() != s.removals
}

// lostKey reports whether next lacks a key of prev: one with the same kid and RFC 7638
// thumbprint. A key whose material changed under the same kid counts as lost.
func lostKey(prev, next []jose.JSONWebKey) bool {
	have := make(map[string]bool, len(next))
	for i := range next {
		have[keyIdentity(&next[i])] = true
	}
	for i := range prev {
		if !have[keyIdentity(&prev[i])] {
			return true
		}
	}
	return false
}

func keyIdentity(k *jose.JSONWebKey) string {
	tp, err := k.Thumbprint(crypto.SHA256)
	if err != nil {
		// No thumbprint (a key type go-jose cannot hash): the kid alone, so such a key
		// never matches one with a thumbprint.
		return "kid:" + k.KeyID
	}
	return k.KeyID + "\x00" + string(tp)
}

// left returns a context ended once a key has left the stamped set since the stamp was taken
// (at once when one already has), for what a token opened that lasts; nil without a set.
func (s keyStamp) left() context.Context {
	k := s.keys
	if k == nil {
		return nil
	}
	// Every listen asks: once the context exists it is read under the read lock, so opening a
	// stream does not hold up the verifications reading the set meanwhile.
	k.mu.RLock()
	left, gone := k.left, k.removals.Load() != s.removals
	k.mu.RUnlock()
	if left != nil && !gone {
		return left
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.removals.Load() != s.removals {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		return ctx
	}
	if k.left == nil {
		k.left, k.leftCancel = context.WithCancel(context.Background())
	}
	return k.left
}

// UntilRefused returns ctx ended once p's token is no longer accepted: at ValidUntil, or when a
// fetch of its issuer's key set finds that a key has left the set that verified it, as the token
// cache then verifies the token again. What a token opened that lasts (a listen, a pre-2026
// client's GET stream) ends then: a stream opened with a token signed by a key the issuer has
// withdrawn, say a stolen one, would otherwise go on until the exp its signer chose. Which key
// left is not told apart: every such stream ends, and its client opens it again with its token,
// verified afresh. No goroutine waits meanwhile.
func (a *Authenticator) UntilRefused(ctx context.Context, p *Principal) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithDeadline(ctx, a.ValidUntil(p))
	left := p.keys.left()
	if left == nil {
		return ctx, cancel
	}
	if left.Err() != nil {
		cancel() // now, not in AfterFunc's goroutine: the stream must not start
		return ctx, cancel
	}
	stop := context.AfterFunc(left, cancel)
	return ctx, func() { stop(); cancel() }
}
