package guardrails

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

// The walker and the rewrite: what a JSON text's strings hold is found wherever it is and
// however it is escaped, redactions leave valid JSON with the typed marker in place of the
// match, the annotation lands in _meta, and a backend's own annotation never survives.

func TestRedactResult(t *testing.T) {
	e := testEngine(t, everything("redact"))
	r := e.Rule(KindTool, "b", "t")
	result := `{"content":[{"type":"text","text":"key AKIAIOSFODNN7EXAMPLE, mail bob@example.org"}],"isError":false}`
	rep := r.ScanResult([]byte(result))
	if rep.Action != Redact || rep.Err != nil {
		t.Fatalf("action %v err %v", rep.Action, rep.Err)
	}
	out, changed := rep.RewriteResult([]byte(result), nil, 0)
	if !changed {
		t.Fatal("nothing rewritten")
	}
	var got struct {
		Content []struct{ Text string } `json:"content"`
		Meta    map[string]annotation   `json:"_meta"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("rewritten result is not JSON: %v\n%s", err, out)
	}
	if want := "key [REDACTED:aws-access-key], mail [REDACTED:email]"; got.Content[0].Text != want {
		t.Errorf("text %q, want %q", got.Content[0].Text, want)
	}
	a := got.Meta[MetaKey]
	if a.Rule != "all" || len(a.Findings) != 2 || a.Findings[0].Path != "/content/0/text" || a.Findings[1].Detector != "email" {
		t.Errorf("annotation %+v", a)
	}
	if strings.Contains(string(out), "AKIA") || strings.Contains(string(out), "bob@") {
		t.Errorf("matched text survived: %s", out)
	}
}

// Escapes cannot hide a match, and the redaction covers exactly the escaped match.
func TestEscapedStrings(t *testing.T) {
	e := testEngine(t, everything("redact"))
	r := e.Rule(KindTool, "b", "t")
	for _, c := range []struct{ name, text, want string }{
		{"unicode escapes", `\u0041KIA\u0049OSFODNN7EXAMPLE\n`, "[REDACTED:aws-access-key]\n"},
		{"escaped bidi", `abc\u202edef`, "abc[REDACTED:bidi]def"},
		{"surrogate pair tag", `x\udb40\udc41y`, "x[REDACTED:invisible]y"},
		{"escaped slash url", `see https:\/\/evil.test\/x now`, "see [REDACTED:link] now"},
		{"quote before", `say \"hi\" to alice@example.org`, `say "hi" to [REDACTED:email]`},
	} {
		t.Run(c.name, func(t *testing.T) {
			raw := `{"content":[{"type":"text","text":"` + c.text + `"}]}`
			rep := r.ScanResult([]byte(raw))
			out, _ := rep.RewriteResult([]byte(raw), nil, 0)
			var got struct {
				Content []struct{ Text string } `json:"content"`
			}
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("not JSON: %v: %s", err, out)
			}
			if got.Content[0].Text != c.want {
				t.Errorf("got %q, want %q", got.Content[0].Text, c.want)
			}
		})
	}
}

// A match that straddles a window of an escaped string is found once, and redacted whole.
func TestWindowBoundaries(t *testing.T) {
	e := testEngine(t, everything("redact"))
	r := e.Rule(KindTool, "b", "t")
	// Escapes throughout, so every window is decoded: one every other byte, and one after
	// runs of plain bytes the decoding copies at once (cut where a window fills up).
	for _, unit := range []string{`a\n`, strings.Repeat("a", 29) + `\n`, strings.Repeat("b", 4000) + `\t`} {
		for _, at := range []int{0, windowStep - 30, windowStep - 5, windowStep, windowStep + 3, 2*windowStep - 10, 3 * windowStep} {
			pad := strings.Repeat(unit, at/len(unit)+1)[:at]
			pad = strings.TrimSuffix(pad, `\`) // not cut inside an escape
			windowAt(t, r, at, pad)
		}
	}
}

// windowAt checks that a key and an address after pad (and a second pad) are found and redacted
// whole.
func windowAt(t *testing.T, r *Rule, at int, pad string) {
	t.Helper()
	text := pad + ` AKIAIOSFODNN7EXAMPLE ` + pad + ` bob@example.org`
	raw := `{"text":"` + text + `"}`
	rep := r.ScanResult([]byte(raw))
	if rep.Counts[DetAWSAccessKey] != 1 || rep.Counts[DetEmail] != 1 {
		t.Fatalf("at %d: counts aws %d email %d", at, rep.Counts[DetAWSAccessKey], rep.Counts[DetEmail])
	}
	out, _ := rep.RewriteResult([]byte(raw), nil, 0)
	var got struct{ Text string }
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("at %d: not JSON: %v", at, err)
	}
	if strings.Contains(got.Text, "AKIA") || !strings.Contains(got.Text, " [REDACTED:aws-access-key] ") {
		t.Errorf("at %d: not redacted whole", at)
	}
}

// A match whose detector reads the text before it (a connection string's password after the
// URL's scheme and user, an assignment's value after its key, an '@' of a URL's authority,
// which is no address) is found as it is wherever a window of an escaped string starts: just
// after the scheme, the key or the user included. Each starts at every offset around the
// first three windows' starts, after a run of two-byte runes or of ASCII, and is found once,
// by its own detector, and redacted whole.
func TestWindowStartsAfterContext(t *testing.T) {
	e := testEngine(t, everything("redact"))
	r := e.Rule(KindTool, "b", "t")
	for _, tt := range []struct {
		text, match string
		det         Detector
	}{
		{"postgres://admin:s3cr3tPassw0rd@db.internal:5432/app", "s3cr3tPassw0rd", DetConnectionString},
		{`db_password = \"hunter2hunter2\"`, "hunter2hunter2", DetConnectionString},
		{"aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", DetAWSSecretKey},
		{"alice.smith@mail.example.org", "alice.smith@mail.example.org", DetEmail},
	} {
		for _, window := range []int{windowStep, 2 * windowStep, 3 * windowStep} {
			for _, pad := range []string{"x", "é"} {
				for d := -len(tt.text) - 2; d <= 2; d++ {
					n := window + d - 2 // the text starts at window+d of the decoded string
					if pad == "é" {
						n /= 2
					}
					text := `\t` + strings.Repeat(pad, n) + " " + tt.text + " " + strings.Repeat("y ", 20000)
					raw := `{"text":"` + text + `"}`
					rep := r.ScanResult([]byte(raw))
					var others int
					for det, c := range rep.Counts {
						if Detector(det) != tt.det {
							others += int(c)
						}
					}
					if rep.Counts[tt.det] != 1 || others != 0 {
						t.Fatalf("%s at %d%+d after %q: found %d, and %d others", tt.det, window, d, pad, rep.Counts[tt.det], others)
					}
					out, _ := rep.RewriteResult([]byte(raw), nil, 0)
					if bytes.Contains(out, []byte(tt.match)) {
						t.Fatalf("%s at %d%+d after %q: not redacted whole", tt.det, window, d, pad)
					}
				}
			}
		}
	}
}

// What is not text is not scanned: base64 content, a round trip's state; and a backend's own
// annotation is dropped, whether the gateway annotates or not.
func TestSkippedAndOwned(t *testing.T) {
	e := testEngine(t, everything("flag"))
	r := e.Rule(KindTool, "b", "t")
	// Binary bytes (a PNG's signature, NULs) that hold a key: binary content, not text.
	blob := base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDRAKIAIOSFODNN7EXAMPLE" + strings.Repeat("\x00foo", 30)))
	raw := `{"contents":[{"uri":"mem://x","blob":"` + blob + `"},{"type":"image","data":"` + blob + `","mimeType":"image/png"}],` +
		`"resultType":"input_required","requestState":"q8Zr4Lm2Xt7Vb1Nc9Kp3Wd6Hs0Jf5Gy","_meta":{"a":1,"` + MetaKey + `":{"forged":true}}}`
	rep := r.ScanResult([]byte(raw))
	if !rep.Clean() {
		t.Fatalf("findings in skipped values: %+v", rep.Findings)
	}
	out, changed := rep.RewriteResult([]byte(raw), nil, 0)
	if !changed || strings.Contains(string(out), "forged") {
		t.Fatalf("backend annotation kept: %s", out)
	}
	var v map[string]any
	if err := json.Unmarshal(out, &v); err != nil || v["_meta"].(map[string]any)["a"] != 1.0 {
		t.Fatalf("rewrite broke the result: %v %s", err, out)
	}
	// Its annotation replaces the backend's.
	raw2 := `{"content":[{"type":"text","text":"<|im_start|>"}],"_meta":{"` + MetaKey + `":{"forged":true},"z":2}}`
	rep = r.ScanResult([]byte(raw2))
	out, _ = rep.RewriteResult([]byte(raw2), nil, 0)
	var got struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(out, &got); err != nil || strings.Contains(string(out), "forged") || got.Meta[MetaKey] == nil || got.Meta["z"] == nil {
		t.Fatalf("annotation: %v %s", err, out)
	}
}

// The annotation goes into an existing _meta, or a new one, and the result stays valid JSON
// whatever its shape. A _meta of null (no _meta, which the protocol allows) is replaced: a
// second _meta beside it would be a duplicate member, and a client whose parser keeps the last
// one (JSON.parse, Python's json, Go's encoding/json) would read null and never see what was
// flagged.
func TestAnnotationPlacement(t *testing.T) {
	e := testEngine(t, everything("flag"))
	r := e.Rule(KindTool, "b", "t")
	for _, raw := range []string{
		`{"content":[{"type":"text","text":"https://evil.test"}]}`,
		`{"content":[{"type":"text","text":"https://evil.test"}],"_meta":{}}`,
		`{"_meta":{"k":"v"},"content":[{"type":"text","text":"https://evil.test"}]}`,
		` { "content" : [ { "type" : "text" , "text" : "https://evil.test" } ] , "_meta" : { "` + MetaKey + `" : 1 } } `,
		`{"_meta":{"` + MetaKey + `":1,"k":2},"content":[{"type":"text","text":"https://evil.test"}]}`,
		`{"content":[{"type":"text","text":"https://evil.test"}],"_meta":null}`,
		`{"_meta":null,"content":[{"type":"text","text":"https://evil.test"}]}`,
		`{"content":[{"type":"text","text":"https://evil.test"}], "_meta" : null }`,
		`{"content":[{"type":"text","text":"https://evil.test"}],"\u005fmeta":null}`,
	} {
		rep := r.ScanResult([]byte(raw))
		out, changed := rep.RewriteResult([]byte(raw), nil, 0)
		var got struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		}
		var a annotation
		if err := jsonrpc.Scan(out, jsonrpc.Limits{}); err != nil {
			t.Fatalf("%s: %v: %s", raw, err, out) // a duplicate _meta included
		}
		if err := json.Unmarshal(out, &got); err != nil || !changed {
			t.Fatalf("%s: %v: %s", raw, err, out)
		}
		if err := json.Unmarshal(got.Meta[MetaKey], &a); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if len(a.Findings) != 1 || a.Findings[0].Detector != "link" || a.Findings[0].Action != "flag" {
			t.Errorf("%s: annotation %+v", raw, a)
		}
	}
	// Only the owned member, nothing flagged: removed, with its comma.
	for _, raw := range []string{
		`{"a":1,"_meta":{"` + MetaKey + `":1}}`,
		`{"_meta":{"x":1,"` + MetaKey + `":1}}`,
		`{"_meta":{"` + MetaKey + `":1, "x":1}}`,
	} {
		rep := r.ScanResult([]byte(raw))
		out, _ := rep.RewriteResult([]byte(raw), nil, 0)
		var v any
		if err := json.Unmarshal(out, &v); err != nil || strings.Contains(string(out), MetaKey) {
			t.Errorf("%s: %v: %s", raw, err, out)
		}
	}
}

// What a result had redacted or flagged is in its annotation even past the findings a report
// lists (its first 64): after as many that were only logged, a redaction is counted (more), and
// the result, whatever its _meta, stays one valid JSON object. It used to be named nowhere, and
// a _meta with members became {,"k":1}, which no client parses.
func TestAnnotationPastListedFindings(t *testing.T) {
	cfg := &Config{Rules: []RuleConfig{{ID: "r", Tools: []string{"*"},
		Results: DirectionConfig{Secrets: "log", PII: "redact", Injection: "flag"}}}}
	r := testEngine(t, cfg).Rule(KindTool, "b", "t")
	logged := strings.Repeat("AKIAIOSFODNN7EXAMPLE ", maxRecorded)
	for _, last := range []string{"bob@example.org", "<|im_start|>"} {
		for _, meta := range []string{``, `,"_meta":{"k":1}`, `,"_meta":{}`, `,"_meta":null`, `,"_meta":{"k":1,"` + MetaKey + `":2}`} {
			raw := `{"content":[{"type":"text","text":"` + logged + last + `"}]` + meta + `}`
			rep := r.ScanResult([]byte(raw))
			out, _ := rep.RewriteResult([]byte(raw), nil, 0)
			if err := jsonrpc.Scan(out, jsonrpc.Limits{}); err != nil {
				t.Fatalf("%s%s: %v: %s", last, meta, err, out[len(logged):])
			}
			var got struct {
				Meta map[string]json.RawMessage `json:"_meta"`
			}
			var a annotation
			if err := json.Unmarshal(out, &got); err != nil || json.Unmarshal(got.Meta[MetaKey], &a) != nil {
				t.Fatalf("%s%s: %v: %s", last, meta, err, out[len(logged):])
			}
			if a.Rule != "r" || a.More != 1 || a.Findings == nil {
				t.Errorf("%s%s: annotation %+v: %s", last, meta, a, out[len(logged):])
			}
		}
	}
}

// A result of 50 MB is scanned in bounded memory: the check allocates a small fraction of it,
// with escapes throughout (decoded window by window) or without (scanned in place).
func TestLargeResultBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("50 MB")
	}
	e := testEngine(t, everything("redact"))
	r := e.Rule(KindTool, "b", "t")
	const size = 50 << 20
	for _, unit := range []string{"plain text without escapes. ", `escaped \"text\"\n with escapes `} {
		raw := []byte(`{"content":[{"type":"text","text":"` + strings.Repeat(unit, size/len(unit)) + ` AKIAIOSFODNN7EXAMPLE"}]}`)
		r.ScanResult(raw[:200]) // warm the pool
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		rep := r.ScanResult(raw)
		runtime.ReadMemStats(&after)
		if rep.Counts[DetAWSAccessKey] != 1 || rep.Err != nil {
			t.Fatalf("the key at the end was not found: %+v", rep)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
			t.Errorf("scanning %d bytes allocated %d bytes; want under 1 MiB", len(raw), alloc)
		}
	}
}

// JSON nested deeper than the walker follows fails the check (and so blocks), never a crash.
func TestTooDeep(t *testing.T) {
	e := testEngine(t, everything("log"))
	r := e.Rule(KindTool, "b", "t")
	raw := strings.Repeat(`{"a":`, maxDepth+2) + `"x"` + strings.Repeat("}", maxDepth+2)
	if rep := r.ScanResult([]byte(raw)); rep.Err == nil || !rep.Blocked() {
		t.Fatalf("err %v", rep.Err)
	}
}

// The bound is the documented one (docs/guardrails.md: "JSON nested deeper than 256 fails the
// check"): 256 levels are checked, 257 are not.
func TestDepthBoundIsDocumented(t *testing.T) {
	r := testEngine(t, everything("log")).Rule(KindTool, "b", "t")
	nest := func(n int) []byte {
		return []byte(strings.Repeat(`{"a":`, n-1) + `["AKIAIOSFODNN7EXAMPLE"]` + strings.Repeat("}", n-1))
	}
	if rep := r.ScanResult(nest(256)); rep.Err != nil || rep.Counts[DetAWSAccessKey] != 1 {
		t.Errorf("256 levels: err %v, counts %v", rep.Err, rep.Counts[DetAWSAccessKey])
	}
	if rep := r.ScanResult(nest(257)); rep.Err == nil || !rep.Blocked() {
		t.Errorf("257 levels: err %v, want a blocking error", rep.Err)
	}
}

// A report lists its first 64 findings and counts all of them (docs/guardrails.md).
func TestReportListsFirst64(t *testing.T) {
	r := testEngine(t, everything("log")).Rule(KindTool, "b", "t")
	raw := `{"text":"` + strings.Repeat("a@example.org ", 100) + `"}`
	rep := r.ScanResult([]byte(raw))
	if len(rep.Findings) != 64 || rep.Counts[DetEmail] != 100 {
		t.Fatalf("%d findings listed, %d counted; want 64 and 100", len(rep.Findings), rep.Counts[DetEmail])
	}
}

// A message that would need more than 10,000 redactions (docs/guardrails.md) is blocked; one
// that needs 10,000 is redacted.
func TestTooManyRedactions(t *testing.T) {
	e := testEngine(t, everything("redact"))
	r := e.Rule(KindTool, "b", "t")
	raw := `{"text":"` + strings.Repeat("a@example.org ", 10_001) + `"}`
	if rep := r.ScanResult([]byte(raw)); rep.Err != ErrTooManyFindings || !rep.Blocked() {
		t.Fatalf("err %v", rep.Err)
	}
	raw = `{"text":"` + strings.Repeat("a@example.org ", 10_000) + `"}`
	if rep := r.ScanResult([]byte(raw)); rep.Err != nil || rep.Blocked() || !rep.Redacted() {
		t.Fatalf("10,000 redactions: err %v, blocked %v", rep.Err, rep.Blocked())
	}
}

// A backend's own annotation is passed over, not walked: however deep it nests, it is removed
// and the rest of the result is checked, rather than the result failing as too deep to check.
func TestOwnedPassedOverAtAnyDepth(t *testing.T) {
	e := testEngine(t, everything("flag"))
	r := e.Rule(KindTool, "b", "t")
	deep := strings.Repeat(`{"a":`, maxDepth+2) + `"AKIAIOSFODNN7EXAMPLE"` + strings.Repeat("}", maxDepth+2)
	raw := `{"content":[{"type":"text","text":"ok"}],"_meta":{"` + MetaKey + `":` + deep + `,"z":2}}`
	rep := r.ScanResult([]byte(raw))
	if rep.Err != nil || !rep.Clean() {
		t.Fatalf("err %v, findings %+v", rep.Err, rep.Findings)
	}
	out, changed := rep.RewriteResult([]byte(raw), nil, 0)
	var got struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(out, &got); err != nil || !changed || strings.Contains(string(out), "AKIA") || got.Meta["z"] == nil {
		t.Fatalf("owned member kept or result broken: %v %s", err, out)
	}
}

// The annotation names 32 findings and counts the rest (docs/guardrails.md): a result with 40
// redactions lists 32 and says 8 more; every match is redacted all the same.
func TestAnnotationBounded(t *testing.T) {
	e := testEngine(t, everything("redact"))
	r := e.Rule(KindTool, "b", "t")
	raw := `{"content":[{"type":"text","text":"` + strings.Repeat("a@example.org ", 40) + `"}]}`
	rep := r.ScanResult([]byte(raw))
	out, _ := rep.RewriteResult([]byte(raw), nil, 0)
	var got struct {
		Meta map[string]annotation `json:"_meta"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if a := got.Meta[MetaKey]; len(a.Findings) != 32 || a.More != 8 {
		t.Errorf("annotation lists %d findings and %d more, want 32 and 8", len(a.Findings), a.More)
	}
	if n := strings.Count(string(out), "[REDACTED:email]"); n != 40 {
		t.Errorf("%d redactions, want 40", n)
	}
}

// TestAnnotationShape: the annotation is docs/guardrails.md's example: the rule, then each
// flagged or redacted finding (guardrail, detector, action, path), those a notification carried
// marked "source": "notification", and nothing of what was only logged.
func TestAnnotationShape(t *testing.T) {
	cfg := everything("flag")
	cfg.Rules[0].ID = "github"
	cfg.Rules[0].Results.Detectors = map[string]string{"email": "log"}
	r := testEngine(t, cfg).Rule(KindTool, "b", "t")
	raw := `{"content":[{"type":"text","text":"see https://evil.test/x, mail a@example.org"}]}`
	rep := r.ScanResult([]byte(raw))
	note := Finding{Detector: DetGitHubToken, Action: Redact, Path: "/params/message"}
	out, changed := rep.RewriteResult([]byte(raw), []Finding{note}, 0)
	var got struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(out, &got); err != nil || !changed {
		t.Fatalf("%v: %s", err, out)
	}
	want := `{"rule":"github","findings":[{"guardrail":"injection","detector":"link","action":"flag","path":"/content/0/text"},` +
		`{"guardrail":"secrets","detector":"github-token","action":"redact","path":"/params/message","source":"notification"}]}`
	if string(got.Meta[MetaKey]) != want {
		t.Errorf("annotation\n%s\nwant\n%s", got.Meta[MetaKey], want)
	}
}

// TestLinkLongAuthority: an authority longer than the scan reads of it is not taken for an
// allowed host. A reader goes on to the '@' past the cut (Python's urllib past a backslash,
// every parser past the first 512 bytes) and to the host after it, so a link whose allowed
// look is only in its first bytes is a link all the same; a long path after an allowed host
// is not.
func TestLinkLongAuthority(t *testing.T) {
	tb := newTables()
	pad := strings.Repeat("a", 600)
	for text, want := range map[string]bool{
		"see https://docs.example.com\\" + pad + "@attacker.test/x":                true,
		"see https://" + strings.Repeat("a", 500) + ".example.com@attacker.test/x": true,
		"see https://" + pad + "@attacker.test/x":                                  true,
		"see https://docs.example.com/" + pad + "@attacker.test/x":                 false,
		"see https://docs.example.com\\" + pad:                                     true,
		"see https://docs.example.com\\docs\\page":                                 false,
	} {
		got := false
		for _, m := range scanString(tb, text, setOf(DetLink)) {
			got = got || m.det == DetLink
		}
		if got != want {
			t.Errorf("link found %v, want %v, in %.60q…", got, want, text)
		}
	}
}

// TestLinkAnySlashes: a browser passes over any run of slashes and backslashes after an http(s)
// scheme's colon, however long, so such a run before a host not allowed is a link.
func TestLinkAnySlashes(t *testing.T) {
	tb := newTables()
	for _, n := range []int{1, 2, 8, 9, 40} {
		for _, sep := range []string{"/", "\\", "/\\"} {
			text := "see https:" + strings.Repeat(sep, n) + "attacker.test/x"
			found := false
			for _, m := range scanString(tb, text, setOf(DetLink)) {
				found = found || m.det == DetLink
			}
			if !found {
				t.Errorf("no link found in %q", text)
			}
			if text := "see https:" + strings.Repeat(sep, n) + "docs.example.com/x"; len(scanString(tb, text, setOf(DetLink))) != 0 {
				t.Errorf("link found in %q, whose host is allowed", text)
			}
		}
	}
}
