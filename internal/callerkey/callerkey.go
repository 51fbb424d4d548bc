// Package callerkey is the one spelling of a caller's identity as the gateway keys state by it:
// issuer + "#" + subject. Every per-caller bound (in-flight slots, breakers, pending approvals,
// answers to input requests, consent callbacks), every per-caller cache entry and the token
// vault's lookups use this key, and authz.Principal.CallerKey is how a verified caller gets it.
//
// The key is unambiguous because the issuer never contains "#": the gateway refuses an issuer
// URL with a fragment or query in its configuration (authz), and every issuer a key is built
// from is one of those (a verified token's, an approval or consent session's, both checked
// against the configured issuers). A subject may contain "#" (the first "#" ends the issuer),
// and is never empty (a token without "sub" is refused).
//
// The spelling is part of state that outlives a process: store keys of pending approvals, of
// used answers and consent callbacks, and legacy session pools are named by it, so a replica of
// the previous release and this one must agree on it. TestSpellingIsStable pins it.
//
// A caller's token digest (upstreams/backend.SubjectKey) is a different key: what a
// token-exchange backend answered for one token of a caller, not the caller. Bindings carried
// in what clients hold (legacy session ids, denial handles) digest issuer NUL subject instead:
// they bind a value to a caller rather than key state by one, and changing them would void
// what clients of the previous release hold.
package callerkey

import "strings"

// Of is the key of the caller subject of issuer. It is issuer + "#" + subject, whatever they
// are: the callers of Of hold only issuers and subjects the gateway verified (see the package
// comment). It never answers "" for a caller, since "" is the anonymous caller that no
// per-caller bound applies to.
func Of(issuer, subject string) string {
	return issuer + "#" + subject
}

// Split returns the issuer and subject of key; ok is false for a key Of would not have written.
func Split(key string) (issuer, subject string, ok bool) {
	issuer, subject, ok = strings.Cut(key, "#")
	if !ok || issuer == "" || subject == "" {
		return "", "", false
	}
	return issuer, subject, true
}
