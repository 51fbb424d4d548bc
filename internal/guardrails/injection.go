package guardrails

import (
	"strings"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/resuri"
	"github.com/mcp-gateway/gateway/internal/weburl"
)

// The injection detectors beyond invisible code points (text.go): instruction-like text aimed
// at the model, chat-template and role markers, and links to hosts not allowed. The phrases are
// a short list of the forms tool-poisoning and indirect prompt injection reports use; they are
// matched on whole words, without regard to case, with up to a few filler words in between.

// Word lists of the phrases.
var (
	overrideVerbs = []string{"ignore", "disregard", "forget", "override", "bypass"}
	overrideFill  = []string{"all", "any", "the", "your", "my", "of", "these", "those", "previous", "prior",
		"above", "earlier", "preceding", "past", "system", "original", "initial", "existing", "other",
		"every", "and", "or", "developer", "safety", "current"}
	overrideNouns = []string{"instructions", "instruction", "prompts", "prompt", "directions", "directives",
		"rules", "guidelines", "guidance", "context", "messages", "commands", "constraints", "guardrails"}
	hideVerbs    = []string{"tell", "inform", "mention", "reveal", "disclose", "show", "notify", "alert", "let"}
	hideFill     = []string{"this", "it", "anything", "to", "about", "that", "the", "any", "of", "your"}
	withoutVerbs = []string{"telling", "informing", "notifying", "asking", "alerting", "letting", "showing"}
	userWords    = []string{"user", "users", "human", "humans"}
	noteWords    = []string{"note", "attention", "message", "reminder", "instructions", "instruction"}
	modelWords   = []string{"ai", "assistant", "llm", "model", "agent", "chatbot", "claude", "chatgpt", "gpt",
		"copilot", "gemini"}
	roleWords = []string{"human", "assistant", "system"}
	// markerTags are tags a model's chat format or a tool-poisoning payload uses to pass text
	// off as the system's or as a tool's own frame.
	markerTags = []string{"system", "important", "instructions", "instruction", "tool_call", "tool_result",
		"function_calls", "function_results", "system_prompt"}
)

// minWebhookPath is the shortest path after /services/ a Slack webhook has.
const minWebhookPath = 20

// phrase matches an instruction-like phrase starting at the word t[i:j].
func (s *textScan) phrase(i, j int) {
	t := s.t
	we := wordEnd(t, i)
	w := t[i:we]
	var e int
	switch {
	case oneOf(w, overrideVerbs):
		e = s.afterFill(we, overrideFill, 4, overrideNouns)
	case eqFold(w, "do") || eqFold(w, "never") || eqFold(w, "don't") || eqFold(w, "dont"):
		k := we
		if eqFold(w, "do") {
			k = s.expect(we, []string{"not"})
		}
		if k > 0 {
			if k = s.expect(k, hideVerbs); k > 0 {
				e = s.afterFill(k, hideFill, 3, userWords)
			}
		}
	case eqFold(w, "without"):
		if k := s.expect(we, withoutVerbs); k > 0 {
			e = s.afterFill(k, []string{"the", "any", "of"}, 2, userWords)
		}
	case oneOf(w, noteWords):
		e = s.afterFill(we, []string{"to", "for", "the", "all", "any", "dear"}, 3, modelWords)
		if e > 0 && !s.addressed(e) {
			e = 0
		}
	case eqFold(w, "new") || eqFold(w, "updated"):
		if k := s.expect(we, []string{"instructions", "instruction"}); k > 0 && k < len(t) && t[k] == ':' {
			e = k + 1
		}
	case oneOf(w, roleWords):
		// A turn marker of a chat transcript: "\n\nHuman:", "\n\nAssistant:".
		if i >= 2 && t[i-1] == '\n' && t[i-2] == '\n' && we < len(t) && t[we] == ':' {
			e = we + 1
		}
	}
	if e > 0 {
		s.found(DetInstructions, i, e)
	}
}

// addressed reports whether the model's name that ends at t[k] ends a heading that addresses
// the model ("Note to the AI:", "Instructions for AI Agents:", "Attention, assistant!"): a
// colon, an exclamation mark or a spaced dash follows it, after at most one more name of a
// model, plural or not. Prose that speaks about the model ("descriptions are instructions to
// the model and promises to the user") goes on with its sentence.
func (s *textScan) addressed(k int) bool {
	t := s.t
	if k+1 < len(t) && t[k] == ' ' && isLetter(t[k+1]) {
		we := wordEnd(t, k+1)
		w := t[k+1 : we]
		if len(w) > 1 && lower(w[len(w)-1]) == 's' {
			w = w[:len(w)-1]
		}
		if oneOf(w, modelWords) {
			k = we
		}
	}
	if k < len(t) && (t[k] == ':' || t[k] == '!') {
		return true
	}
	return k+1 < len(t) && t[k] == ' ' && (t[k+1] == '-' || hasPrefix(t, k+1, "\u2014"))
}

// marker matches a chat-template or role marker at the '<' or '[' at t[i]: "<|name|>",
// "<<SYS>>", "[INST]", or one of markerTags as an opening or closing tag.
func (s *textScan) marker(i int) int {
	t := s.t
	var e int
	switch {
	case hasPrefix(t, i, "[INST]"):
		e = i + 6
	case hasPrefix(t, i, "[/INST]"):
		e = i + 7
	case hasPrefix(t, i, "<<SYS>>"):
		e = i + 7
	case hasPrefix(t, i, "<</SYS>>"):
		e = i + 8
	case hasPrefix(t, i, "<|"):
		k := run(t, i+2, 32, func(c byte) bool { return isLower(c) || c == '_' || isDigit(c) })
		if k > i+3 && hasPrefix(t, k, "|>") {
			e = k + 2
		}
	case t[i] == '<':
		k := i + 1
		if k < len(t) && t[k] == '/' {
			k++
		}
		n := run(t, k, 32, func(c byte) bool { return isLetter(c) || c == '_' })
		if n < len(t) && t[n] == '>' && oneOf(t[k:n], markerTags) {
			e = n + 1
		}
	}
	if e == 0 {
		return i
	}
	s.found(DetInstructions, i, e)
	return e
}

// wordEnd is the end of the word (letters and apostrophes) at t[i].
func wordEnd(t []byte, i int) int {
	return run(t, i, 32, func(c byte) bool { return isLetter(c) || c == '\'' })
}

// nextWord skips what separates words (spaces, line breaks, a comma, a colon, a dash, quotes)
// from t[k] and returns the start and end of the word there; ok is false when there is none
// within a few bytes.
func nextWord(t []byte, k int) (start, end int, ok bool) {
	for n := 0; k < len(t) && n < 4; n++ {
		switch t[k] {
		case ' ', '\n', '\t', '\r', ',', ':', '-', '"', '\'', '*', '_':
			k++
			continue
		}
		break
	}
	if k >= len(t) || !isLetter(t[k]) {
		return 0, 0, false
	}
	return k, wordEnd(t, k), true
}

// expect returns the end of the next word after t[k] when it is one of words, else 0.
func (s *textScan) expect(k int, words []string) int {
	ws, we, ok := nextWord(s.t, k)
	if !ok || !oneOf(s.t[ws:we], words) {
		return 0
	}
	return we
}

// afterFill returns the end of the first word of last among the next max+1 words after t[k],
// when every word before it is one of fill; else 0.
func (s *textScan) afterFill(k int, fill []string, max int, last []string) int {
	for n := 0; n <= max; n++ {
		ws, we, ok := nextWord(s.t, k)
		if !ok {
			return 0
		}
		w := s.t[ws:we]
		if oneOf(w, last) {
			return we
		}
		if !oneOf(w, fill) {
			return 0
		}
		k = we
	}
	return 0
}

// eqFold reports whether w is word (lower case), ignoring ASCII case.
func eqFold(w []byte, word string) bool {
	if len(w) != len(word) {
		return false
	}
	for k := range w {
		if lower(w[k]) != word[k] {
			return false
		}
	}
	return true
}

func oneOf(w []byte, words []string) bool {
	for _, x := range words {
		if eqFold(w, x) {
			return true
		}
	}
	return false
}

// url handles the "://" at t[i] (or ":\/\/"), whose authority starts at a: a password in its
// authority (connection-string), a Slack webhook, and for http(s) a link to a host that is not
// allowed. It returns where scanning goes on: a, so the rest of the URL (a token in its query)
// is scanned too.
func (s *textScan) url(i, a int) int {
	t := s.t
	ss := i
	for ss > 0 && i-ss < 32 && (isAlnum(t[ss-1]) || t[ss-1] == '+' || t[ss-1] == '-' || t[ss-1] == '.') {
		ss--
	}
	if ss > 0 && t[ss-1] == '\\' {
		// The scheme of \nhttps://… is https: the escape's letter is not the scheme's.
		ss = min(escapeEnd(t, ss-1), i)
	}
	for ss < i && !isLetter(t[ss]) {
		ss++
	}
	ae, at, port := s.tb.authority(t, a)
	host, hostEnd := a, ae
	if at >= 0 {
		user := t[a : a+at]
		if c := indexByte(user, ':'); c >= 0 && s.on.has(DetConnectionString) {
			pw := user[c+1:]
			if len(pw) > 0 && !placeholder(pw) {
				s.found(DetConnectionString, a+c+1, a+at)
			}
		}
		host = a + at + 1
		s.noEmail = ae
	}
	switch {
	case host < ae && t[host] == '[':
		if h := hostEndAt(t, host, ae); h >= 0 {
			hostEnd = h
		}
	case port >= 0:
		hostEnd = port
	}
	if ss == i || !(eqFold(t[ss:i], "http") || eqFold(t[ss:i], "https")) {
		return a
	}
	// The URL's end is looked for only when there is a match to end: most links are to
	// allowed hosts.
	// A webhook's path names a workspace, a channel and a secret (/services/T…/B…/…): the
	// service's base URL alone, as documentation writes it, is not one.
	if s.on.has(DetSlackWebhook) && eqFold(t[host:hostEnd], "hooks.slack.com") && hasPrefix(t, ae, "/services/") {
		if ue := urlEnd(t, a, ae); ue-ae-len("/services/") >= minWebhookPath {
			s.found(DetSlackWebhook, ss, ue)
		}
	}
	if s.on.has(DetLink) {
		// Where the browser reads the host on past where prose ends it, readOn judged the whole.
		ok, end := s.readOn(host, ae)
		if !ok || end == ae && !s.allows(t[host:hostEnd]) || !s.allowsPastBackslash(a, ae) ||
			(at >= 0 && !s.allowsEntities(a, at)) {
			s.found(DetLink, ss, urlEnd(t, a, max(ae, end)))
		}
	}
	return a
}

// webAuthority returns where the authority of the http or https URL whose scheme ends at the
// colon t[i] begins, as a browser reads it, or 0 when there is none: browsers (the WHATWG URL
// standard, for the special schemes) pass over any run of slashes and backslashes after the
// colon, or none at all, so https:/host, https:\host, https:/\host, https:///host and
// https:host are all https://host. The scheme is not the end of a longer one (git+https), but
// may follow an escape written out in text (\nhttps).
func webAuthority(t []byte, i int) int {
	if i+1 >= len(t) || !(t[i+1] == '/' || t[i+1] == '\\' || isAlnum(t[i+1])) {
		return 0 // most colons: a key's, a time's, a label's
	}
	ss := i - 4
	switch {
	case i >= 5 && eqFold(t[i-5:i], "https"):
		ss = i - 5
	case i >= 4 && eqFold(t[i-4:i], "http"):
	default:
		return 0
	}
	if ss > 0 && schemeByte(t[ss-1]) && !(ss >= 2 && t[ss-2] == '\\' && escapeEnd(t, ss-2) == ss) {
		return 0
	}
	// The run is read whole, however long: it holds no colon, so no other anchor reads it.
	k := i + 1
	for k < len(t) && (t[k] == '/' || t[k] == '\\') {
		k++
	}
	switch {
	case k >= len(t):
		return 0
	case k == i+1:
		// No slash at all: a host name only (https:443 is a scheme and a port to a person, as
		// in "proto=https:443", whatever a browser makes of it).
		if isLetter(t[k]) {
			return k
		}
	case isAlnum(t[k]) || t[k] == '[':
		return k
	}
	return 0
}

// schemeByte reports whether c may be part of a URL's scheme.
func schemeByte(c byte) bool { return isAlnum(c) || c == '+' || c == '-' || c == '.' }

// allowsPastBackslash reports whether the host of the authority at t[a] is allowed as readers
// that take a backslash for part of the authority read it: for https://docs.example.com\@evil
// a browser goes to docs.example.com (the backslash ends the authority), Python's urllib to
// evil (it ends the authority at '/', '?' or '#' only, and the host follows the last '@'). ae is
// where the browser's reading of the authority ended; true when that reading is the only one.
func (s *textScan) allowsPastBackslash(a, ae int) bool {
	t := s.t
	if ae >= len(t) || t[ae] != '\\' {
		return true
	}
	at, e := -1, ae
	for ; e < len(t); e++ {
		c := t[e]
		if c == '/' || c == '?' || c == '#' || c <= ' ' || c == '"' || c == '\'' || c == '<' || c == '>' || c >= 0x7f {
			break
		}
		if e-a >= maxAuthority {
			// Longer than any host a person is sent to: an '@' further on would send that
			// reader elsewhere, and looking for it would make the scan quadratic.
			return false
		}
		if c == '@' {
			at = e
		}
	}
	if at < 0 {
		return true
	}
	host := t[at+1 : e]
	if k := indexByte(host, ':'); k >= 0 {
		host = host[:k]
	}
	return s.allows(host)
}

// maxAuthority is how many bytes of a URL's authority are read: more than any host name
// (253) with a port and user information a person would write.
const maxAuthority = 512

// authorityEnd reports whether c ends a URL's authority.
func authorityEnd(c byte) bool {
	switch c {
	case '/', '?', '#', ' ', '\t', '\n', '\r', '"', '\'', '<', '>', '`', '\\', ')', ']', '}', '|', '^', ',':
		return true
	}
	return c < 0x20 || c >= 0x7f
}

// authority reads a URL's authority from t[a], in one pass: it returns its end (at most 512
// bytes on), the offset from a of its last '@' and the first ':' after that (the start of a
// port, unless the host is an IPv6 literal), each -1 when absent.
func (tb *tables) authority(t []byte, a int) (ae, at, colon int) {
	at, colon = -1, -1
	for ae = a; ae < len(t) && ae-a < maxAuthority; ae++ {
		c := t[ae]
		if tb.authStop[c] {
			break
		}
		switch c {
		case '@':
			at, colon = ae-a, -1
		case ':':
			if colon < 0 {
				colon = ae
			}
		}
	}
	return ae, at, colon
}

// hostEndAt returns the end of the host in t[host:ae] (before a port), or -1 when it is all host.
func hostEndAt(t []byte, host, ae int) int {
	if host < ae && t[host] == '[' {
		if k := indexByte(t[host:ae], ']'); k >= 0 {
			return host + k + 1
		}
		return -1
	}
	if k := indexByte(t[host:ae], ':'); k >= 0 {
		return host + k
	}
	return -1
}

// urlEnd returns the end of a URL whose authority is t[a:k]: the first space, quote or angle
// bracket, less trailing punctuation and a closing parenthesis or bracket it did not open.
func urlEnd(t []byte, a, k int) int {
	e := k
	depth := 0
	for e < len(t) && e-k < maxMatch {
		c := t[e]
		if c <= ' ' || c == '"' || c == '\'' || c == '<' || c == '>' || c == '`' || c >= 0x7f {
			break
		}
		switch c {
		case '(', '[':
			depth++
		case ')', ']':
			if depth == 0 {
				return trimURL(t, a, e)
			}
			depth--
		}
		e++
	}
	return trimURL(t, a, e)
}

func trimURL(t []byte, k, e int) int {
	for e > k && strings.IndexByte(".,;:!?*", t[e-1]) >= 0 {
		e--
	}
	return e
}

func indexByte(b []byte, c byte) int {
	for k, x := range b {
		if x == c {
			return k
		}
	}
	return -1
}

// hostSet is a rule's allowed hosts, compared as a browser reads a link's host
// (weburl.Host): in its ASCII form, lower case, without the root label's dot.
type hostSet struct{ globs []authz.Glob }

func newHostSet(hosts []string) *hostSet {
	h := &hostSet{}
	for _, p := range hosts {
		h.globs = append(h.globs, authz.CompileGlob(asciiPattern(p)))
	}
	return h
}

// asciiPattern is an allowed host pattern in the form a browser reads hosts in: lower case,
// each label without a wildcard in its ASCII (punycode) form, so that "bücher.example" allows
// the host a browser goes to for it, xn--bcher-kva.example.
func asciiPattern(p string) string {
	labels := strings.Split(strings.ToLower(p), ".")
	for i, l := range labels {
		if strings.ContainsAny(l, "*?") || resuri.IsASCII(l) {
			continue
		}
		if a, err := weburl.Host(l); err == nil {
			labels[i] = a
		}
	}
	return strings.Join(labels, ".")
}

// allows reports whether host (as written in a URL) is allowed: as a browser reads it, which
// for a name of ASCII letters, digits, '-' and '.' is the name in lower case, and otherwise
// what weburl.Host makes of it (percent-decoded, IDNA-mapped, a number read as an IPv4
// address); a host a browser does not read is allowed by no pattern.
func (h *hostSet) allows(host []byte) bool {
	if h == nil || len(h.globs) == 0 {
		return false
	}
	var buf [256]byte
	if len(host) > len(buf) {
		return false
	}
	plain := true
	for k, c := range host {
		buf[k] = lower(c)
		plain = plain && (isAlnum(c) || c == '-' || c == '.')
	}
	name := string(buf[:len(host)])
	if !plain || endsInDigit(buf[:len(host)]) {
		var err error
		if name, err = weburl.Host(string(host)); err != nil {
			return false
		}
	}
	// The root label: "example.com." is example.com.
	name = strings.TrimSuffix(name, ".")
	for _, g := range h.globs {
		if g.Match(name) {
			return true
		}
	}
	return false
}

// endsInDigit reports whether the last label of the host h (before a root label's dot)
// starts with a digit: a number a browser may read as an IPv4 address in another form
// (0x7f.1, 2130706433).
func endsInDigit(h []byte) bool {
	if n := len(h); n > 0 && h[n-1] == '.' {
		h = h[:n-1]
	}
	k := len(h) - 1
	for k >= 0 && h[k] != '.' {
		k--
	}
	return k+1 < len(h) && isDigit(h[k+1])
}
