package mcphttp

import (
	"slices"
	"strings"
)

// The W3C grammars of the propagated lists. A value that does not follow its grammar is
// dropped whole, never repaired (W3C Trace Context §3.3.1.1 lets a vendor discard a tracestate
// it cannot parse; W3C Baggage §3.2.1.1 defines the only form there is): what the backend gets
// as trace context is then keys and values of a narrow alphabet, not free text.
const (
	maxTraceStateMembers = 32  // W3C Trace Context §3.3.1.1
	maxBaggageMembers    = 180 // W3C Baggage §3.2.1: list-member 0*179( OWS "," OWS list-member )
)

// nextMember returns the first member of the list s, trimmed of the optional white space (space,
// tab) around it, and what follows its ','; more is false for the last member. Walking a list
// with it allocates nothing: these checks run on every request that carries trace context.
func nextMember(s string) (member, rest string, more bool) {
	member, rest, more = strings.Cut(s, ",")
	return strings.Trim(member, " \t"), rest, more
}

// validTraceState reports whether s is a tracestate: at most 32 members key=value, empty
// members allowed, keys unique.
func validTraceState(s string) bool {
	var keys [maxTraceStateMembers]string
	n := 0
	for more := true; more; {
		var m string
		m, s, more = nextMember(s)
		if m == "" {
			continue
		}
		if n == maxTraceStateMembers {
			return false
		}
		k, v, ok := strings.Cut(m, "=")
		if !ok || !traceStateKey(k) || !traceStateValue(v) || slices.Contains(keys[:n], k) {
			return false
		}
		keys[n] = k
		n++
	}
	return true
}

// traceStateKey: simple-key = lcalpha 0*255(lcalpha / DIGIT / "_" / "-" / "*" / "/"), or
// tenant-id "@" system-id, tenant-id = (lcalpha / DIGIT) 0*240(same), system-id = lcalpha
// 0*13(same).
func traceStateKey(k string) bool {
	keyChar := func(c byte) bool {
		return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '*' || c == '/'
	}
	all := func(s string) bool {
		for i := 0; i < len(s); i++ {
			if !keyChar(s[i]) {
				return false
			}
		}
		return true
	}
	tenant, system, multi := strings.Cut(k, "@")
	if !multi {
		return len(k) >= 1 && len(k) <= 256 && k[0] >= 'a' && k[0] <= 'z' && all(k)
	}
	return len(tenant) >= 1 && len(tenant) <= 241 && all(tenant) &&
		len(system) >= 1 && len(system) <= 14 && system[0] >= 'a' && system[0] <= 'z' && all(system)
}

// traceStateValue: 0*255(chr) nblk-chr, chr = %x20 / nblk-chr, nblk-chr = %x21-2B / %x2D-3C /
// %x3E-7E (visible ASCII but ',' and '=').
func traceStateValue(v string) bool {
	if len(v) < 1 || len(v) > 256 || v[len(v)-1] == ' ' {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c > 0x7e || c == ',' || c == '=' {
			return false
		}
	}
	return true
}

// validBaggage reports whether s is a baggage-string: 1 to 180 list-members, each key OWS "="
// OWS value *( OWS ";" OWS property ), a property key OWS "=" OWS value or a key alone.
func validBaggage(s string) bool {
	for n, more := 0, true; more; n++ {
		if n == maxBaggageMembers {
			return false
		}
		var m string
		m, s, more = nextMember(s)
		pair, props, hasProps := strings.Cut(m, ";")
		if !baggagePair(pair, false) {
			return false
		}
		for hasProps {
			var p string
			p, props, hasProps = strings.Cut(props, ";")
			if !baggagePair(p, true) {
				return false
			}
		}
	}
	return true
}

// baggagePair checks key OWS "=" OWS value, or (for a property, keyOnly) a key alone, with
// surrounding OWS; key is an RFC 9110 token, value 0*baggage-octet.
func baggagePair(s string, keyOnly bool) bool {
	k, v, ok := strings.Cut(s, "=")
	k = strings.Trim(k, " \t")
	if !ok {
		return keyOnly && k != "" && isToken(k)
	}
	if k == "" || !isToken(k) {
		return false
	}
	v = strings.Trim(v, " \t")
	for i := 0; i < len(v); i++ {
		// baggage-octet = %x21 / %x23-2B / %x2D-3A / %x3C-5B / %x5D-7E
		if c := v[i]; c < 0x21 || c > 0x7e || c == '"' || c == ',' || c == ';' || c == '\\' {
			return false
		}
	}
	return true
}

// isToken reports whether s is an RFC 9110 token.
func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0 {
			continue
		}
		return false
	}
	return s != ""
}
