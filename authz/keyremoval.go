package authz

import (
	"context"
	"crypto"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// keyStamp says which key set verified a token, which of its keys did, and how many removals
// of a key that set had seen then. A cached Principal is served only while no key has left the
// set since, so a key the issuer withdraws (a compromised key is withdrawn so) stops admitting
// the tokens it signed, cached or not, at the next fetch of the set; the cache does not tell
// keys apart, as removals are rare and every token of the issuer is then verified again once,
// which costs one signature check each. A stream (left) ends only when its own key goes: a
// routine rotation, which withdraws the old key while the new one signs, must not make every
// client of the issuer listen again, and a client would not notice that its cached token is
// verified again but does notice its stream ending.
type keyStamp struct {
	keys     *keySet
	removals uint64
	// key is the keyIdentity of the key that verified the token; "" when it has none, and the
	// token's streams then end at any removal (fail closed).
	key string
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

// keyIdentity is what tells keys apart across fetches: the kid with the RFC 7638 thumbprint, so
// a key whose material changed under the same kid is another key. sure is false for a key
// without a thumbprint (a type go-jose cannot hash), whose identity is its kid alone.
func keyIdentity(k *jose.JSONWebKey) (id string, sure bool) {
	tp, err := k.Thumbprint(crypto.SHA256)
	if err != nil {
		return "k" + k.KeyID, false
	}
	// The thumbprint has a fixed length, so no kid can make one identity read as another.
	return "t" + string(tp) + k.KeyID, true
}

// identities are the keyIdentity of each key.
func identities(keys []jose.JSONWebKey) map[string]bool {
	ids := make(map[string]bool, len(keys))
	for i := range keys {
		id, _ := keyIdentity(&keys[i])
		ids[id] = true
	}
	return ids
}

// endLost counts a removal when a key of the last set is not in next, and ends the streams of
// the keys gone and of the tokens whose key is not known. Called with k.mu held.
func (k *keySet) endLost(next map[string]bool) {
	lost := false
	for id := range k.ids {
		if next[id] {
			continue
		}
		lost = true
		if l, ok := k.keyLeft[id]; ok {
			l.cancel()
			delete(k.keyLeft, id)
		}
	}
	if !lost {
		return
	}
	k.removals.Add(1)
	if k.leftCancel != nil {
		k.leftCancel()
		k.left, k.leftCancel = nil, nil
	}
}

// ended is a context that has ended.
func ended() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// left returns a context ended once the key that verified the stamped token has left the set
// (at once when it already has), for what a token opened that lasts; nil without a set. For a
// token whose key is not known it ends once any key has left the set since the stamp was taken.
func (s keyStamp) left() context.Context {
	k := s.keys
	switch {
	case k == nil:
		return nil
	case s.key == "":
		return s.anyLeft()
	}
	// Every listen asks: once the key's context exists it is read under the read lock, so
	// opening a stream does not hold up the verifications reading the set meanwhile. A context
	// in keyLeft is one whose key is in the set: the fetch that finds it gone deletes it.
	k.mu.RLock()
	l, ok := k.keyLeft[s.key]
	k.mu.RUnlock()
	if ok {
		return l.ctx
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.ids[s.key] {
		return ended()
	}
	if l, ok := k.keyLeft[s.key]; ok {
		return l.ctx
	}
	if k.keyLeft == nil {
		k.keyLeft = map[string]leaving{}
	}
	ctx, cancel := context.WithCancel(context.Background())
	k.keyLeft[s.key] = leaving{ctx: ctx, cancel: cancel}
	return ctx
}

// anyLeft is left for a token whose key is not known: ended once any key has left the set
// since the stamp was taken.
func (s keyStamp) anyLeft() context.Context {
	k := s.keys
	k.mu.RLock()
	left, gone := k.left, k.removals.Load() != s.removals
	k.mu.RUnlock()
	if left != nil && !gone {
		return left
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.removals.Load() != s.removals || k.gone {
		return ended()
	}
	if k.left == nil {
		k.left, k.leftCancel = context.WithCancel(context.Background())
	}
	return k.left
}

// UntilRefused returns ctx ended once p's token is no longer accepted: at ValidUntil, or when a
// fetch of its issuer's key set finds that the key that verified it has left the set. What a
// token opened that lasts (a listen, a pre-2026 client's GET stream) ends then: a stream opened
// with a token signed by a key the issuer has withdrawn, say a stolen one, would otherwise go on
// until the exp its signer chose. The streams of the issuer's other keys go on, so a routine
// rotation (a new key added, the old one withdrawn later) ends only the old key's streams; a
// stream whose token's key is not known ends at any key's removal. No goroutine waits meanwhile.
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
