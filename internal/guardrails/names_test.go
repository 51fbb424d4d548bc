package guardrails

import (
	"strings"
	"testing"
)

// A credential or personal data in a member name is found as in a value, in arguments and
// results; where a rule redacts, the message is blocked rather than its names rewritten (two
// names redacted alike would make one member of two); and the finding's path is the object's,
// so no refusal or annotation repeats the name.
func TestMemberNamesScanned(t *testing.T) {
	redact := testEngine(t, everything("redact")).Rule(KindTool, "b", "t")
	flag := testEngine(t, everything("flag")).Rule(KindTool, "b", "t")
	for _, c := range []struct{ raw, path string }{
		{`{"AKIAIOSFODNN7EXAMPLE":1}`, ""},
		{`{"env":{"ghp_R2d2C3poB8bYodaL3ia0rganaSolo12345ab":""}}`, "/env"},
		{`{"m":{"alice@example.org":"x","bob@example.org":"y"}}`, "/m"},
		{`{"list":[{"\u0041KIAIOSFODNN7EXAMPLE":true}]}`, "/list/0"},
	} {
		rep := redact.ScanArguments([]byte(c.raw))
		if rep.Action != Block || rep.Redacted() || len(rep.Findings) == 0 || rep.Findings[0].Path != c.path ||
			rep.Findings[0].Action != Block {
			t.Errorf("arguments %s: %v, redacted %v, findings %+v", c.raw, rep.Action, rep.Redacted(), rep.Findings)
		}
		result := `{"content":[],"structuredContent":` + c.raw + `}`
		if rep := redact.ScanResult([]byte(result)); rep.Action != Block {
			t.Errorf("result %s: %v", result, rep.Action)
		}
		rep = flag.ScanResult([]byte(result))
		out, _ := rep.RewriteResult([]byte(result), nil, 0)
		if rep.Action != Flag || !strings.Contains(string(out), `"path":"/structuredContent`) {
			t.Errorf("flagged result %s: %v %s", result, rep.Action, out)
		}
	}
	// A name that holds nothing is no finding, and a redaction in a value stays a redaction.
	rep := redact.ScanArguments([]byte(`{"aws_access_key_id_hint":"x","note":"key AKIAIOSFODNN7EXAMPLE"}`))
	if rep.Action != Redact || !rep.Redacted() {
		t.Errorf("a value's redaction: %v", rep.Action)
	}
}
