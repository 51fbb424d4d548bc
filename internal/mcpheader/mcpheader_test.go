package mcpheader

import (
	"errors"
	"strings"
	"testing"
	"unicode"
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
		// The empty string travels as the sentinel: a receiver that takes an empty field for a
		// header not sent (the Go SDK server) reads it as "" all the same.
		{"", "=?base64??="},
		{"=?base64?=", "=?base64?PT9iYXNlNjQ/PQ==?="},
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
		// The prefix and the suffix share a '?': the sentinel of "" to the TypeScript SDK, the
		// text itself to the Go SDK.
		"=?base64?=",
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
		if strings.IndexFunc(dec, unicode.IsControl) >= 0 {
			t.Fatalf("Decode(%q) = %q holds a control character", v, dec)
		}
	})
}

// DecodeName takes a raw UTF-8 Mcp-Name (what the Go SDK client sends) as the very bytes it
// holds, the sentinel as Decode does, and refuses what cannot be the body's own spelling.
func TestDecodeName(t *testing.T) {
	for _, tt := range []struct{ header, want string }{
		{"résumé", "résumé"},
		{"工具", "工具"},
		{"🚀launch", "🚀launch"},
		{"e\u0301", "e\u0301"}, // NFD stays NFD: the caller compares bytes with the body
		{`say "hi"`, `say "hi"`},
		{"=?base64?csOpc3Vtw6k=?=", "résumé"},
		{"plain", "plain"},
	} {
		got, err := DecodeName(tt.header)
		if err != nil || got != tt.want {
			t.Errorf("DecodeName(%q) = %q, %v; want %q", tt.header, got, err, tt.want)
		}
	}
	for _, v := range []string{
		"r\xe9sum\xe9",     // Latin-1, not UTF-8
		"caf\xc3",          // truncated sequence
		"a\x00b", "a\x7fb", // controls
		"=?base64?***?=",  // a malformed sentinel is never taken raw
		"=?base64?AP8=?=", // the sentinel of invalid UTF-8
		"=?base64?=",      // read as the sentinel of "" by some, as itself by others
	} {
		if _, err := DecodeName(v); !errors.Is(err, ErrBadValue) {
			t.Errorf("DecodeName(%q) err = %v, want ErrBadValue", v, err)
		}
	}
}

func FuzzDecodeName(f *testing.F) {
	for _, s := range []string{"résumé", "=?base64?SGVsbG8sIOS4lueVjA==?=", "\xff", "a\x01", "a\u0085", "=?base64?YcKF?="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		dec, err := DecodeName(v)
		if err != nil {
			return
		}
		// A plain value is taken as the bytes it holds and nothing else; every value that
		// decodes re-encodes to the same name, and holds no control character.
		if !isSentinel(v) && dec != v {
			t.Fatalf("DecodeName(%q) = %q", v, dec)
		}
		if again, err := DecodeName(Encode(dec)); err != nil || again != dec {
			t.Fatalf("round trip of %q: %q, %v", dec, again, err)
		}
		if strings.IndexFunc(dec, unicode.IsControl) >= 0 {
			t.Fatalf("DecodeName(%q) = %q holds a control character", v, dec)
		}
	})
}

// controls are the code points of Unicode's general category Cc: C0, DEL and C1.
func controls() []rune {
	var out []rune
	for r := rune(0); r <= 0x9f; r++ {
		if r < 0x20 || r >= 0x7f {
			out = append(out, r)
		}
	}
	return out
}

// TestControlCharactersRefused: every control character, C1 as much as C0 and DEL, is refused
// in a decoded Mcp-Name or Mcp-Param-* value, spelt raw or in the sentinel; the first code
// points either side (U+0020, U+007E, U+00A0) are not controls.
func TestControlCharactersRefused(t *testing.T) {
	for _, r := range controls() {
		s := "a" + string(r) + "b"
		for _, v := range []string{s, Encode(s)} {
			if _, err := Decode(v); !errors.Is(err, ErrBadValue) {
				t.Errorf("Decode(%q) err = %v, want ErrBadValue", v, err)
			}
			if _, err := DecodeName(v); !errors.Is(err, ErrBadValue) {
				t.Errorf("DecodeName(%q) err = %v, want ErrBadValue", v, err)
			}
		}
		if Encode(s) == s {
			t.Errorf("Encode(%q) is not the sentinel", s)
		}
	}
	for _, s := range []string{"a b", "a~b", "a\u00a0b", "a\u00ffb"} {
		if got, err := DecodeName(Encode(s)); err != nil || got != s {
			t.Errorf("DecodeName(Encode(%q)) = %q, %v", s, got, err)
		}
	}
}

// TestReadsAs: the names that read as a checked header where every character but a letter or a
// digit is one and case does not count, and those that do not.
func TestReadsAs(t *testing.T) {
	for name, want := range map[string]string{
		"Mcp_Method": Method, "MCP_METHOD": Method, "mcp_name": Name, "Mcp_Protocol_Version": ProtocolVersion,
		"MCP-Protocol_Version": ProtocolVersion, "Mcp_Param_Region": ParamPrefix + "*", "Mcp-Param_X": ParamPrefix + "*",
		"Mcp-Method": "", "Mcp-Param-My_Region": "", "Mcp_Session_Id": "", "X_Forwarded_For": "", "Mcp_Param_": "",
		"Mcp_Methods": "", "Mcp_Metho\x8d": "", "Mcp_Nam\x05": "",
		"Mcp.Name": Name, "mcp~method": Method, "Mcp.Protocol.Version": ProtocolVersion, "Mcp+Param.Region": ParamPrefix + "*",
		"Mcp!Name": Name, "Mcp*Name": Name, "Mcp|Name": Name, "Mcp'Name": Name, "Mcp`Method": Method, "Mcp^Method": Method,
		"Mcp-Param-My.Region": "", "Mcp.Session.Id": "", "Mcp.Names": "", "X.Mcp.Name": "",
	} {
		if got := ReadsAs(name); got != want {
			t.Errorf("ReadsAs(%q) = %q, want %q", name, got, want)
		}
	}
}

// TestReadKey: names that differ only in case or in the character between their words have one
// key; names that differ otherwise do not.
func TestReadKey(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		same bool
	}{
		{"Tenant_Id", "tenant-id", true},
		{"Tenant.Id", "TENANT~ID", true},
		{"Mcp_Param_Region", "Mcp-Param-Region", true},
		{"Tenant-Id", "TenantId", false},
		{"Tenant-Id", "Tenant-Ids", false},
		{"Region1", "Region2", false},
	} {
		if got := ReadKey(tt.a) == ReadKey(tt.b); got != tt.same {
			t.Errorf("ReadKey(%q) == ReadKey(%q) is %v, want %v", tt.a, tt.b, got, tt.same)
		}
	}
}
