package jsonrpc

import (
	"strings"
	"testing"
)

// TestMembersStrings: Members (the trusted walk over what Scan accepted) finds the end of every
// kind of string, whatever runs of backslashes precede a quote and however long it is.
func TestMembersStrings(t *testing.T) {
	long := strings.Repeat("x", 100)
	for _, v := range []string{
		`""`, `"a"`, `"\\"`, `"\""`, `"\\\""`, `"a\\\\"`, `"` + long + `\"` + long + `"`,
		`"` + long + `\\"`, `"é\u00e9` + long + `"`, `"` + long + `"`,
	} {
		body := []byte(`{"k":` + v + `,"z":1}`)
		if err := Scan(body, Limits{}); err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		got := map[string]string{}
		if err := Members(body, func(key, val []byte) error { got[string(key)] = string(val); return nil }); err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		if got["k"] != v || got["z"] != "1" || len(got) != 2 {
			t.Errorf("%s: members %q", v, got)
		}
	}
}

// bigBodies are 4 MiB requests: one long string, many small objects, and escapes throughout
// (issue 22: a replica's CPU per large body).
func bigBodies() map[string][]byte {
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	str := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + meta + `,"name":"a__b","arguments":{"text":"` + strings.Repeat("abcdefgh", 4<<20/8-40) + `"}}}`
	var sb strings.Builder
	sb.WriteString(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + meta + `,"name":"a__b","arguments":{"rows":[`)
	for i := 0; sb.Len() < 4<<20-200; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(`{"k":"v","n":12345,"b":true}`)
	}
	sb.WriteString(`]}}}`)
	var esc strings.Builder
	esc.WriteString(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + meta + `,"name":"a__b","arguments":{"text":"`)
	for esc.Len() < 4<<20-200 {
		esc.WriteString(`\u00e9\n\"é`)
	}
	esc.WriteString(`"}}}`)
	return map[string][]byte{"string": []byte(str), "objects": []byte(sb.String()), "escapes": []byte(esc.String())}
}

func BenchmarkDecodeLarge(b *testing.B) {
	for name, body := range bigBodies() {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for range b.N {
				if _, err := Decode(body, Limits{MaxTokenBytes: 8 << 20}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
