// Package resuri puts resource URIs into the one normal form the gateway authorises and
// forwards, and refuses the URIs whose meaning depends on which parser reads them.
//
// The gateway matches policy against a resource URI and then hands that URI to a backend, which
// parses it its own way: Go's net/url then path.Clean, Node's WHATWG URL, Python's urllib, or a
// plain string lookup. Unless the two readings agree, a rule over file:///secret/* says nothing
// about what file:///public/../secret/key or file:///public/%2e%2e/secret/key reads. So the
// gateway normalises (RFC 3986 §6.2.2 and §6.2.3) and forwards the normal form, so the backend
// receives what was authorised, and refuses what is still ambiguous. The one liberty left is
// how non-ASCII text is written toward the backend (URIForm, SpellsAs), which backends that look
// resources up by exact string need and which every reader decodes alike:
//
//   - The scheme and an ASCII host are lower-cased; "localhost" names the empty host of a file
//     URI (RFC 8089 §2), and file:/p becomes file:///p.
//   - The authority is written as RFC 3986 §6.2.3 and WHATWG parsers read it: a port as its
//     number, without a default (http:80, https:443, …) or empty one, no empty user information
//     ("http://@h" is "http://h", "u:@" is "u@"), an IPv6 address compressed in lower case.
//   - Percent-encoded unreserved characters are decoded ("%7e" → "~", "%2E" → "."), and so are
//     percent-encoded UTF-8 sequences, so that "é" and "%C3%A9" are one URI; every escape
//     left over names an ASCII delimiter and is written with upper-case hex digits.
//   - The result is put in Unicode Normalization Form C, so "é" and "e" with a combining acute
//     accent (U+0301) are one URI, as they are one name to file systems that compare names by
//     canonical equivalence (APFS, HFS+) and to backends that normalise.
//   - Dot segments are removed from the path (RFC 3986 §5.2.4) and runs of "/" are collapsed
//     into one, as path.Clean and file systems do. A ".." above the root is refused.
//   - Refused: no scheme; a character outside RFC 3986 (space, '\', '"', '<', '>', '^', '`',
//     '{', '|', '}'), an ASCII or Unicode control or format character (NUL, CR, LF, TAB, DEL,
//     C1, zero-width and bidi marks), Unicode spaces, the full-width and compatibility forms of
//     '/', '\', '.', '%', '?', '#', ':' that NFKC folds onto ASCII delimiters; invalid UTF-8
//     raw or encoded; an invalid escape; an encoded '/', '\', control or '%' followed by two
//     hex digits (double encoding); a combining mark that would compose with an ASCII delimiter
//     ("=" and U+0338 are "≠"); any other segment that some reader takes for a dot segment:
//     dots and blanks only ("...", "..%20", ".+."), or dots before a parameter, stream or
//     query delimiter, raw or encoded ("..;x", "..%3Bx", "..::$DATA", "..%3F"); the same
//     standing alone in the query or fragment (file:///x?p=../y, ?p=..%3B); more than one
//     '@' or a non-ASCII or escaped character in the authority; a host ending in '.'; a port
//     over 65535; for the special schemes and file, a host that ends in a number but is not an
//     IPv4 address in dotted-decimal form (0x7f.1, 0177.0.0.1, 2130706433 and 127.1 are
//     127.0.0.1 to WHATWG and inet_aton, a host name to Go); an IP literal that is no IPv6
//     address.
//   - For the WHATWG "special" schemes (http, https, ws, wss, ftp) a URI without "//" or
//     without a host is refused (WHATWG reads http:/x, http:x and http:///x as the host x);
//     for file, a rootless path is refused (WHATWG reads file:x as file:///x).
//
// Opaque and rootless URIs (mem:hr/x, urn:a:b) get the same treatment of their path.
// Normalize is idempotent: Normalize(Normalize(u)) == Normalize(u).
package resuri

import (
	"errors"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// ErrInvalid is wrapped by every refusal.
var ErrInvalid = errors.New("ambiguous or malformed resource URI")

// Error is a refusal with its reason, safe to show to the client (it never quotes the URI).
type Error struct{ Reason string }

func (e *Error) Error() string { return ErrInvalid.Error() + ": " + e.Reason }

// Unwrap makes errors.Is(err, ErrInvalid) hold.
func (e *Error) Unwrap() error { return ErrInvalid }

func refuse(reason string) error { return &Error{Reason: reason} }

// MaxLen bounds a resource URI (or template) in bytes: longer ones are refused.
const MaxLen = 16 << 10

// Normalize returns the normal form of a resource URI, or an error wrapping ErrInvalid.
func Normalize(uri string) (string, error) { return normalize(uri, false) }

// NormalizeTemplate is Normalize for an RFC 6570 URI template (resources/templates/list
// uriTemplate, completion ref/resource uri): the literal text is normalised as a URI would be,
// each {expression} is kept as it is. A dot segment in the literal text is refused rather than
// removed, since an expression may expand to any number of segments.
func NormalizeTemplate(tmpl string) (string, error) {
	if len(tmpl) > MaxLen {
		return "", refuse("too long")
	}
	// Each expression is stood in for by one private-use character, which the URI rules
	// treat as an ordinary non-delimiter character, and put back afterwards.
	var exprs []string
	var b strings.Builder
	for i := 0; i < len(tmpl); {
		c := tmpl[i]
		switch {
		case c == '{':
			end := strings.IndexByte(tmpl[i:], '}')
			if end < 0 {
				return "", refuse("unclosed template expression")
			}
			e := tmpl[i : i+end+1]
			if !validExpression(e[1 : len(e)-1]) {
				return "", refuse("invalid template expression")
			}
			if len(exprs) == maxExpressions {
				return "", refuse("too many template expressions")
			}
			b.WriteRune(placeholder + rune(len(exprs)))
			exprs = append(exprs, e)
			i += end + 1
		case c == '}':
			return "", refuse("unopened template expression")
		default:
			r, n := utf8.DecodeRuneInString(tmpl[i:])
			if r >= placeholder && r < placeholder+maxExpressions {
				return "", refuse("disallowed character")
			}
			b.WriteString(tmpl[i : i+n])
			i += n
		}
	}
	out, err := normalize(b.String(), true)
	if err != nil {
		return "", err
	}
	if len(exprs) == 0 {
		return out, nil
	}
	var r strings.Builder
	for _, c := range out {
		if c >= placeholder && c < placeholder+maxExpressions {
			r.WriteString(exprs[c-placeholder])
		} else {
			r.WriteRune(c)
		}
	}
	return r.String(), nil
}

const (
	placeholder    = '\uE000' // first of the private-use stand-ins for template expressions
	maxExpressions = 256
)

// validExpression reports whether e (without its braces) is an RFC 6570 expression: an
// optional operator, then variable names (ALPHA / DIGIT / "_" / "." / pct-encoded) with
// optional ":" length or "*" explode modifiers, separated by ",".
func validExpression(e string) bool {
	if e != "" && strings.IndexByte("+#./;?&=,!@|", e[0]) >= 0 {
		e = e[1:]
	}
	if e == "" {
		return false
	}
	for i := 0; i < len(e); i++ {
		c := e[i]
		if !isAlnum(c) && strings.IndexByte("_.%,:*", c) < 0 {
			return false
		}
	}
	return true
}

// special are the WHATWG URL "special" schemes other than file: their parsers read a host
// even without "//".
var special = map[string]bool{"http": true, "https": true, "ws": true, "wss": true, "ftp": true}

func normalize(s string, tmpl bool) (string, error) {
	if len(s) > MaxLen {
		return "", refuse("too long")
	}
	if err := checkChars(s, tmpl); err != nil {
		return "", err
	}
	u, err := split(s)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteString(u.scheme)
	b.WriteByte(':')
	if u.hasAuth {
		a, err := authority(u.scheme, u.auth, tmpl)
		if err != nil {
			return "", err
		}
		b.WriteString("//")
		b.WriteString(a)
	}
	p, err := pctNormalize(u.path)
	if err != nil {
		return "", err
	}
	if p, err = cleanPath(p, tmpl); err != nil {
		return "", err
	}
	b.WriteString(p)
	for _, part := range []struct {
		sep  byte
		text string
		has  bool
	}{{'?', u.query, u.hasQuery}, {'#', u.frag, u.hasFrag}} {
		if !part.has || part.text == "" {
			continue // "x?" and "x#" are x to every parser that reads a path
		}
		t, err := pctNormalize(part.text)
		if err != nil {
			return "", err
		}
		if dotRun(t) {
			return "", refuse("a dot segment in the query or fragment")
		}
		b.WriteByte(part.sep)
		b.WriteString(t)
	}
	return composed(b.String())
}

// uriParts are the parts of a URI as split, before any is normalised.
type uriParts struct {
	scheme                     string // lower-cased
	auth, path, query, frag    string
	hasAuth, hasQuery, hasFrag bool
}

// split cuts s into its scheme (lower-cased), authority, path, query and fragment, and refuses
// a URI whose scheme needs an authority or an absolute path it lacks. A path that starts with
// "/" and no authority is given an empty one: scheme:/p and scheme:///p name the same thing to
// every parser that reads a path (net/url, WHATWG, urllib all give host "" and path /p), so
// there is one form only.
func split(s string) (uriParts, error) {
	var u uriParts
	colon := strings.IndexByte(s, ':')
	if colon <= 0 || !validScheme(s[:colon]) {
		return u, refuse("no valid scheme")
	}
	u.scheme = strings.ToLower(s[:colon])
	rest := s[colon+1:]
	if i := strings.IndexByte(rest, '#'); i >= 0 {
		rest, u.frag, u.hasFrag = rest[:i], rest[i+1:], true
	}
	if i := strings.IndexByte(rest, '?'); i >= 0 {
		rest, u.query, u.hasQuery = rest[:i], rest[i+1:], true
	}
	if u.hasAuth = strings.HasPrefix(rest, "//"); u.hasAuth {
		rest = rest[2:]
		i := strings.IndexByte(rest, '/')
		if i < 0 {
			i = len(rest)
		}
		u.auth, u.path = rest[:i], rest[i:]
	} else {
		u.path = rest
	}
	switch {
	case !u.hasAuth && special[u.scheme]:
		return u, refuse("a " + u.scheme + " URI needs an authority")
	case !u.hasAuth && u.scheme == "file" && u.path != "" && u.path[0] != '/':
		return u, refuse("a file URI needs an absolute path")
	case !u.hasAuth && u.path != "" && u.path[0] == '/':
		u.hasAuth = true
	}
	return u, nil
}

// composed returns s in Unicode Normalization Form C (RFC 3987 §5.3.2.2). "é" written as
// U+00E9 or as "e" and U+0301 is one character to a person and to file systems that compare
// names by canonical equivalence (APFS, HFS+) or store them composed, and to the backends that
// normalise what they are sent, but two different strings to a byte-wise policy glob: a rule
// over file:///private/café/* would say nothing about its decomposed spelling. So the one
// normal form is composed. A combining mark that would compose with an ASCII delimiter ("="
// and U+0338 are "≠") is refused: the delimiter a parser splits on must not come and go with
// the normal form.
func composed(s string) (string, error) {
	if norm.NFC.IsNormalString(s) {
		return s, nil
	}
	c := norm.NFC.String(s)
	if !sameDelimiters(s, c) {
		return "", refuse("a combining mark on a delimiter")
	}
	return c, nil
}

// sameDelimiters reports whether a and b hold the same ASCII characters other than letters and
// digits, in the same order, each percent sign with the same two characters after it (a mark
// after an escape composes with its last hex digit: "%2A" and U+0300 are "%2À", no escape).
func sameDelimiters(a, b string) bool {
	i, j := 0, 0
	for {
		for i < len(a) && (a[i] >= utf8.RuneSelf || isAlnum(a[i])) {
			i++
		}
		for j < len(b) && (b[j] >= utf8.RuneSelf || isAlnum(b[j])) {
			j++
		}
		if i == len(a) || j == len(b) {
			return i == len(a) && j == len(b)
		}
		if a[i] != b[j] {
			return false
		}
		if a[i] == '%' {
			if len(a)-i < 3 || len(b)-j < 3 || a[i+1:i+3] != b[j+1:j+3] {
				return false
			}
			i += 2
			j += 2
		}
		i++
		j++
	}
}

func validScheme(s string) bool {
	if !isAlpha(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && c != '+' && c != '-' && c != '.' {
			return false
		}
	}
	return true
}

// checkChars refuses every character that is not in RFC 3986's repertoire or that some parser
// or file system would turn into a delimiter (see the package comment).
func checkChars(s string, tmpl bool) error {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if !uriChar(c) {
				return refuse("disallowed character")
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n <= 1 {
			return refuse("invalid UTF-8")
		}
		if !allowedRune(r) && !(tmpl && r >= placeholder && r < placeholder+maxExpressions) {
			return refuse("disallowed character")
		}
		i += n
	}
	return nil
}

// uriChar: unreserved, gen-delims, sub-delims and '%' (RFC 3986 §2).
func uriChar(c byte) bool {
	return isAlnum(c) || strings.IndexByte("-._~:/?#[]@!$&'()*+,;=%", c) >= 0
}

// confusables are non-ASCII characters that NFKC (applied by some file systems, IDNA, and
// Python's urllib netloc check) or lenient decoders fold onto an ASCII delimiter or dot.
var confusables = [...][2]rune{
	{0xFF00, 0xFFEF}, // half-width and full-width forms: ／ ＼ ． ％ ？ ＃ ： ｡ …
	{0xFE10, 0xFE1F}, // vertical forms
	{0xFE30, 0xFE6F}, // CJK compatibility and small form variants: ﹒ ﹨ ﹖ …
	{0x2024, 0x2026}, // one/two dot leaders, ellipsis
	{0x2044, 0x2044}, // fraction slash
	{0x2100, 0x2106}, // ℀ ℁ ℅ ℆ (NFKC "a/c" …)
	{0x2215, 0x2216}, // division slash, set minus
	{0x29F5, 0x29F9}, // reverse solidus operator, big solidus …
	{0x3002, 0x3002}, // ideographic full stop (IDNA label separator)
	{0xE000, 0xF8FF}, // private use (and the template stand-ins)
	{0xFFF0, 0xFFFF}, // specials, U+FFFD the decoder's replacement character
}

func allowedRune(r rune) bool {
	if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || unicode.IsSpace(r) ||
		unicode.Is(unicode.Zl, r) || unicode.Is(unicode.Zp, r) || unicode.Is(unicode.Zs, r) {
		return false
	}
	for _, rg := range confusables {
		if r >= rg[0] && r <= rg[1] {
			return false
		}
	}
	return true
}

// authority normalises userinfo@host:port: one '@' at most, host lower-cased and ASCII, an IPv4
// host in dotted-decimal form and an IPv6 one compressed, the port as its number, an empty or
// default port and empty user information dropped (host.go).
func authority(scheme, a string, tmpl bool) (string, error) {
	a, err := pctNormalize(a)
	if err != nil {
		return "", err
	}
	user, host := "", a
	if i := strings.IndexByte(a, '@'); i >= 0 {
		if strings.Count(a, "@") > 1 {
			return "", refuse("more than one '@' in the authority")
		}
		user, host = a[:i+1], a[i+1:]
	}
	port := ""
	if strings.HasPrefix(host, "[") {
		end := strings.IndexByte(host, ']')
		if end < 0 {
			return "", refuse("unclosed IP literal")
		}
		host, port = host[:end+1], host[end+1:]
		if port != "" && port[0] != ':' {
			return "", refuse("text after an IP literal")
		}
	} else if i := strings.IndexByte(host, ':'); i >= 0 {
		host, port = host[:i], host[i:]
	}
	port, err = normPort(scheme, strings.TrimPrefix(port, ":"))
	if err != nil {
		return "", err
	}
	inLiteral := strings.HasPrefix(host, "[")
	for _, r := range host {
		switch {
		case tmpl && r >= placeholder && r < placeholder+maxExpressions:
		case r >= utf8.RuneSelf:
			return "", refuse("non-ASCII host")
		case r == '%':
			return "", refuse("percent-encoding in the host")
		case (r == '[' || r == ']') && !inLiteral:
			return "", refuse("'[' or ']' outside an IP literal")
		}
	}
	for _, r := range user {
		if r == '[' || r == ']' {
			return "", refuse("'[' or ']' in the user information")
		}
	}
	if strings.HasSuffix(host, ".") {
		return "", refuse("host ends in '.'")
	}
	host = strings.ToLower(host)
	switch {
	case host == "" && special[scheme]:
		// A WHATWG parser skips every '/' after a special scheme: http:///h/x is http://h/x.
		return "", refuse("a " + scheme + " URI needs a host")
	case scheme == "file" && host == "localhost":
		host = "" // RFC 8089 §2: the same file as file:///p
	case inLiteral:
		if host, err = normIPv6(host); err != nil {
			return "", err
		}
	case (special[scheme] || scheme == "file") && !(tmpl && holdsPlaceholder(host)):
		if err := checkIPv4(host); err != nil {
			return "", err
		}
	}
	if port != "" {
		port = ":" + port
	}
	return normUser(user) + host + port, nil
}

// holdsPlaceholder reports whether s holds a template expression's stand-in: its expansion, not
// the template, is the URI a reader reads.
func holdsPlaceholder(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r >= placeholder && r < placeholder+maxExpressions })
}

// cleanPath collapses runs of '/', removes "." and ".." segments (RFC 3986 §5.2.4; in a
// template they are refused), and refuses a ".." above the root and other dot-only segments.
func cleanPath(p string, tmpl bool) (string, error) {
	if p == "" {
		return p, nil
	}
	abs := p[0] == '/'
	segs := strings.Split(p, "/")
	if abs {
		segs = segs[1:]
	}
	out := make([]string, 0, len(segs))
	trailing := false // the path ends in "/" (or in a dot segment, which means the same)
	for i, seg := range segs {
		last := i == len(segs)-1
		switch {
		case seg == "":
			trailing = last && len(out) > 0
			if last && len(out) == 0 && abs {
				trailing = false
			}
			continue
		case seg == "." || seg == "..":
			if tmpl {
				return "", refuse("a dot segment in a template")
			}
			if seg == ".." {
				if len(out) == 0 {
					return "", refuse("'..' above the root")
				}
				out = out[:len(out)-1]
			}
			trailing = last
			continue
		case dotLike(seg):
			return "", refuse("a dot-only path segment")
		}
		out = append(out, seg)
		trailing = false
	}
	var b strings.Builder
	b.Grow(len(p))
	if abs {
		b.WriteByte('/')
	}
	b.WriteString(strings.Join(out, "/"))
	if trailing && len(out) > 0 {
		b.WriteByte('/')
	}
	return b.String(), nil
}

// dotLike reports a segment (of a path, or a run of the query or fragment) that is, or that
// some reader takes for, a dot segment: one that holds a dot and nothing but dots and blanks
// before the first parameter, stream or query delimiter, raw or percent-encoded.
//
//   - Blanks are ' ' ("%20") and '+', which form decoding reads as a space: Windows drops the
//     trailing dots and spaces of a name, so "...", "..%20" and ".%20." are "." or "..", and
//     readers that trim a name drop leading ones too.
//   - After the dots, ';' starts a path parameter, which Java servlet containers drop ("..;x" is
//     ".."); a backend that percent-decodes before it drops parameters reads "..%3Bx" the same.
//     ':' starts an NTFS stream name ("x::$DATA" is x), and "%3F" and "%23" end the path for
//     a backend that decodes and then parses again.
//
// Escapes are compared by their decoded byte, so the hex digits may be of either case.
func dotLike(seg string) bool {
	dot := false
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		if c == '%' {
			d, ok := hexByte(seg, i)
			if !ok {
				return false
			}
			c = d
			i += 2
		}
		switch c {
		case '.':
			dot = true
		case ' ', '+':
		case ';', ':', '?', '#':
			return dot
		default:
			return false
		}
	}
	return dot
}

// dotRun reports whether s holds a run standing alone between delimiters that is, or that some
// reader takes for, a dot segment (dotLike), which a backend that takes a path from the query
// or fragment would read as one.
func dotRun(s string) bool {
	start := 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && (s[i] >= utf8.RuneSelf || isUnreserved(s[i]) || s[i] == '%') {
			continue
		}
		if dotLike(s[start:i]) {
			return true
		}
		start = i + 1
	}
	return false
}

func isAlpha(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isAlnum(c byte) bool { return isAlpha(c) || '0' <= c && c <= '9' }

func isUnreserved(c byte) bool {
	return isAlnum(c) || c == '-' || c == '.' || c == '_' || c == '~'
}
