package mcphttp

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/mcpheader"
)

// FuzzParamHeaderValue checks the comparison of an Mcp-Param-* header with the argument it
// mirrors: a header accepted for an argument says what encoding/json reads from the body (the
// same string, the same boolean, the same integer), and the header the backend gets instead
// decodes back to that value.
func FuzzParamHeaderValue(f *testing.F) {
	for _, s := range [][2]string{
		{`"eu"`, "eu"}, {`"eu"`, "=?base64?ZXU=?="}, {`"Hello, 世界"`, "=?base64?SGVsbG8sIOS4lueVjA==?="},
		{`42`, "42"}, {`42.0`, "42"}, {`42`, "4.2e1"}, {`9007199254740993`, "9007199254740992"},
		{`true`, "true"}, {`false`, "False"}, {`" eu"`, "eu"}, {`"=?base64?ZXU=?="`, "=?base64?PT9iYXNlNjQ/WlhVPT89?="},
		{`"a\u0000b"`, "ab"}, {`-0`, "0"}, {`1e400`, "1e400"}, {`["eu"]`, "eu"}, {`"" `, `"`}, {"\t\"eu\"\n", "eu"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, arg, header string) {
		if jsonrpc.Scan([]byte(arg), jsonrpc.Limits{}) != nil {
			return
		}
		// White space around a value is not part of it, for encoding/json as for the gateway.
		arg = strings.Trim(arg, " \t\r\n")
		got, err := mcpheader.Decode(header)
		if err != nil {
			return
		}
		want, ok := mirrored([]byte(arg))
		if !ok {
			return
		}
		number := arg[0] != '"' && arg[0] != 't' && arg[0] != 'f'
		if !sameParam(got, want, number) {
			return
		}
		if back, err := mcpheader.Decode(mcpheader.Encode(want)); err != nil && !number {
			// A string with control characters cannot travel in a header at all; it must not
			// have matched anything.
			t.Fatalf("argument %s matched header %q but cannot be re-encoded: %v", arg, header, err)
		} else if err == nil && back != want {
			t.Fatalf("recomputed header decodes to %q, want %q", back, want)
		}
		switch {
		case arg[0] == '"':
			var s string
			if json.Unmarshal([]byte(arg), &s) != nil || s != got {
				t.Fatalf("header %q accepted for argument %s", header, arg)
			}
		case number:
			var a, h json.Number
			if json.Unmarshal([]byte(arg), &a) != nil || json.Unmarshal([]byte(got), &h) != nil {
				t.Fatalf("header %q accepted for argument %s", header, arg)
			}
			ai, err1 := a.Float64()
			hi, err2 := h.Float64()
			if err1 != nil || err2 != nil || ai != hi {
				t.Fatalf("header %q accepted for argument %s", header, arg)
			}
		default:
			if got != arg {
				t.Fatalf("header %q accepted for argument %s", header, arg)
			}
		}
	})
}
