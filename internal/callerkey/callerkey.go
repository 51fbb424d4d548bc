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
// token-exchange backend answered for one token of a caller, not the caller. Three digests of a
// caller are spelled otherwise, each because what it names outlives a release and another
// spelling would void it at the next rolling update, and each unambiguous because an issuer
// never holds NUL (authz refuses an issuer URL with a control character): the binding of a
// pre-2026 session id (legacysession.Bind, issuer NUL subject), the owner of the token vault's
// records (vault.Caller.Owner, the same with a label), and the binding of a denial handle
// (mcphttp contextBinding, whose fields, a subject holding NUL included, are each written so
// that they are told apart). A key built on one of these (a rate-limit bucket, a store key)
// starts from Of, and a part that may hold its separator is written so it cannot run into the
// next (mcphttp ruleBucket).
//
// A caller without identity (the gateway runs without authentication) is bounded by where it
// comes from instead: Client spells the key of a client address group as internal/clientaddr
// resolves it (the TCP peer, or the address the trusted proxies name; an IPv6 client by its
// prefix). Such a key holds no "#", so it is never a key Of writes and Split refuses it: the
// bounds of a client address never meet an authenticated caller's, nor does anything that
// needs an identity (the token vault, token exchange) take it for one.
package callerkey

import (
	"net/netip"
	"strings"
)

// Of is the key of the caller subject of issuer. It is issuer + "#" + subject, whatever they
// are: the callers of Of hold only issuers and subjects the gateway verified (see the package
// comment). It never answers "": "" is no caller at all (the gateway runs without
// authentication), whose per-caller bounds are its client address's (Client).
func Of(issuer, subject string) string {
	return issuer + "#" + subject
}

// clientPrefix starts every key Client writes.
const clientPrefix = "client "

// Client is the key a per-caller bound charges a request without identity to: the group of
// its client address (internal/clientaddr Resolver.Key), "client " followed by the prefix, such
// as "client 192.0.2.1/32" or "client 2001:db8::/64". Every request whose address is unknown (a
// peer that is not TCP) is charged to "client unknown", one key for all of them.
func Client(group netip.Prefix) string {
	if !group.IsValid() {
		return clientPrefix + "unknown"
	}
	var b [len(clientPrefix) + len("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128")]byte
	return string(group.AppendTo(append(b[:0], clientPrefix...))) // one allocation: the string
}

// Split returns the issuer and subject of key; ok is false for a key Of would not have written.
func Split(key string) (issuer, subject string, ok bool) {
	issuer, subject, ok = strings.Cut(key, "#")
	if !ok || issuer == "" || subject == "" {
		return "", "", false
	}
	return issuer, subject, true
}
