package gateway

import (
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestConfirmRefusesIntegersBeyondDoubles: a person is never asked to confirm, in the client's
// form or on the approval page, arguments holding an integer literal beyond ±2^53: the person
// would approve 12345678901234567 as shown, while a backend that reads JSON numbers as doubles
// (JavaScript's JSON.parse, a Go interface{}) acts on 12345678901234568. Such a call is refused
// with 400/-32602 saying why, and reaches no backend. So is a fraction or an exponent that no
// double says (12345678901234567.0: decimal decoders such as Python's Decimal read the literal,
// decoders into doubles 12345678901234568; 1e400 is no double). 2^53 itself and numbers a double
// says exactly as written, whatever the spelling (12345678901234568.0, 0.1, 1e2), are asked.
func TestConfirmRefusesIntegersBeyondDoubles(t *testing.T) {
	iss := newIssuer(t)
	alpha := mcptest.StartServer(t, "alpha")
	// echo is confirmed on the page; add too, or in the form of a client without URL elicitation.
	gw := approvalRulesGateway(t, iss, alpha)
	tok := mintFor(t, iss, "alice")
	for _, tc := range []struct{ tool, meta string }{{"alpha__echo", urlElicitMeta}, {"alpha__add", elicitMeta}} {
		for _, n := range []string{"12345678901234567", "-9007199254740993", "9007199254740993", "100000000000000000000000",
			"12345678901234567.0", "1.2345678901234567e16", "0.10000000000000001", "1e400"} {
			for _, args := range []string{`{"text":"x","n":` + n + `}`, `{"text":"x","deep":[{"n":` + n + `}]}`} {
				status, r := callWithMeta(t, gw, tok, tc.meta, tc.tool, args, "")
				if status != 400 || r.Error == nil || r.Error.Code != -32602 || !strings.Contains(r.Error.Message, "cannot be confirmed") ||
					strings.Contains(r.Error.Message, n) {
					t.Errorf("%s %s: %d %+v %+v", tc.tool, args, status, r.Error, r.Result)
				}
			}
		}
		for _, n := range []string{"9007199254740992", "-9007199254740992", "12345678901234568.0", "1.2345678901234568e16", "42", "0.1", "1e2"} {
			if _, r := callWithMeta(t, gw, tok, tc.meta, tc.tool, `{"text":"x","n":`+n+`}`, ""); r.Result.ResultType != "input_required" {
				t.Errorf("%s %s: %+v %+v", tc.tool, n, r.Error, r.Result)
			}
		}
	}
	if n := toolCalls(alpha); n != 0 {
		t.Errorf("the backend got %d calls", n)
	}
}

// TestConfirmRefusesNumbersBeyondDoublesInForwardedMembers: the members of a request beside its
// arguments that the backend receives (a vendor's _meta key, a params member the gateway does
// not know) are shown to the person with the arguments, so a number in them that parsers read
// as different values is refused as in the arguments, in the form and on the page; a number
// every parser reads alike is asked.
func TestConfirmRefusesNumbersBeyondDoublesInForwardedMembers(t *testing.T) {
	iss := newIssuer(t)
	alpha := mcptest.StartServer(t, "alpha")
	gw := approvalRulesGateway(t, iss, alpha)
	tok := mintFor(t, iss, "alice")
	for _, tc := range []struct{ tool, caps string }{{"alpha__echo", `{"elicitation":{"url":{}}}`}, {"alpha__add", `{"elicitation":{}}`}} {
		meta := func(own string) string {
			return `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` +
				tc.caps + own + `}`
		}
		for _, n := range []string{"9007199254740993", "12345678901234567.0", "0.10000000000000001", "1e400"} {
			for _, where := range []struct{ meta, extra string }{
				{meta(`,"com.example/limit":` + n), ""},
				{meta(""), `,"x-limit":[{"n":` + n + `}]`},
			} {
				status, r := callWithMeta(t, gw, tok, where.meta, tc.tool, `{"text":"x"}`, where.extra)
				if status != 400 || r.Error == nil || r.Error.Code != -32602 || !strings.Contains(r.Error.Message, "cannot be confirmed") ||
					strings.Contains(r.Error.Message, n) {
					t.Errorf("%s %s%s: %d %+v %+v", tc.tool, where.meta, where.extra, status, r.Error, r.Result)
				}
			}
		}
		if _, r := callWithMeta(t, gw, tok, meta(`,"com.example/limit":9007199254740992`), tc.tool, `{"text":"x"}`, `,"x-limit":0.1`); r.Result.ResultType != "input_required" {
			t.Errorf("%s: numbers read alike: %+v %+v", tc.tool, r.Error, r.Result)
		}
	}
	if n := toolCalls(alpha); n != 0 {
		t.Errorf("the backend got %d calls", n)
	}
}
