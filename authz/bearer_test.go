package authz

import "testing"

// isB64TokenReference is RFC 6750 §2.1 b64token written out plainly, to check the table and the
// unrolled loop against.
func isB64TokenReference(s string) bool {
	end := len(s)
	for end > 0 && s[end-1] == '=' {
		end--
	}
	if end == 0 {
		return false
	}
	for i := 0; i < end; i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '-', c == '.', c == '_', c == '~', c == '+', c == '/':
		default:
			return false
		}
	}
	return true
}

// TestIsB64TokenEveryByteEveryPosition puts each of the 256 byte values at each position of
// tokens around the 8-byte stride, with and without padding, and compares with the reference.
func TestIsB64TokenEveryByteEveryPosition(t *testing.T) {
	for n := 1; n <= 19; n++ {
		for pos := 0; pos < n; pos++ {
			for c := range 256 {
				b := []byte("abcdefghijKLMNOPQRS0123"[:n])
				b[pos] = byte(c)
				for _, pad := range []string{"", "=", "=="} {
					s := string(b) + pad
					if got, want := isB64Token(s), isB64TokenReference(s); got != want {
						t.Fatalf("isB64Token(%q) = %v, want %v", s, got, want)
					}
				}
			}
		}
	}
}
