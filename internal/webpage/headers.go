package webpage

import (
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/net/idna"
)

// SetSecurityHeaders: nothing is loaded from anywhere, the only style is the pages' own
// (allowed by its hash), scripts do not run, forms post only to the gateway, and no other site
// may frame, cache or be told about a page (its URL may name a call or a backend).
func SetSecurityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	// same-origin, not no-referrer: under no-referrer browsers send "Origin: null" with the
	// pages' forms, and FromPage needs the real origin. Nothing leaves the gateway's origin
	// either way.
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=()")
}

var contentSecurityPolicy = "default-src 'none'; style-src '" + styleHash() + "'; img-src 'none'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

func styleHash() string {
	sum := sha256.Sum256([]byte(Style))
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
}

// FromPage reports whether a POST comes from a form of the gateway's own pages at base: Fetch
// Metadata, when the browser sends it, must say same-origin (not same-site, cross-site, or
// none, which a form POST cannot legitimately be), and Origin, when sent, must be the pages';
// an opaque origin ("null": a sandboxed frame, a data: URL, a redirect across origins) is not.
// Every browser sends at least one of the two on a form POST (the pages' Referrer-Policy,
// same-origin, lets Origin through), so a POST with neither is refused too.
func FromPage(h http.Header, base string) bool {
	origins, sites := h.Values("Origin"), h.Values("Sec-Fetch-Site")
	if len(origins) > 1 || len(sites) > 1 || len(origins)+len(sites) == 0 {
		return false
	}
	if len(sites) == 1 && sites[0] != "same-origin" {
		return false
	}
	return len(origins) == 0 || sameOrigin(origins[0], base)
}

// sameOrigin reports whether origin, an Origin header, names base's origin. Both are compared
// as browsers serialise an origin (the URL Standard): base may be written in any spelling of its
// origin that the configuration takes, and browsers send only one of them. A base of
// "https://gw.example.com:443" is sent "https://gw.example.com" (no default port, and a port of
// "0443" is 443), "https://GW.Example.com" lower case, "https://bücher.example" as
// "https://xn--bcher-kva.example", and "http://[0:0::1]:8080" as "http://[::1]:8080".
func sameOrigin(origin, base string) bool {
	o, ok1 := SerialisedOrigin(origin)
	b, ok2 := SerialisedOrigin(base)
	return ok1 && ok2 && o == b
}

// SerialisedOrigin is the origin of the http(s) URL raw, serialised as browsers send it in
// Origin; false when raw has none (no host, another scheme, "null", a zoned address).
func SerialisedOrigin(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.User != nil {
		return "", false
	}
	scheme := strings.ToLower(u.Scheme)
	var port string
	switch {
	case scheme != "http" && scheme != "https":
		return "", false
	case u.Port() != "":
		n, err := strconv.ParseUint(u.Port(), 10, 16)
		if err != nil {
			return "", false
		}
		if (scheme != "https" || n != 443) && (scheme != "http" || n != 80) {
			port = ":" + strconv.FormatUint(n, 10)
		}
	}
	host := u.Hostname()
	if strings.Contains(host, ":") {
		a, err := netip.ParseAddr(host)
		if err != nil || a.Zone() != "" {
			return "", false
		}
		host = "[" + a.String() + "]"
	} else if ascii, err := idna.New(idna.MapForLookup(), idna.StrictDomainName(false)).ToASCII(host); err == nil {
		// A name mapped as browsers map it before they serialise it (UTS #46 for lookup,
		// without the STD3 rules browsers do not apply: "my_host" is a host to them).
		host = ascii
	} else {
		host = strings.ToLower(host)
	}
	return scheme + "://" + host + port, true
}

// Display names the signed-in user in a sentence, with what the pages mark in names made
// visible in the text.
func Display(s *Session) string {
	who := NameOf(s.Subject).String() + " at " + NameOf(s.Issuer).String()
	if s.Name != "" {
		return NameOf(s.Name).String() + " (" + who + ")"
	}
	return who
}

// AllowFormsTo extends the page's form-action to origins besides the gateway's own: a form
// whose POST the gateway answers with a redirect to another site (the connect page's Continue,
// to an authorization server) is blocked by browsers unless the redirect's target is allowed
// too. Anything but a plain http(s) origin is left out.
func AllowFormsTo(h http.Header, origins ...string) {
	var extra strings.Builder
	for _, o := range origins {
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || strings.ContainsAny(u.Host, " ;,'\"") {
			continue
		}
		extra.WriteString(" " + u.Scheme + "://" + u.Host)
	}
	if extra.Len() > 0 {
		h.Set("Content-Security-Policy", strings.Replace(contentSecurityPolicy, "form-action 'self'", "form-action 'self'"+extra.String(), 1))
	}
}

// SignInAgain reports whether r asks to sign in as another user (?signin=again, which the
// pages link from a refusal to the user signed in): that signs the browser out and asks the
// issuer for a fresh login, so it is taken only from a navigation of the pages' own origin, or
// one the browser does not label as another site's (typed, bookmarked, an older browser). A
// link or redirect of another site, even a sibling host's, gets the page as any link does.
func SignInAgain(r *http.Request) bool {
	if r.URL.Query().Get("signin") != "again" {
		return false
	}
	for _, site := range r.Header.Values("Sec-Fetch-Site") {
		if site != "same-origin" && site != "none" {
			return false
		}
	}
	return true
}
