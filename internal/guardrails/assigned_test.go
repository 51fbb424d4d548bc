package guardrails

import (
	"encoding/json"
	"strings"
	"testing"
)

// A secret recognised by the name it is given is found whether the name and the value are one
// string of text or a member of a JSON object: a tool result's structuredContent and the text
// content that serializes it agree (both found, by the same detector, and redacted), and so
// does a client's arguments object. A number under such a name is replaced with a string; a
// name that names no secret, a placeholder and a working directory are left alone. The
// assignment detectors used to read the member form not at all: the text was redacted while the
// structuredContent beside it reached the client as the backend wrote it.
func TestAssignedMembersAgreeWithText(t *testing.T) {
	e := testEngine(t, &Config{Rules: []RuleConfig{{ID: "r", Tools: []string{"*"},
		Arguments: DirectionConfig{Secrets: "redact"}, Results: DirectionConfig{Secrets: "redact"}}}})
	r := e.Rule(KindTool, "b", "t")
	for _, c := range []struct {
		name  string
		value any
		det   Detector
	}{
		{"aws_secret_access_key", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", DetAWSSecretKey},
		{"password", "Xy7#kq9!Lm2$Qw", DetConnectionString},
		{"db_password", "hunter2hunter2", DetConnectionString},
		{"SMTP_PASS", "s3cret-s3cret", DetConnectionString},
		{"dbPwd", "correct horse battery", DetConnectionString},
		{"AccountKey", "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==", DetAzureStorageKey},
		{"password", 83125587, DetConnectionString},
		{"p\u0061ssword", "with \"quotes\" \\ and escapes", DetConnectionString},
	} {
		obj, _ := json.Marshal(map[string]any{c.name: c.value})
		text, _ := json.Marshal(string(obj))
		raw := `{"content":[{"type":"text","text":` + string(text) + `}],"structuredContent":` + string(obj) + `}`
		rep := r.ScanResult([]byte(raw))
		if rep.Counts[c.det] != 2 {
			t.Errorf("%s: %v found %d times in the text and the structuredContent, want 2: %+v", c.name, c.det, rep.Counts[c.det], rep.Findings)
			continue
		}
		out, _ := rep.RewriteResult([]byte(raw), nil, 0)
		var got struct {
			StructuredContent map[string]any `json:"structuredContent"`
		}
		if err := json.Unmarshal(out, &got); err != nil || got.StructuredContent[c.name] != "[REDACTED:"+c.det.String()+"]" {
			t.Errorf("%s: the redacted result %s (%v)", c.name, out, err)
		}
		args := r.ScanArguments(obj)
		if v := string(args.Rewrite(obj)); args.Counts[c.det] != 1 || strings.Contains(v, "hunter2") || !strings.Contains(v, "[REDACTED:") {
			t.Errorf("%s: the arguments %s rewritten as %s", c.name, obj, v)
		}
	}
	for _, raw := range []string{
		`{"password":"****"}`, `{"password":"<password>"}`, `{"PWD":"/home/alice"}`, `{"first_pass":"something long"}`,
		`{"keyword":"hunter2hunter2"}`, `{"password":{"min":12}}`, `{"password":true}`, `{"password":["a list"]}`,
	} {
		if rep := r.ScanArguments([]byte(raw)); !rep.Clean() {
			t.Errorf("%s: %+v", raw, rep.Findings)
		}
	}
}
