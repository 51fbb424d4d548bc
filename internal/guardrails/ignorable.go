package guardrails

import (
	"bytes"
	"encoding/binary"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

// A credential or address with a default-ignorable character inside it (AKIA<U+200B>IOSF…, a
// soft hyphen, a word joiner, a variation selector, a tag character), or a control character
// (NUL, an escape, DEL, a C1 control; not the tab and line breaks, which are white space), is
// not what the detectors match, yet it is the credential to every reader that drops what it
// does not display: a person who copies it, a model, a backend that normalises its input or
// strips control characters (as sanitisers, and stores that refuse NUL, make it do). So a message that holds such
// characters is read a second time with them removed, and what that reading finds beyond the
// first is a disguised finding: it refuses the message where the rule redacts or blocks what the
// detector finds (its place in the message as forwarded cannot be marked without leaving the
// rest of it readable), and is logged where the rule logs. The message forwarded is the one the
// client or backend sent: both of its readings were checked.
//
// The second reading costs one pass of eight bytes at a time for a message of printable ASCII
// without \u, \b or \f escapes (mayHoldIgnorable), and one pass without allocating for any
// other that holds no such character.

// ignorable reports whether r is a Default_Ignorable_Code_Point (Unicode's derived property,
// DerivedCoreProperties.txt): soft hyphen, combining grapheme joiner, the zero-width, joiner,
// direction and invisible-operator marks, the Hangul and Mongolian fillers and selectors,
// variation selectors, the byte order mark, the musical format marks and the tag characters.
// Written out as ranges: every rune of a non-ASCII text passes here.
func ignorable(r rune) bool {
	switch {
	case r < 0xAD:
		return false
	case r < 0x2000:
		return r == 0xAD || r == 0x34F || r == 0x61C || r == 0x115F || r == 0x1160 ||
			r == 0x17B4 || r == 0x17B5 || (r >= 0x180B && r <= 0x180F)
	case r < 0x3000:
		return (r >= 0x200B && r <= 0x200F) || (r >= 0x202A && r <= 0x202E) || (r >= 0x2060 && r <= 0x206F)
	case r < 0x10000:
		return r == 0x3164 || (r >= 0xFE00 && r <= 0xFE0F) || r == 0xFEFF || r == 0xFFA0 || (r >= 0xFFF0 && r <= 0xFFF8)
	}
	return (r >= 0x1BCA0 && r <= 0x1BCA3) || (r >= 0x1D173 && r <= 0x1D17A) || (r >= 0xE0000 && r <= 0xE0FFF)
}

// stripIgnorable returns the JSON text raw with every default-ignorable character removed from
// its strings, raw or written as a \u escape (a pair of them for a supplementary character),
// every hidden control character (raw, \u, \b or \f), and every \u escape of a lone
// surrogate, and false when raw holds none (nothing is allocated then). raw passed the strict
// decode: outside strings it is ASCII without backslashes, so removing a character keeps it
// valid JSON.
func stripIgnorable(raw []byte) ([]byte, bool) {
	start := mayHoldIgnorable(raw)
	if start < 0 {
		return nil, false
	}
	var out []byte
	last := 0 // raw[last:i] is still to be copied to out
	esc := -1 // where the next \u escape's run of backslashes begins, at i or after
	for i := start; i < len(raw); {
		// Only a byte at or above 0x80 or a \u escape may begin such a character: the ASCII
		// and the other escapes between them are passed over, eight bytes at a time.
		if esc < i {
			esc = nextEscapeU(raw, i)
		}
		if i += firstHigh(raw[i:esc]); i >= len(raw) {
			break
		}
		r, n := rune(0), 0
		if raw[i] == '\\' {
			r, n = jsonrpc.EscapedRune(raw, i)
			if n == 2 {
				r = shortEscaped(raw[i+1])
			}
		} else {
			r, n = utf8.DecodeRune(raw[i:])
		}
		// A surrogate here is a lone one (escapedRune decodes pairs): encoding/json reads it
		// as U+FFFD, but JSON.parse and Python keep it, and whatever writes their strings as
		// UTF-8 drops or replaces it, so it hides what it splits like an ignorable character.
		if n > 0 && (ignorable(r) || utf16.IsSurrogate(r) || hiddenControl(r)) {
			out = append(out, raw[last:i]...)
			last = i + n
		}
		i += max(n, 1)
	}
	if last == 0 {
		return nil, false
	}
	return append(out, raw[last:]...), true
}

// hiddenControl reports whether r is a control character a reader may drop: C0 but the tab
// and line breaks (white space, which separates rather than hides), DEL and C1.
func hiddenControl(r rune) bool {
	return (r >= 0 && r < 0x20 && r != '\t' && r != '\n' && r != '\r') || (r >= 0x7F && r <= 0x9F)
}

// shortEscaped is the rune of the two-byte escape whose letter is c when it names a control
// character hiddenControl reports (\b, \f), else -1: the other short escapes are white space
// or printable.
func shortEscaped(c byte) rune {
	switch c {
	case 'b':
		return '\b'
	case 'f':
		return '\f'
	}
	return -1
}

// nextEscapeU returns where, at i or after, the run of backslashes begins that ends in the next
// \u, \b or \f escape of raw (those that may write a character stripIgnorable removes), or
// len(raw) when there is none. i is where an escape may begin (not inside one), so the run from
// i on is whole escapes.
func nextEscapeU(raw []byte, i int) int {
	for j := i; ; {
		k := bytes.IndexByte(raw[j:], '\\')
		if k < 0 || j+k+1 >= len(raw) {
			return len(raw)
		}
		e := j + k
		if c := raw[e+1]; c != 'u' && c != 'b' && c != 'f' {
			j = e + 1
			continue
		}
		// Back to the first of its run of backslashes, where an escape begins (in "\\u"
		// the u is no escape's).
		for e > i && raw[e-1] == '\\' {
			e--
		}
		return e
	}
}

// firstHigh returns the index of the first byte of b at or above 0x7F (DEL, or a byte of a
// multi-byte character), or len(b): thirty-two bytes a branch while none is, then eight, then
// one. A word holds such a byte iff its high bits, or those of the word with one added to each
// byte, are set: adding one sets the high bit of 0x7F and of no byte below it, and carries out
// of none.
func firstHigh(b []byte) int {
	i := 0
	for ; i+32 <= len(b); i += 32 {
		c := b[i : i+32]
		if highOrDel(binary.LittleEndian.Uint64(c))|highOrDel(binary.LittleEndian.Uint64(c[8:]))|
			highOrDel(binary.LittleEndian.Uint64(c[16:]))|highOrDel(binary.LittleEndian.Uint64(c[24:])) != 0 {
			break
		}
	}
	for ; i+8 <= len(b); i += 8 {
		if highOrDel(binary.LittleEndian.Uint64(b[i:])) != 0 {
			break
		}
	}
	for ; i < len(b); i++ {
		if b[i] >= 0x7F {
			return i
		}
	}
	return i
}

// highOrDel is non-zero iff a byte of w is 0x7F or above (firstHigh).
func highOrDel(w uint64) uint64 {
	return (w | (w + 0x0101010101010101)) & 0x8080808080808080
}

// mayHoldIgnorable returns where the first byte of raw that could begin a default-ignorable
// or hidden control character is, or -1 when raw holds none: every such character is written
// either as UTF-8 of two bytes or more (all of whose bytes are 0x80 or above), as a raw DEL, or
// as a \u, \b or \f escape. Most messages are printable ASCII whose only escapes are \n, \"
// and the like, so they are passed over eight bytes at a time (firstHigh) and by
// bytes.IndexByte for the escapes, instead of a branch per byte.
func mayHoldIgnorable(raw []byte) int {
	if i := firstHigh(raw[:nextEscapeU(raw, 0)]); i < len(raw) {
		return i
	}
	return -1
}

// disguised reads raw again without its default-ignorable characters and adds to rep what
// that reading finds beyond what rep holds, a redaction made a refusal.
func (r *Rule) disguised(raw []byte, d *direction, dir Direction, result bool, rep *Report, echo *Echo) {
	stripped, ok := stripIgnorable(raw)
	switch {
	case ok:
	case rep.hidden:
		stripped = raw // only a blob's text holds such characters (blob.go)
	default:
		return
	}
	again := &Report{}
	r.scanOnce(again, stripped, d, dir, result, echo, true)
	if again.Err != nil && rep.Err == nil {
		rep.Err = again.Err
	}
	var seen [numDetectors]uint32
	for _, f := range again.Findings {
		seen[f.Detector]++
		if seen[f.Detector] <= rep.Counts[f.Detector] {
			continue // found in the message as it is, too
		}
		a := f.Action
		if a == Redact {
			a = Block
		}
		rep.Add(f.Detector, a, f.Path, "")
	}
}
