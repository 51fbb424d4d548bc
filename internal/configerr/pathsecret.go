package configerr

import (
	"net/url"
	"strings"
)

// A URL's path can be its credential: a webhook's token is a segment of its path
// (https://hooks.slack.com/services/T…/B…/<token>, https://discord.com/api/webhooks/<id>/<token>,
// an interceptor's https://host/hook/<random>), and so are a signed path's signature and a
// capability URL's random part (https://mcp.example.com/s/<random>/mcp). Anyone who reads such a
// URL in a log line can call it. Which segment is the secret depends on the service, so the rule
// hides every segment that may be one and keeps the words an operator recognises a URL by
// (/v1/mcp, /.well-known/openid-configuration, /models/text-embedding-3-small):
//
//   - every segment after one that names a hook (a segment whose name, decoded, holds "hook",
//     any case: hook, hooks, webhooks, webhookb2, %68ook), the whole of one that names a hook
//     before an encoded slash (hooks%2F<token>), and every segment but the first of a URL whose host
//     names one (hooks.slack.com, hooks.zapier.com, x.webhook.office.com): a webhook URL's path
//     past its name is its address and its token;
//   - a segment that looks generated rather than written (credentialLike): a run of 16 letters
//     and digits with a digit in it, a run of 20, a UUID, or a token's alphabet mixing upper and
//     lower case over 20 characters with a digit or over 32 without.
//
// A hidden segment is written as Redacted; the slashes stay, so the URL's shape still shows.

// writePath writes hostPath, a URL's host, port and path (no user information, query or
// fragment), to out with every segment of its path that may be a credential replaced.
func writePath(out *strings.Builder, hostPath string) {
	host, path, hasPath := strings.Cut(hostPath, "/")
	out.WriteString(host)
	if !hasPath {
		return
	}
	hideAfter := -1 // segments after this index are hidden
	if namesHook(host) {
		hideAfter = 0
	}
	for i, seg := range strings.Split(path, "/") {
		out.WriteByte('/')
		// The hook rule reads the segment as the server it is sent to does: decoded, so that
		// "%68ook" names a hook, and "hooks%2F<token>" holds what follows the name.
		word := seg
		if d, err := url.PathUnescape(seg); err == nil {
			word = d
		}
		switch {
		case seg == "":
		case hideAfter >= 0 && i > hideAfter, credentialLike(seg):
			out.WriteString(Redacted)
		case hideAfter < 0 && hookWithin(word):
			out.WriteString(Redacted)
			hideAfter = i
		default:
			out.WriteString(seg)
			if hideAfter < 0 && namesHook(word) { // a word, not a token that happens to spell it
				hideAfter = i
			}
		}
	}
}

// hookWithin reports whether word, a decoded segment, names a hook before an encoded slash: what
// follows the name, which a server routes as segments of their own, is in the segment itself.
func hookWithin(word string) bool {
	slash := strings.LastIndexByte(word, '/')
	return slash >= 0 && namesHook(word[:slash])
}

// namesHook reports whether s, a host or a path segment, holds "hook" in any case.
func namesHook(s string) bool {
	const hook = "hook"
	for i := 0; i+len(hook) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(hook)], hook) {
			return true
		}
	}
	return false
}

// Thresholds of credentialLike. A random token of 16 letters and digits holds a digit but for
// a chance of 6 %, one of 20 or more is longer than the words a path is written with, and 20
// characters mixing both cases and digits, or 32 mixing both cases, are a token even where '-'
// or '_' split its runs (base64url). Identifiers written by people stay under them:
// "openid-configuration", "text-embedding-3-small", "batchEmbedContents",
// "gemini-embedding-001:embedContent". What passes is short (a base64url token under 32
// characters without a digit and split by '-' or '_'; anything under 16), or written with
// separators the way words are.
const (
	runWithDigit    = 16
	runAny          = 20
	mixedTokenSize  = 20
	mixedCaseTokens = 32
)

// credentialLike reports whether seg, one segment of a path as written (percent-encoded or
// not), looks generated: a key, a token, a signature or a random identifier.
func credentialLike(seg string) bool {
	if d, err := url.PathUnescape(seg); err == nil {
		seg = d
	}
	if isUUID(seg) {
		return true
	}
	run, digit := 0, false
	upper, lower, digits, tokenAlphabet := false, false, false, true
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		isDigit := '0' <= c && c <= '9'
		isUpper := 'A' <= c && c <= 'Z'
		isLower := 'a' <= c && c <= 'z'
		upper, lower, digits = upper || isUpper, lower || isLower, digits || isDigit
		if !isDigit && !isUpper && !isLower {
			run, digit = 0, false
			tokenAlphabet = tokenAlphabet && strings.IndexByte("-_+/=", c) >= 0
			continue
		}
		run++
		digit = digit || isDigit
		if run >= runAny || run >= runWithDigit && digit {
			return true
		}
	}
	return tokenAlphabet && upper && lower && (len(seg) >= mixedTokenSize && digits || len(seg) >= mixedCaseTokens)
}

// isUUID reports whether s is written as a UUID is (8-4-4-4-12 hexadecimal digits): a random
// UUID is a capability as good as a token, and a path is where services put it.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}
