package mcpheader

import (
	"errors"
	"testing"
)

func TestEncodeDecode(t *testing.T) {
	tests := []struct {
		value, header string
	}{
		{"tools/list", "tools/list"},
		{"Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="},
		{" lead", "=?base64?IGxlYWQ=?="},
		{"trail ", "=?base64?dHJhaWwg?="},
		{"=?base64?abc?=", "=?base64?PT9iYXNlNjQ/YWJjPz0=?="},
		{"inner space", "inner space"},
		{"", ""},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			if got := Encode(tt.value); got != tt.header {
				t.Fatalf("Encode(%q) = %q, want %q", tt.value, got, tt.header)
			}
			got, err := Decode(tt.header)
			if err != nil || got != tt.value {
				t.Fatalf("Decode(%q) = %q, %v; want %q", tt.header, got, err, tt.value)
			}
		})
	}
}

func TestDecodeRejects(t *testing.T) {
	for _, v := range []string{
		"a\x00b", "caf\xc3\xa9", "line\r\nbreak", "=?base64?***?=", "=?base64?SGVsbG8?=",
		"=?base64?AP8=?=", // decodes to invalid UTF-8
		"=?base64?AQ==?=", // decodes to a control character
	} {
		if _, err := Decode(v); !errors.Is(err, ErrBadValue) {
			t.Errorf("Decode(%q) err = %v, want ErrBadValue", v, err)
		}
	}
}

func FuzzDecode(f *testing.F) {
	for _, s := range []string{"tools/call", "=?base64?SGVsbG8sIOS4lueVjA==?=", "=?base64??=", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		dec, err := Decode(v)
		if err != nil {
			return
		}
		// Whatever decodes must round-trip through Encode to a value that decodes the same.
		again, err := Decode(Encode(dec))
		if err != nil || again != dec {
			t.Fatalf("round trip of %q: %q, %v", dec, again, err)
		}
	})
}
