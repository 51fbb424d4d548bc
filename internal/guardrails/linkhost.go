package guardrails

import "bytes"

// readOn returns whether the host t[host:ae] of a link is allowed as a browser reads it on
// past t[ae], where the authority was taken to end, and where that reading ends. Prose ends a link at a comma or a
// closing parenthesis and at the first character that is not ASCII, but the WHATWG URL parser
// ends a special URL's authority only at '/', '?', '#' or '\', keeps ',', ')', '}' and the
// rest in the host, and IDNA maps the ideographic and fullwidth full stops (U+3002, U+FF0E,
// U+FF61) to '.': https://docs.example.com。attacker.test, https://docs.example.com,.attacker.test
// and https://docs.example.comé.attacker.test are hosts under attacker.test, and after such a
// byte an '@' (https://docs.example.com)@attacker.test) makes all before it user information.
// What is read on is judged when it holds an '@', or a dot and a label after it; without
// either (a sentence's closing parenthesis, comma or full stop) it names no other domain.
func (s *textScan) readOn(host, ae int) (allowed bool, end int) {
	t := s.t
	if ae >= len(t) || !readsOn(t[ae]) {
		return true, ae
	}
	var buf [256]byte
	if ae-host > len(buf) {
		return false, ae
	}
	n := copy(buf[:], t[host:ae])
	at, dot, other, brk := false, false, false, false
	e := ae
	for e < len(t) {
		c := t[e]
		if c == '\t' || c == '\n' || c == '\r' {
			// A browser removes tabs and line breaks from the whole URL before it parses it.
			brk = true
			e++
			continue
		}
		if c <= ' ' || c == '/' || c == '?' || c == '#' || c == '\\' || c == '"' || c == '\'' || c == '<' || c == '>' || c == '`' || c == 0x7f {
			break
		}
		if e-host >= maxAuthority {
			return false, e
		}
		w := 1
		switch {
		case c == '@':
			n, at, dot = 0, true, false
			e++
			continue
		case c == ':' && at:
			return s.allows(buf[:n]), e // the port of the host after the '@'

		case c == '.':
			dot = true
		case fullStop(t[e:]) > 0:
			c, w, dot = '.', fullStop(t[e:]), true
		case dot:
			other = true
		}
		if n == len(buf) {
			return false, e
		}
		buf[n] = c
		n++
		e += w
	}
	switch {
	case n > ae-host && s.allows(buf[:n]):
		// The host as a browser reads on is allowed (https://docs.example.c<U+00AD>om is
		// docs.example.com): what prose would have ended the link at is not judged alone.
		return true, e
	case brk && !at, !at && !other:
		// Text on the next line is not the link's but where an '@' makes all before it user
		// information.
		return true, ae
	}
	return s.allows(buf[:n]), e
}

// readsOn reports whether a browser reads a URL's host on past c, where prose ends it.
func readsOn(c byte) bool {
	return c >= 0x80 || c == '\t' || c == '\n' || c == '\r' || c == ',' || c == ')' || c == '}' || c == ']' || c == '|' || c == '^'
}

// fullStop returns the length of the ideographic or fullwidth full stop t starts with, which
// IDNA maps to '.' in a host, or 0.
func fullStop(t []byte) int {
	if len(t) >= 3 && (t[0] == 0xe3 && t[1] == 0x80 && t[2] == 0x82 || // U+3002
		t[0] == 0xef && t[1] == 0xbc && t[2] == 0x8e || // U+FF0E
		t[0] == 0xef && t[1] == 0xbd && t[2] == 0xa1) { // U+FF61
		return 3
	}
	return 0
}

// allowsEntities reports whether the host of the authority t[a:], whose last '@' is at a+at
// (at ≥ 0), is allowed as a reader that decodes HTML character references reads it: a
// Markdown renderer (CommonMark decodes them in a link's destination) or an HTML page makes
// https://attacker.test&sol;@docs.example.com a link to attacker.test, '/' ending the
// authority there, where the raw text's host is docs.example.com. The references that end an
// authority by number hold a '#', which ends it raw too; these are the named ones.
func (s *textScan) allowsEntities(a, at int) bool {
	t := s.t
	user := t[a : a+at]
	p := -1
	for _, ref := range [...]string{"&sol;", "&quest;", "&num;", "&bsol;"} {
		if k := indexString(user, ref); k >= 0 && (p < 0 || k < p) {
			p = k
		}
	}
	if p < 0 {
		return true
	}
	host := user[:p]
	if k := bytes.LastIndexByte(host, '@'); k >= 0 {
		host = host[k+1:]
	}
	if k := indexByte(host, ':'); k >= 0 {
		host = host[:k]
	}
	return s.allows(host)
}
