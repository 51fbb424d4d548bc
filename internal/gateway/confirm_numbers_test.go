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
