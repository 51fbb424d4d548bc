package jsonrpc

import "testing"

// NumberAsDouble: alike exactly when a decimal-exact parser reads the literal as the double
// that parsers reading doubles read.
func TestNumberAsDouble(t *testing.T) {
	for _, c := range []struct {
		lit   string
		f     float64
		alike bool
	}{
		{"0", 0, true}, {"-0", 0, true}, {"42", 42, true}, {"4.2e1", 42, true}, {"420e-1", 42, true},
		{"0.1", 0.1, true}, {"1.0", 1, true}, {"2.5e-3", 0.0025, true}, {"1e2", 100, true},
		{"999999999999999", 999999999999999, true}, {"9007199254740992", 1 << 53, true},
		{"9007199254740994", 1<<53 + 2, true}, {"9.007199254740994e15", 1<<53 + 2, true},
		{"9007199254740993", 1 << 53, false}, {"9007199254740992.5", 1 << 53, false},
		{"12345678901234567.0", 12345678901234568, false}, {"0.10000000000000001", 0.1, false},
		{"42.00000000000000001", 42, false}, {"-9007199254740993", -(1 << 53), false},
		{"1e400", 0, false}, {"-1e400", 0, false}, {"1e-400", 0, false},
	} {
		f, alike := NumberAsDouble([]byte(c.lit))
		if alike != c.alike || (alike && f != c.f) {
			t.Errorf("%s: %v %v, want %v %v", c.lit, f, alike, c.f, c.alike)
		}
	}
}
