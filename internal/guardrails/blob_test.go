package guardrails

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// A blob whose bytes are text (its mimeType says so, or its bytes are UTF-8 whatever the
// mimeType says) is scanned as the text it decodes to, in every place binary content stands;
// binary bytes pass unscanned; a blob no decoder reads alike, or text in an encoding the
// detectors do not read, fails the check.
func TestBlobReadAsText(t *testing.T) {
	const key = "AKIAIOSFODNN7EXAMPLE"
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	secret := b64("config:\n  region: eu\n  key: " + key + "\n")
	png := b64("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + key)
	res := func(mime, blob string) string {
		return `{"contents":[{"uri":"mem://x","mimeType":` + jsonString(mime) + `,"blob":"` + blob + `"}]}`
	}
	found := []struct{ name, raw, path string }{
		{"text/plain", res("text/plain", secret), "/contents/0/blob"},
		{"json with charset", res("Application/JSON; charset=\"UTF-8\"", secret), "/contents/0/blob"},
		{"svg", res("image/svg+xml", secret), "/contents/0/blob"},
		{"vendor +json", res("application/vnd.x+json", secret), "/contents/0/blob"},
		{"no mimeType", `{"contents":[{"uri":"mem://x","blob":"` + secret + `"}]}`, "/contents/0/blob"},
		{"a lying image", res("image/png", secret), "/contents/0/blob"},
		{"image data, lying", `{"content":[{"type":"image","mimeType":"image/png","data":"` + secret + `"}]}`, "/content/0/data"},
		{"audio data, lying", `{"content":[{"type":"audio","mimeType":"audio/wav","data":"` + secret + `"}]}`, "/content/0/data"},
		{"embedded resource", `{"content":[{"type":"resource","resource":{"uri":"m://x","mimeType":"text/markdown","blob":"` + secret + `"}}]}`, "/content/0/resource/blob"},
		{"prompt message", `{"messages":[{"role":"user","content":{"type":"resource","resource":{"uri":"m://x","blob":"` + secret + `"}}}]}`, "/messages/0/content/resource/blob"},
		{"sampling request", `{"resultType":"input_required","inputRequests":{"s":{"method":"sampling/createMessage","params":{"messages":[` +
			`{"role":"user","content":{"type":"image","data":"` + secret + `","mimeType":"image/png"}}]}}}}`, "/inputRequests/s/params/messages/0/content/data"},
		{"url alphabet, unpadded, line breaks", res("text/plain", strings.TrimRight(strings.NewReplacer("+", "-", "/", "_").Replace(secret[:12]+`\n`+secret[12:]), "=")), "/contents/0/blob"},
		{"escaped characters", res("text/plain", `\u0051`+secret[1:]), "/contents/0/blob"},
		{"mimeType spelt otherwise", `{"contents":[{"uri":"mem://x","MimeType":"text/plain","blob":"` + secret + `"}]}`, "/contents/0/blob"},
		{"far into a long blob", res("text/plain", b64(strings.Repeat("lorem ipsum dolor. ", 9000)+key)), "/contents/0/blob"},
		// U+FFFD (three bytes) split by the decoder's 3 KiB chunks is text as it is anywhere else.
		{"a replacement character across chunks", res("image/png", b64(strings.Repeat("x", 3<<10-1)+"\uFFFD "+key)), "/contents/0/blob"},
	}
	r := testEngine(t, everything("block")).Rule(KindTool, "b", "t")
	for _, c := range found {
		rep := r.ScanResult([]byte(c.raw))
		if rep.Action != Block || rep.Err != nil || rep.Counts[DetAWSAccessKey] != 1 || rep.First(Block).Path != c.path {
			t.Errorf("%s: %v %v %+v, want the key found at %s", c.name, rep.Action, rep.Err, rep.Findings, c.path)
		}
	}
	// The params of a request relayed to the client (a pre-2026 backend's sampling request)
	// hold content blocks as a result does.
	asked := `{"messages":[{"role":"user","content":{"type":"image","mimeType":"image/png","data":"` + secret + `"}}]}`
	if rep := r.ScanNotification([]byte(asked)); rep.Counts[DetAWSAccessKey] != 1 || rep.First(Block).Path != "/messages/0/content/data" {
		t.Errorf("a relayed sampling request's image: %+v %v", rep.Findings, rep.Err)
	}
	if rep := r.ScanResult([]byte(res("image/png", png))); !rep.Clean() {
		t.Errorf("binary bytes scanned: %+v %v", rep.Findings, rep.Err)
	}
	failed := []struct{ name, raw, why string }{
		{"padding inside", res("image/png", b64(key)+b64("more")), "not base64"},
		{"not base64", res("text/plain", "AKIA!IOSF"), "not base64"},
		{"a lone sextet", res("image/png", "QUtJQ"), "not base64"},
		{"utf-16", res("text/plain; charset=utf-16", secret), "charset other"},
		{"latin-1 named", res("text/csv;charset=ISO-8859-1", b64("caf\xe9")), "charset other"},
		{"text not UTF-8", res("text/plain", b64("caf\xe9 "+key)), "not UTF-8"},
		{"text with a NUL", res("application/json", b64("{}\x00"+key)), "not UTF-8"},
	}
	for _, c := range failed {
		rep := r.ScanResult([]byte(c.raw))
		if !rep.Blocked() || !errors.Is(rep.Err, ErrUnreadableContent) || !strings.Contains(rep.Err.Error(), c.why) ||
			!strings.HasSuffix(rep.Err.Error(), " at /contents/0/blob") {
			t.Errorf("%s: %v %v, want the check failed (%s)", c.name, rep.Action, rep.Err, c.why)
		}
	}
}

// A redaction in a blob's text is written back as the blob, base64 of the text with the
// marker in place of the match; a match hidden by a default-ignorable character refuses it.
func TestBlobRedacted(t *testing.T) {
	const key = "AKIAIOSFODNN7EXAMPLE"
	r := testEngine(t, everything("redact")).Rule(KindTool, "b", "t")
	text := "key: " + key + ", mail ada@example.org\n"
	raw := `{"contents":[{"uri":"mem://x","mimeType":"text/plain","blob":"` + base64.RawURLEncoding.EncodeToString([]byte(text)) + `"}]}`
	rep := r.ScanResult([]byte(raw))
	out, changed := rep.RewriteResult([]byte(raw), nil, 0)
	var got struct {
		Contents []struct{ Blob []byte }
	}
	if !changed || json.Unmarshal(out, &got) != nil || len(got.Contents) != 1 ||
		string(got.Contents[0].Blob) != "key: [REDACTED:aws-access-key], mail [REDACTED:email]\n" {
		t.Fatalf("redacted blob: %s", out)
	}
	hidden := `{"contents":[{"uri":"mem://x","mimeType":"text/plain","blob":"` +
		base64.StdEncoding.EncodeToString([]byte("key: AKIA\u200bIOSFODNN7EXAMPLE")) + `"}]}`
	if rep := r.ScanResult([]byte(hidden)); rep.Action != Block || rep.Counts[DetAWSAccessKey] != 1 {
		t.Fatalf("disguised key in a blob: %v %+v", rep.Action, rep.Findings)
	}
}
