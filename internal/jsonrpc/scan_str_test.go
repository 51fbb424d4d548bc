package jsonrpc

import (
	"encoding/binary"
	"errors"
	"math/bits"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

func isStop(c byte) bool { return c == '"' || c == '\\' || c < 0x20 }

// firstFlagged is the index of the lowest byte stopMask flags in w, or 8.
func firstFlagged(w uint64) int { return bits.TrailingZeros64(stopMask(w)) / 8 }

// TestStopMaskOneByte: every byte value at every position of a word, among fillers of every
// kind the mask must not flag (the printable ASCII next to the flagged values, DEL, and bytes of
// 0x80 and above), is flagged exactly when it is a quote, a backslash or a control character.
func TestStopMaskOneByte(t *testing.T) {
	fillers := []byte{' ', '!', '#', '[', ']', 'a', 0x7f, 0x80, 0xa2, 0xdc, 0xff}
	for _, f := range fillers {
		for p := range 8 {
			for c := range 256 {
				var b [8]byte
				for i := range b {
					b[i] = f
				}
				b[p] = byte(c)
				w := binary.LittleEndian.Uint64(b[:])
				want := 8
				if isStop(byte(c)) {
					want = p
				}
				if got := firstFlagged(w); got != want {
					t.Fatalf("filler %#x, byte %#x at %d: first flagged %d, want %d", f, c, p, got, want)
				}
			}
		}
	}
}

// TestStopMaskTwoBytes: every pair of byte values at every pair of positions, so that a borrow
// out of one byte meets every value in the next: the mask is non-zero exactly when one of them
// must stop the run, and its lowest flagged byte is the first that must.
func TestStopMaskTwoBytes(t *testing.T) {
	for _, f := range []byte{'a', 0xff} {
		for p := range 8 {
			for q := p + 1; q < 8; q++ {
				for c := range 256 {
					for e := range 256 {
						var b [8]byte
						for i := range b {
							b[i] = f
						}
						b[p], b[q] = byte(c), byte(e)
						want := 8
						switch {
						case isStop(byte(c)):
							want = p
						case isStop(byte(e)):
							want = q
						}
						if got := firstFlagged(binary.LittleEndian.Uint64(b[:])); got != want {
							t.Fatalf("filler %#x, %#x at %d and %#x at %d: first flagged %d, want %d", f, c, p, e, q, got, want)
						}
					}
				}
			}
		}
	}
}

// refStr is the byte-at-a-time string scan str must agree with: the offset after the closing
// quote and whether the string had escapes, or the offset of the error and the error.
func refStr(d []byte, i, max int) (int, bool, int, error) {
	start := i
	escaped := false
	for i++; i < len(d); {
		c := d[i]
		switch {
		case c == '"':
			if i-start > max {
				return i, escaped, start, ErrTooLong
			}
			return i + 1, escaped, 0, nil
		case c == '\\':
			n, ok := escapeLen(d[i:])
			if !ok {
				return i, escaped, i, ErrSyntax
			}
			escaped = true
			i += n
		case c < 0x20:
			return i, escaped, i, ErrSyntax
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(d[i:])
			if r == utf8.RuneError && size <= 1 {
				return i, escaped, i, ErrSyntax
			}
			i += size
		}
	}
	return i, escaped, i, ErrSyntax
}

// checkStr compares scanner.str with refStr on the string starting at d[i].
func checkStr(t *testing.T, d []byte, i, max int) {
	t.Helper()
	s := scanner{data: d, lim: Limits{MaxTokenBytes: max}.withDefaults()}
	end, esc, err := s.str(i, 3)
	wend, wesc, woff, werr := refStr(d, i, s.lim.MaxTokenBytes)
	var se *ScanError
	switch {
	case werr == nil && (err != nil || end != wend || esc != wesc):
		t.Fatalf("%q at %d: got %d, %v, %v; want %d, %v", d, i, end, esc, err, wend, wesc)
	case werr != nil && (!errors.As(err, &se) || se.Err != werr || se.Offset != woff || se.Depth != 3 || end != wend):
		t.Fatalf("%q at %d: got %d, %v; want %d, %v at %d", d, i, end, err, wend, werr, woff)
	}
}

// strPieces are the parts random strings are made of: plain text, every kind of stop byte,
// good and bad escapes, multi-byte UTF-8 and each way UTF-8 can be invalid.
var strPieces = []string{
	"a", "abcdefg", " ", "~", "\x7f", "!", "#", "[", "]",
	`"`, `\`, `\"`, `\\`, `\/`, `\n`, `\u00e9`, `\uD83D\uDE00`, `\x`, `\u12`, `\u12G4`, `\U0041`,
	"\x00", "\x1f", "\t", "\n",
	"é", "東", "😀", "\u2028", "\ufeff",
	"\x80", "\xbf", "\xc0\x80", "\xc1\xbf", "\xc3", "\xe6\x9d", "\xf0\x9f\x98", "\xed\xa0\x80", "\xed\xbf\xbf",
	"\xe0\x80\x80", "\xf0\x80\x80\x80", "\xf4\x90\x80\x80", "\xf5\x80\x80\x80", "\xff", "\xfe",
}

// TestStrAgreesWithReference: str accepts and refuses exactly what the byte-at-a-time scan
// does, with the same error at the same offset, for strings with every piece above at every
// offset from a word boundary, and for random mixtures of them; the limit on a string's
// length is checked near its edge.
func TestStrAgreesWithReference(t *testing.T) {
	for pad := range 40 {
		for _, p := range strPieces {
			for tail := range 20 {
				body := `"` + strings.Repeat("x", pad) + p + strings.Repeat("y", tail) + `"`
				for _, prefix := range []string{"", "{", "{\"k\":"} {
					d := []byte(prefix + body)
					checkStr(t, d, len(prefix), 0)
					checkStr(t, d, len(prefix), len(body)-2)
					checkStr(t, d, len(prefix), len(body)-1)
				}
				checkStr(t, []byte(body[:len(body)-1]), 0, 0) // no closing quote
			}
		}
	}
	rng := rand.New(rand.NewPCG(21, 1))
	for range 200000 {
		d := []byte{'"'}
		for n := rng.IntN(24); n > 0; n-- {
			if rng.IntN(3) == 0 {
				d = append(d, strings.Repeat("z", rng.IntN(20))...)
			}
			d = append(d, strPieces[rng.IntN(len(strPieces))]...)
		}
		if rng.IntN(4) > 0 {
			d = append(d, '"')
		}
		checkStr(t, d, 0, 0)
		checkStr(t, d, 0, 1+rng.IntN(len(d)))
	}
}

// FuzzStr: str agrees with the byte-at-a-time scan on whatever follows each quote of the input.
func FuzzStr(f *testing.F) {
	for _, p := range strPieces {
		f.Add([]byte(`"abcdefgh` + p + `ijklmnopqrstuvwxyz0123456789"`))
	}
	f.Add([]byte("\"\xe6\x9d\xb1\xe4\xba\xac \xe6\x9d\" \"\\u00e9\xc3\xa9\""))
	f.Fuzz(func(t *testing.T, d []byte) {
		for i, c := range d {
			if c == '"' {
				checkStr(t, d, i, 0)
				checkStr(t, d, i, 16)
			}
		}
	})
}
