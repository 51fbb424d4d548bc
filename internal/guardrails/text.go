package guardrails

import (
	"unicode"
	"unicode/utf8"

	"github.com/mcp-gateway/gateway/internal/pins"
)

// The text scanner: one pass over a string's text (decoded from JSON) that runs every enabled
// content detector. Most bytes cost one table load. Detectors start from a token (a run of
// [A-Za-z0-9_./+~%-]: a key, a word, a number, a path), from an anchor byte outside a token
// ('@', ':', '=', '<', '[', '('), or from a byte that is not printable ASCII. Each match is
// bounded in length, so a text can be scanned in windows (walk.go) with a fixed overlap.

// maxMatch bounds the length of one match (a private key block's is the longest); windows
// overlap by it.
const maxMatch = 16 << 10

// textScan is the state of one scan of one text.
type textScan struct {
	t     []byte
	tb    *tables
	on    detSet
	hosts *hostSet
	// limit: matches starting at or after it belong to the next window.
	limit int
	// emit records a match of det over t[start:end].
	emit func(det Detector, start, end int)
	// noEmail: an '@' before it belongs to a URL's authority (user:password@host), not an
	// address.
	noEmail int
	// allowed is the last host found allowed (allowedLen bytes; none when 0): a text's links
	// are mostly to one host, which is then not matched again. Reset with hosts.
	allowed    [64]byte
	allowedLen int
}

// allows reports whether the host of a link is allowed.
func (s *textScan) allows(host []byte) bool {
	if s.allowedLen > 0 && string(host) == string(s.allowed[:s.allowedLen]) {
		return true
	}
	if !s.hosts.allows(host) {
		return false
	}
	if len(host) <= len(s.allowed) {
		s.allowedLen = copy(s.allowed[:], host)
	}
	return true
}

// found records a match unless it belongs to the next window.
func (s *textScan) found(det Detector, start, end int) {
	if start < s.limit && end > start {
		s.emit(det, start, end)
	}
}

// run scans the whole text.
func (s *textScan) run() {
	t, tb := s.t, s.tb
	phrases := s.on.has(DetInstructions)
	for i := 0; i < len(t); {
		k := tb.cls[t[i]]
		if k&clsWord == 0 {
			switch {
			case k == 0:
				i++
			case k&clsOther != 0:
				i = s.unicode(i)
			default:
				i = s.anchor(i)
			}
			continue
		}
		j, m := i+1, k
		for j < len(t) {
			c := tb.cls[t[j]]
			if c&clsWord == 0 {
				break
			}
			m |= c
			j++
		}
		switch {
		case k&clsLetter != 0 && (j-i < shortWord[k&clsUpper] || !tb.wordMay(t, i, j, k&clsUpper != 0)):
			// A word no format that starts with a letter can match (most of prose): only an
			// instruction-like phrase may start there.
			// mayStartPhrase, its first two looks inlined.
			if phrases && j-i >= 2 && tb.phraseRowHas(t[i], t[i+1]) && tb.phraseTriHas(t, i, j) &&
				tb.phraseWordMay(t, i) {
				s.phrase(i, j)
			}
		case k&clsDigit != 0 && j-i < minEntropyLen && !cardMay(t, i, j) && !phoneMay(t, i):
			// A number that starts neither a card nor a phone number: a count, a date, a time.
		default:
			e := s.token(i, j, m)
			if e == j && m&clsSep != 0 {
				e = s.inner(i, j)
			}
			i = e
			continue
		}
		if m&clsSep != 0 {
			// A path, a host name, a compound name: a format may start after a separator.
			if e := s.inner(i, j); e > j {
				i = e
				continue
			}
		}
		// The space after a word, most often, is passed over here.
		if i = j; i < len(t) && t[i] == ' ' {
			i++
		}
	}
}

// wordMay reports whether a detector other than the phrases may match at the token t[i:j],
// which starts with a letter (upper case when upper), from its length and first bytes: a
// prefixed format (token's lowerSecret and upperSecret), an IBAN (iban: two letters and two
// digits), an Azure secret or a high-entropy token (20 bytes at least).
func (tb *tables) wordMay(t []byte, i, j int, upper bool) bool {
	n := j - i
	switch {
	case n >= minEntropyLen:
		return true
	case !upper:
		return n >= 8 && tb.maybePrefixed(t[i], t[i+1])
	}
	return (n >= 16 && tb.maybePrefixed(t[i], t[i+1])) || (n >= 4 && isUpper(t[i+1]) && isDigit(t[i+2]) && isDigit(t[i+3]))
}

// entropyClasses are the classes a token the entropy check reports holds.
const entropyClasses = clsUpper | clsLower | clsDigit

// shortWord is, by whether a token starts with an upper-case letter (clsUpper) or a lower-case
// one, the length from which a detector other than the phrases may match it: a lower-case
// prefixed format is 8 bytes at least, an upper-case one 16 and an IBAN 15, but an IBAN is
// tried from 4 (its country code and check digits), entropy and Azure secrets from 20 and 37.
var shortWord = [clsUpper + 1]int{0: 8, clsUpper: 4}

// token runs the detectors that start from the token t[i:j], whose bytes hold the classes m, and
// returns where scanning goes on: after the token, or after a match that ends elsewhere (a card
// number's digit groups).
func (s *textScan) token(i, j int, m uint16) int {
	t := s.t
	c := t[i]
	switch {
	case c >= 'a' && c <= 'z':
		if j-i >= 8 && s.tb.maybePrefixed(c, t[i+1]) && s.on.any(lowerPrefixed) {
			if e := s.lowerSecret(i, j); e > i {
				return e
			}
		}
		if j-i >= 2 && s.on.has(DetInstructions) && s.tb.mayStartPhrase(t, i, j) {
			s.phrase(i, j)
		}
	case c >= 'A' && c <= 'Z':
		if j-i >= 16 && s.tb.maybePrefixed(c, t[i+1]) && s.on.any(upperPrefixed) {
			if e := s.upperSecret(i, j); e > i {
				return e
			}
		}
		if s.on.has(DetIBAN) && j-i >= 4 {
			if e := s.iban(i); e > i {
				return e
			}
		}
		if j-i >= 2 && s.on.has(DetInstructions) && s.tb.mayStartPhrase(t, i, j) {
			s.phrase(i, j)
		}
	case c >= '0' && c <= '9':
		if e := s.number(i, j); e > i {
			return e
		}
	case c == '+':
		if s.on.has(DetPhone) {
			if e := s.phone(i); e > i {
				return e
			}
		}
	case c == '-':
		if s.on.has(DetPrivateKey) && j-i >= 10 {
			if e := s.privateKey(i); e > i {
				return e
			}
		}
	}
	if j-i >= 37 && s.on.has(DetAzureClientSecret) && s.azureClientSecret(i, j) {
		return j
	}
	// A random-looking token mixes upper- and lower-case letters and digits (entropy).
	if j-i >= minEntropyLen && m&entropyClasses == entropyClasses && s.on.has(DetHighEntropy) {
		s.entropy(i, j)
	}
	return j
}

// inner runs, at each place inside the token t[i:j] that follows a separator (clsSep: '/', '.',
// '-', '_', '+', '~', '%', or a percent-encoded byte) and holds a letter or a digit, the detectors of the formats that
// start a token: a credential in a URL's path (https://host/AKIA…), a key after a file name's
// dot or a name's underscore, a card number in a path is what the backend or the client reads
// as that credential or number. The phrases, the entropy check and the Azure secret keep to
// whole tokens. It returns where scanning goes on: j, or past a match that ends beyond it (a
// card number's digit groups).
func (s *textScan) inner(i, j int) int {
	t, cls := s.t, &s.tb.cls
	for k := i; k < j-1; k++ {
		if cls[t[k]]&clsSep == 0 {
			continue
		}
		// t[k] is a separator: a format may start after it, and after a percent-encoded
		// byte (%2F, %3D, %22: a slash, an equals sign, a quote in a query or an encoded
		// redirect), which is one separator too.
		n, e := k+1, k+1
		if s.tb.mayFormatAt(t, n, j) {
			e = s.formatAt(n, j)
		}
		if e <= n {
			if t[k] != '%' || !pctEncoded(t, k, j) {
				continue
			}
			if e = s.afterPct(k, j); e <= k+3 {
				continue
			}
		}
		if e >= j {
			return e
		}
		k = e - 2 // the next separator may be the match's last byte
	}
	return j
}

// afterPct runs, after the percent-encoded byte t[k:k+3] inside the token that ends at j, the
// detectors of the formats that may start there: an e-mail address's domain after "%40" (an
// encoded '@'), or what innerAt runs.
func (s *textScan) afterPct(k, j int) int {
	if t := s.t; k+3 < j && t[k+1] == '4' && t[k+2] == '0' {
		return s.formatAt(k+3, j)
	}
	return s.innerAt(k+3, j)
}

// innerAt runs formatAt at t[n], inside the token that ends at j, if its first bytes say a
// format may start there, as inner does after a separator, and returns the end of a match (n
// when none).
func (s *textScan) innerAt(n, j int) int {
	if n >= j || !s.tb.mayFormatAt(s.t, n, j) {
		return n
	}
	return s.formatAt(n, j)
}

// mayFormatAt reports whether a format may start at t[n], inside a token that ends at j, from
// its first bytes: what formatAt's detectors need before they read further.
func (tb *tables) mayFormatAt(t []byte, n, j int) bool {
	switch c := t[n]; {
	case isLower(c):
		return j-n >= 8 && tb.maybePrefixed(c, t[n+1])
	case isUpper(c):
		return j-n >= 4
	case isDigit(c):
		return cardMay(t, n, j) || phoneMay(t, n)
	}
	return false
}

// formatAt runs the detectors of the formats that may start at t[k], inside the token that
// ends at j, and returns the end of a match (k when none).
func (s *textScan) formatAt(k, j int) int {
	t := s.t
	if k >= 3 && t[k-3] == '%' && t[k-2] == '4' && t[k-1] == '0' && s.on.has(DetEmail) && k-3 >= s.noEmail {
		// An address whose '@' is percent-encoded (?to=maria%40example.com): the query or
		// path it is in is decoded before it is used.
		if e := s.emailAt(k-3, 3); e > k {
			return e
		}
	}
	switch c := t[k]; {
	case isLower(c):
		if j-k >= 8 && s.tb.maybePrefixed(c, t[k+1]) && s.on.any(lowerPrefixed) {
			return s.lowerSecret(k, j)
		}
	case isUpper(c):
		if j-k >= 16 && s.tb.maybePrefixed(c, t[k+1]) && s.on.any(upperPrefixed) {
			if e := s.upperSecret(k, j); e > k {
				return e
			}
		}
		if s.on.has(DetIBAN) && j-k >= 4 {
			return s.iban(k)
		}
	default:
		return s.number(k, j)
	}
	return k
}

// anchor runs the detectors that start from the anchor byte t[i].
func (s *textScan) anchor(i int) int {
	t := s.t
	switch t[i] {
	case '@':
		if s.on.has(DetEmail) && i >= s.noEmail {
			return s.email(i)
		}
	case ':':
		if a := webAuthority(t, i); a > 0 {
			return s.url(i, a)
		}
		if i+2 < len(t) && t[i+1] == '/' && t[i+2] == '/' {
			return s.url(i, i+3)
		}
		if i+1 < len(t) && t[i+1] == '\\' && hasPrefix(t, i+1, `\/\/`) {
			// https:\/\/host: a URL in JSON escaped twice (PHP's json_encode escapes every
			// slash), which whoever reads the text once more reads as https://host.
			return s.url(i, i+5)
		}
		if s.on.any(assignmentDets) {
			s.assignment(i)
		}
	case '=':
		if s.on.any(assignmentDets) {
			s.assignment(i)
		}
	case '<', '[':
		if t[i] == '<' && s.on.any(assignmentDets) {
			s.element(i)
		}
		if s.on.has(DetInstructions) {
			if e := s.marker(i); e > i {
				return e
			}
		}
	case '(':
		if s.on.has(DetPhone) {
			if e := s.phone(i); e > i {
				return e
			}
		}
	case '\\':
		return escapeEnd(t, i)
	}
	return i + 1
}

// escapeEnd returns the end of the escape written out in text at t[i] ('\\'): a JSON or C
// escape of a control character (\n, \t, \r, \b, \f) or a \uXXXX escape. Text that was
// escaped twice (JSON inside a JSON string, a log line quoting a string, source code) holds
// them, and whoever reads that text once more reads a line break or a quote there, then the
// token after it (\nAKIA… is a key on a new line): the token begins after the escape, not at
// its letter. Any other backslash is passed over alone.
func escapeEnd(t []byte, i int) int {
	if i+1 >= len(t) {
		return i + 1
	}
	switch t[i+1] {
	case 'n', 't', 'r', 'b', 'f':
		return i + 2
	case 'u':
		if i+5 < len(t) && isHex(t[i+2]) && isHex(t[i+3]) && isHex(t[i+4]) && isHex(t[i+5]) {
			return i + 6
		}
	}
	return i + 1
}

// pctEncoded reports whether t[k:j] starts with a percent-encoded byte (%XX).
func pctEncoded(t []byte, k, j int) bool {
	return k+2 < j && t[k] == '%' && isHex(t[k+1]) && isHex(t[k+2])
}

// unicode judges the code point at t[i] (not printable ASCII) and, when it is invisible, the
// run of invisible code points of the same detector that it starts.
func (s *textScan) unicode(i int) int {
	t := s.t
	r, n := utf8.DecodeRune(t[i:])
	if !s.on.any(unicodeDets) || !s.tb.candidate(r) {
		return i + n
	}
	prev, _ := utf8.DecodeLastRune(t[:i])
	if i == 0 {
		prev = -1
	}
	det, ok := s.invisibleAt(r, prev, i+n)
	if !ok {
		return i + n
	}
	end := i + n
	for end < len(t) {
		r2, n2 := utf8.DecodeRune(t[end:])
		prevR, _ := utf8.DecodeLastRune(t[:end])
		if !s.tb.candidate(r2) {
			break
		}
		if d2, ok := s.invisibleAt(r2, prevR, end+n2); !ok || d2 != det {
			break
		}
		end += n2
	}
	if s.on.has(det) {
		s.found(det, i, end)
	}
	return end
}

// invisibleAt classifies r, whose neighbours are prev and the code point at t[next].
func (s *textScan) invisibleAt(r, prev rune, next int) (Detector, bool) {
	nr := rune(-1)
	if next < len(s.t) {
		nr, _ = utf8.DecodeRune(s.t[next:])
	}
	if r == zwj && emojiBefore(prev) && nr >= 0 && unicode.Is(unicode.So, nr) {
		// One joiner inside an emoji sequence ("👨‍👩‍👧", "🏳️‍🌈") is how such emoji are
		// written; a run of joiners, or one between letters, is still a finding.
		return 0, false
	}
	kind, bad := pins.ClassifyRune(r, prev, nr)
	if !bad {
		return 0, false
	}
	if kind == pins.InvisibleBidi {
		return DetBidi, true
	}
	return DetInvisible, true
}

// zwj is U+200D ZERO WIDTH JOINER.
const zwj = 0x200D

// emojiBefore reports whether r may end the emoji a joiner follows: a symbol, the emoji
// presentation selector, or a skin tone modifier.
func emojiBefore(r rune) bool {
	return r == 0xFE0F || (r >= 0x1F3FB && r <= 0x1F3FF) || (r >= 0 && unicode.Is(unicode.So, r))
}

// Detector groups by where they start.
var (
	lowerPrefixed = setOf(DetGitHubToken, DetGitLabToken, DetSlackToken, DetStripeKey, DetOpenAIKey,
		DetAnthropicKey, DetGCPOAuthToken, DetJWT)
	upperPrefixed  = setOf(DetAWSAccessKey, DetGCPAPIKey, DetPrivateKey)
	assignmentDets = setOf(DetConnectionString, DetAzureStorageKey, DetAzureSASToken, DetAWSSecretKey)
	unicodeDets    = setOf(DetInvisible, DetBidi)
)

// Character tests for ASCII bytes.

func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isHex(c byte) bool    { return isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'f') }
func isUpper(c byte) bool  { return c >= 'A' && c <= 'Z' }
func isLower(c byte) bool  { return c >= 'a' && c <= 'z' }
func isLetter(c byte) bool { return isUpper(c) || isLower(c) }
func isAlnum(c byte) bool  { return isLetter(c) || isDigit(c) }
func lower(c byte) byte {
	if isUpper(c) {
		return c + 'a' - 'A'
	}
	return c
}

// hasPrefix reports whether t[i:] starts with p.
func hasPrefix(t []byte, i int, p string) bool {
	return len(t)-i >= len(p) && string(t[i:i+len(p)]) == p
}

// run returns the end of the run of bytes starting at i for which ok holds, at most max long.
func run(t []byte, i, max int, ok func(byte) bool) int {
	j := i
	for j < len(t) && j-i < max && ok(t[j]) {
		j++
	}
	return j
}

// boundary reports whether no alphanumeric byte is at t[i] (the end of a match).
func boundary(t []byte, i int) bool { return i >= len(t) || !isAlnum(t[i]) }

// element matches the text of an XML element at t[i] ('<') whose name names a secret, as
// assignment does a key's value: <password>…</password> in Maven's settings.xml, Tomcat's and
// many servers' configuration files is the password the server reads.
func (s *textScan) element(i int) {
	t := s.t
	ne := i + 1
	for ne < len(t) && ne-i <= 40 && (isAlnum(t[ne]) || t[ne] == '_' || t[ne] == '-' || t[ne] == '.') {
		ne++
	}
	if ne == i+1 || ne >= len(t) || t[ne] != '>' {
		return
	}
	det, ok := assignedSecret(t[i+1:ne], ':')
	if !ok || !s.on.has(det) {
		return
	}
	vs := ne + 1
	ve := vs
	for ve < len(t) && ve-vs < 512 && t[ve] != '<' && t[ve] != '\n' {
		ve++
	}
	if hasPrefix(t, ve, "</") && plausibleValue(det, t[vs:ve]) && !workingDir(t[i+1:ne], t[vs:ve]) {
		s.found(det, vs, ve)
	}
}
