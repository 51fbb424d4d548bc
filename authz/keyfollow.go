package authz

// Streams across a configuration reload. A stream (a listen, a pre-2026 client's GET stream)
// opened before a reload keeps the Authenticator it was verified by until its configuration
// retires (up to server.shutdownTimeout later), and waits on that configuration's key set for
// its key to leave (keyStamp.left). An issuer taken over unchanged keeps its key set, which the
// new configuration fetches. An issuer whose settings changed gets a new key set, and the old
// one is no longer fetched: a key the issuer withdrew in that window would not end the streams
// its tokens opened. So the old key set follows the new one (the same issuer URL, so the same
// keys by keyIdentity): each fetch of the new set ends the old set's streams whose key it no
// longer has. An issuer the new configuration no longer trusts ends its streams at once: the
// new configuration refuses its tokens.

// Replaces is called once a is serving in prev's place (a configuration reload that applied,
// not merely built): the streams verified by prev's issuers whose settings changed follow a's
// key set of the same issuer from now on, and those of issuers a does not have end now. Calling
// it for an a that is then abandoned would end streams for a configuration that never served.
func (a *Authenticator) Replaces(prev *Authenticator) {
	if prev == nil || prev == a {
		return
	}
	for name, old := range prev.issuers {
		switch is, ok := a.issuers[name]; {
		case !ok:
			for _, ks := range old.keySets() {
				ks.endAll()
			}
		case is != old:
			is.lead(old.keySets())
		}
	}
}

// keySets are is's key set, if it has one yet, and the older ones that follow it.
func (is *issuer) keySets() []*keySet {
	is.mu.Lock()
	ks, pending := is.keys, is.followers
	is.mu.Unlock()
	if ks == nil {
		return pending
	}
	ks.mu.RLock()
	defer ks.mu.RUnlock()
	return append([]*keySet{ks}, ks.followers...)
}

// lead makes sets follow is's key set; until is has one they wait on is (install hands them
// over), and once it has keys they follow them at once.
func (is *issuer) lead(sets []*keySet) {
	is.mu.Lock()
	ks := is.keys
	if ks == nil {
		is.followers = live(append(is.followers, sets...))
		is.mu.Unlock()
		for _, f := range sets {
			f.mu.Lock()
			f.led = true
			f.followers = nil // handed over with f (keySets): is leads them now
			f.mu.Unlock()
		}
		return
	}
	is.mu.Unlock()
	ks.mu.Lock()
	defer ks.mu.Unlock()
	ks.followers = live(append(ks.followers, sets...))
	for _, f := range sets {
		f.follow(ks.ids)
	}
}

// live drops the sets whose issuer has ended (its last configuration closed, and with it the
// streams verified by the set): what follows a set lasts no longer than its configurations.
func live(sets []*keySet) []*keySet {
	out := sets[:0]
	for _, f := range sets {
		if f.life == nil || f.life.Err() == nil {
			out = append(out, f)
		}
	}
	clear(sets[len(out):])
	return out
}

// follow makes k's keys those of ids, a fetch of the set k follows (nil before its first):
// the streams of k's keys not in ids end, and k's own fetches no longer change its keys.
// Called with the leader's mu held (a newer set's lock before an older one's).
//
// A set that follows leads no other: the sets it led were handed over with it (keySets) and
// follow its leader. Were they kept here too, each set would hold the one before it, and the
// newest every set its issuer ever had, ended or not, for the life of the process.
func (k *keySet) follow(ids map[string]bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.led = true
	k.followers = nil
	if ids == nil || k.gone {
		return
	}
	k.endLost(ids)
	k.ids = ids
}

// endAll ends every stream of k's tokens, and any opened later: k's issuer is no longer
// trusted by the configuration serving now.
func (k *keySet) endAll() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.led, k.gone = true, true
	for id, l := range k.keyLeft {
		l.cancel()
		delete(k.keyLeft, id)
	}
	if k.leftCancel != nil {
		k.leftCancel()
		k.left, k.leftCancel = nil, nil
	}
	k.ids = nil
	k.removals.Add(1)
}

// leadFollowers passes a fetch's ids on to the sets that follow k. Called with k.mu held.
func (k *keySet) leadFollowers(ids map[string]bool) {
	k.followers = live(k.followers)
	for _, f := range k.followers {
		f.follow(ids)
	}
}
