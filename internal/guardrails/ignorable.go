package guardrails

import (
	"bytes"
	"encoding/binary"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

// A credential or address with a default-ignorable character inside it (AKIA<U+200B>IOSF…, a
// soft hyphen, a word joiner, a variation selector, a tag character) is not what the detectors
// match, yet it is the credential to every reader that drops what it does not display: a person
// who copies it, a model, a backend that normalises its input. So a message that holds such
// characters is read a second time with them removed, and what that reading finds beyond the
// first is a disguised finding: it refuses the message where the rule redacts or blocks what the
// detector finds (its place in the message as forwarded cannot be marked without leaving the
// rest of it readable), and is logged where the rule logs. The message forwarded is the one the
// client or backend sent: both of its readings were checked.
//
// The second reading costs one pass of eight bytes at a time for a message of ASCII without \u
// escapes (mayHoldIgnorable), and one pass without allocating for any other that holds no such
// character.

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
// and every \u escape of a lone surrogate, and false when raw holds none (nothing is allocated then). raw passed the strict decode:
// outside strings it is ASCII without backslashes, so removing a character keeps it valid JSON.
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
		} else {
			r, n = utf8.DecodeRune(raw[i:])
		}
		// A surrogate here is a lone one (escapedRune decodes pairs): encoding/json reads it
		// as U+FFFD, but JSON.parse and Python keep it, and whatever writes their strings as
		// UTF-8 drops or replaces it, so it hides what it splits like an ignorable character.
		if n > 0 && (ignorable(r) || utf16.IsSurrogate(r)) {
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

// nextEscapeU returns where, at i or after, the run of backslashes begins that ends in the next
// \u escape of raw, or len(raw) when there is none. i is where an escape may begin (not inside
// one), so the run from i on is whole escapes.
func nextEscapeU(raw []byte, i int) int {
	e := bytes.Index(raw[i:], []byte(`\u`))
	if e < 0 {
		return len(raw)
	}
	e += i
	// Back to the first of its run of backslashes, where an escape begins (in "\\u" the
	// u is no escape's).
	for e > i && raw[e-1] == '\\' {
		e--
	}
	return e
}

// firstHigh returns the index of the first byte of b at or above 0x80, or len(b): thirty-two
// bytes a branch while none is (the words' high bits or'ed), then eight, then one.
func firstHigh(b []byte) int {
	i := 0
	for ; i+32 <= len(b); i += 32 {
		c := b[i : i+32]
		w := binary.LittleEndian.Uint64(c) | binary.LittleEndian.Uint64(c[8:]) |
			binary.LittleEndian.Uint64(c[16:]) | binary.LittleEndian.Uint64(c[24:])
		if w&0x8080808080808080 != 0 {
			break
		}
	}
	for ; i+8 <= len(b); i += 8 {
		if binary.LittleEndian.Uint64(b[i:])&0x8080808080808080 != 0 {
			break
		}
	}
	for ; i < len(b); i++ {
		if b[i] >= utf8.RuneSelf {
			return i
		}
	}
	return i
}

// mayHoldIgnorable returns where the first byte of raw that could begin a default-ignorable
// character is, or -1 when raw holds none: every such character is written either as UTF-8 of
// two bytes or more (all of whose bytes are 0x80 or above) or as a \u escape. Most messages are
// ASCII whose only escapes are \n, \" and the like, so they are passed over eight bytes at a
// time (a byte at or above 0x80 sets its word's high bits) and by bytes.Index for "\u", instead
// of a branch per byte.
func mayHoldIgnorable(raw []byte) int {
	if i := firstHigh(raw[:nextEscapeU(raw, 0)]); i < len(raw) {
		return i
	}
	return -1
}

// disguised reads raw again without its default-ignorable characters and adds to rep what
// that reading finds beyond what rep holds, a redaction made a refusal.
func (r *Rule) disguised(raw []byte, d *direction, dir Direction, result bool, rep *Report) {
	stripped, ok := stripIgnorable(raw)
	if !ok {
		return
	}
	again := &Report{}
	r.scanOnce(again, stripped, d, dir, result)
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
