package guardrails

import (
	"bytes"
	"encoding/base64"
	"math"
)

// The entropy check: a token of random-looking base64 that no credential format (secrets.go)
// names, and that is neither a published content hash nor a name made of words.

const (
	minEntropyLen = 20
	maxEntropyLen = 256
)

// entropy reports the run of base64 characters that starts the token t[i:j] when it is long and
// random-looking (randomRun), unless it is a published content hash or a name made of words.
func (s *textScan) entropy(i, j int) {
	t := s.t
	e := i
	for e < j && s.tb.cls[t[e]]&clsB64 != 0 {
		e++
	}
	n := e - i
	if n < minEntropyLen || n > maxEntropyLen || (e < j && t[e] != '.' && t[e] != '=' && t[e] != '~') {
		return
	}
	// Only a run random enough to report is judged further: what is published or named is
	// not a secret, however random it looks.
	if s.tb.randomRun(t[i:e]) && !publishedDigest(t, i, e) && !joseHeader(t, i, e) && !identifier(t[i:e]) {
		s.found(DetHighEntropy, i, e)
	}
}

// randomRun reports whether the run r of base64 characters (minEntropyLen to maxEntropyLen
// long) mixes upper- and lower-case letters and digits, and its Shannon entropy per character
// is near the most its length allows.
func (tb *tables) randomRun(r []byte) bool {
	var up, lo, di int
	for _, c := range r {
		switch {
		case isUpper(c):
			up++
		case isLower(c):
			lo++
		case isDigit(c):
			di++
		}
	}
	if up < 2 || lo < 2 || di < 2 {
		return false
	}
	var counts [128]uint16
	for _, c := range r {
		counts[c]++
	}
	sum := 0.0
	for _, c := range counts {
		if c > 0 {
			sum += tb.plogp[c]
		}
	}
	n := len(r)
	h := math.Log2(float64(n)) - sum/float64(n)
	return h >= entropyThreshold(n)
}

// entropyThreshold is the entropy per character a run of n characters must reach: 90% of the
// most n distinct characters give (log2 n), at most 4.8 bits (random base64 of 40 characters
// is near 5).
func entropyThreshold(n int) float64 {
	return min(0.9*math.Log2(float64(n)), 4.8)
}

// digestLabels are the names under which a content hash is published with its algorithm: the
// hashes of Subresource Integrity and npm, pnpm and yarn lock files ("sha512-…"), of Nix
// ("sha256-…"), of Go's go.sum ("h1:…", SHA-256), and the algorithm-prefixed forms
// ("sha256:…", "sha256=…"). b64 is the length of the digest in base64 without padding.
var digestLabels = []struct {
	name string
	b64  int
}{
	{"sha1", 27}, {"sha256", 43}, {"sha384", 64}, {"sha512", 86}, {"h1", 43},
}

// publishedDigest reports whether the base64 run t[i:e] is a content hash named by its
// algorithm: "<alg>-<digest>" within the run, or "<alg>:" or "<alg>=" just before it, with a
// digest of exactly that algorithm's length (a hash is public: it identifies content, it opens
// nothing).
func publishedDigest(t []byte, i, e int) bool {
	for _, d := range digestLabels {
		switch {
		case hasPrefix(t, i, d.name) && i+len(d.name) < e && t[i+len(d.name)] == '-':
			if e-i-len(d.name)-1 == d.b64 && digestEnd(t, e) {
				return true
			}
		case i > len(d.name) && (t[i-1] == ':' || t[i-1] == '=') && e-i == d.b64 && digestEnd(t, e):
			l := i - 1 - len(d.name)
			if hasPrefix(t, l, d.name) && (l == 0 || !isAlnum(t[l-1])) {
				return true
			}
		}
	}
	return false
}

// digestEnd reports whether a base64 digest may end at t[e]: padding or anything that is not
// base64.
func digestEnd(t []byte, e int) bool {
	return e >= len(t) || t[e] == '=' || !(isAlnum(t[e]) || t[e] == '+' || t[e] == '/' || t[e] == '_' || t[e] == '-')
}

// joseHeader reports whether the base64 run t[i:e] is the header of a JWS or JWT that stands
// without a token's claims and signature (a DPoP proof's header quoted in a log, a test's or a
// fuzz seed's "header.e30.AA"): base64url of a JSON object naming an "alg". A header is public
// by design (RFC 7515: its members name the algorithm, the type and the public key); in a whole
// token, a payload of ten characters or more and a signature after it as the jwt detector reads
// one, the run is left to the check. A JSON object that holds a private or symmetric key's
// members ("d", "k", the RSA primes) is not a header.
func joseHeader(t []byte, i, e int) bool {
	if !hasPrefix(t, i, "eyJ") || wholeToken(t, e) {
		return false
	}
	var buf [maxEntropyLen * 3 / 4]byte
	n, err := base64.RawURLEncoding.Decode(buf[:], t[i:e])
	obj := bytes.TrimSpace(buf[:n])
	if err != nil || len(obj) < 2 || obj[len(obj)-1] != '}' || !bytes.Contains(obj, []byte(`"alg"`)) {
		return false
	}
	for _, m := range privateJWKMembers {
		if bytes.Contains(obj, []byte(m)) {
			return false
		}
	}
	return true
}

// wholeToken reports whether a header that ends at t[e] goes on as a token: a '.', a payload of
// ten base64url characters or more, and a '.' before the signature.
func wholeToken(t []byte, e int) bool {
	if e >= len(t) || t[e] != '.' {
		return false
	}
	p := run(t, e+1, maxMatch, isTokenB64u)
	return p-e-1 >= 10 && p < len(t) && t[p] == '.'
}

// privateJWKMembers are the members of a JSON Web Key that hold private or symmetric key
// material (RFC 7518, section 6).
var privateJWKMembers = []string{`"d"`, `"k"`, `"p"`, `"q"`, `"dp"`, `"dq"`, `"qi"`, `"oth"`}

// identifier reports whether the run r is a name made of words, as code and logs write them:
// joined by case changes ("BenchmarkToolsList20x100", "getHTTPResponse2xxCount"), underscores,
// dashes or slashes, with numbers and their units between them ("8KiB", "10k", "20x100"). Every
// run of letters must read as a word (wordLike), be a unit after a number or a lone letter
// between digits or separators, and three letters in four must be in words of three letters or
// more (or common acronyms): random base64 seldom does, its case changes every few characters
// and leaves lone letters (TestEntropyKeepsRandomTokens measures how seldom).
func identifier(r []byte) bool {
	letters, words := 0, 0
	for k := 0; k < len(r); {
		if !isLetter(r[k]) {
			k++
			continue
		}
		e := unitEnd(r, k)
		if e == k {
			e = wordPartEnd(r, k)
		}
		letters += e - k
		switch {
		case k > 0 && isDigit(r[k-1]) && e-k <= 3:
			// A unit, or a lone letter after a number ("20x100").
		case e-k == 1:
			if (k > 0 && isLetter(r[k-1])) || (e < len(r) && isLetter(r[e])) {
				return false
			}
		case !wordLike(r[k:e]):
			return false
		case e-k >= 3 && (!isUpper(r[e-1]) || oneOf(r[k:e], acronyms)):
			words += e - k
		}
		k = e
	}
	return words >= 12 && 4*words >= 3*letters
}

// acronyms are the upper-case words of three letters or more that names in code commonly hold,
// in lower case (oneOf): other runs of capitals are not counted as words, random base64 has many.
var acronyms = []string{"api", "aws", "cli", "cpu", "csv", "dns", "gcp", "gpu", "grpc", "html", "http", "https",
	"json", "jwk", "jwt", "lru", "mcp", "oidc", "pdf", "ram", "rpc", "sdk", "sql", "ssh", "ssl", "tcp", "tls",
	"ttl", "udp", "uri", "url", "utf", "uuid", "xml", "yaml"}

// unitEnd returns the end of the unit of a number that starts at the letter r[k] after a digit
// ("k" of "10kGet", "KiB" of "8KiBRead", "xx" of "2xxCount"): up to three letters that a
// lower-case letter does not continue. It returns k when there is none.
func unitEnd(r []byte, k int) int {
	if k == 0 || !isDigit(r[k-1]) {
		return k
	}
	for n := min(3, len(r)-k); n > 0; n-- {
		e := k + n
		if all(r[k:e], isLetter) && (e == len(r) || !isLower(r[e])) {
			return e
		}
	}
	return k
}

// wordPartEnd returns the end of the word that starts at the letter r[k]: an upper-case letter
// and the lower-case ones after it ("Tools"), a run of lower-case letters ("get"), or a run of
// upper-case letters less the last one when lower-case follows ("HTTP" of "HTTPResponse").
func wordPartEnd(r []byte, k int) int {
	e := k + 1
	if isUpper(r[k]) && e < len(r) && isUpper(r[e]) {
		for e < len(r) && isUpper(r[e]) {
			e++
		}
		if e < len(r) && isLower(r[e]) && e-k > 1 {
			e--
		}
		return e
	}
	for e < len(r) && isLower(r[e]) {
		e++
	}
	return e
}

// wordLike reports whether the letters w read as a word or an acronym: an acronym is up to five
// upper-case letters; a word has a vowel and no more than four consonants in a row.
func wordLike(w []byte) bool {
	if len(w) <= 5 && all(w, isUpper) {
		return true
	}
	vowels, run := 0, 0
	for _, c := range w {
		switch lower(c) {
		case 'a', 'e', 'i', 'o', 'u', 'y':
			vowels++
			run = 0
		default:
			if run++; run > 4 {
				return false
			}
		}
	}
	return vowels > 0
}
