package logging

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestErrorURLsRedacted: a URL in an error's text reaches no line but as configerr.URL quotes
// it (no user information, query value or secret path segment), in both formats and on both
// paths of the JSON handler, whether the error is logged as itself, as its text under "error"
// or "err", wrapped, or in a With; the gateway's own values (a subject, an issuer) stay as
// they are, and so does the rest of the line.
func TestErrorURLsRedacted(t *testing.T) {
	const canary = "CANARYq8Zt3Lm9Rw2Px7"
	target := "http://u:" + canary + "@127.0.0.1:0/hook/" + canary + "/mcp?key=" + canary
	_, clientErr := http.Post(target, "application/json", nil) // port 0: refused at once
	if clientErr == nil || !strings.Contains(clientErr.Error(), canary) {
		t.Fatalf("the client's error does not repeat the URL, nothing to test: %v", clientErr)
	}
	const subject = "https://idp.example/realms/a?tenant=t#alice" // a subject is not an error
	for _, format := range []string{FormatJSON, FormatText} {
		var out bytes.Buffer
		log, err := NewLogger(&out, "info", format)
		if err != nil {
			t.Fatal(err)
		}
		log.Info("as error", "error", clientErr, "subject", subject)
		log.Info("as text", "error", clientErr.Error(), "subject", subject)
		log.Info("as err", "err", clientErr.Error())
		log.Info("wrapped", "error", fmt.Errorf("probe: %w", clientErr))
		log.With("error", clientErr.Error()).Info("with")
		log.With("error", errors.New(target)).Info("with error")
		log.WithGroup("g").Info("group", "error", clientErr.Error())
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if len(lines) != 7 {
			t.Fatalf("%s: %d lines:\n%s", format, len(lines), out.String())
		}
		for _, line := range lines {
			if strings.Contains(line, canary) {
				t.Errorf("%s: %s", format, line)
			}
			if !strings.Contains(line, "127.0.0.1:0/hook/REDACTED/REDACTED?key=REDACTED") {
				t.Errorf("%s: the URL's host and shape are gone: %s", format, line)
			}
		}
		if !strings.Contains(lines[0], subject) {
			t.Errorf("%s: the subject changed: %s", format, lines[0])
		}
	}
}

// TestErrorListURLsRedacted: a []error attribute (one error per backend, say) reaches no line
// with a URL but as configerr.URL quotes it, in both formats, and each error's text is there;
// the whole stays within MaxValueBytes. (The text format printed each error whole.)
func TestErrorListURLsRedacted(t *testing.T) {
	const canary = "CANARYk2Vb8Qn4Hs6Jd1"
	errs := []error{
		fmt.Errorf("first: Post %q: refused", "https://u:"+canary+"@a.example/mcp?key="+canary),
		nil,
		errors.New("second: http://b.example:8080/hook/" + canary + "x9Yq2Lr7Mt3Wz"),
	}
	many := make([]error, 200)
	for i := range many {
		many[i] = errors.New("https://c.example/p?token=" + canary)
	}
	for _, format := range []string{FormatJSON, FormatText} {
		var out bytes.Buffer
		log, err := NewLogger(&out, "info", format)
		if err != nil {
			t.Fatal(err)
		}
		log.Info("several", "errors", errs)
		log.Info("many", "errors", many)
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if len(lines) != 2 {
			t.Fatalf("%s: %d lines:\n%s", format, len(lines), out.String())
		}
		for _, line := range lines {
			if strings.Contains(line, canary) {
				t.Errorf("%s: a URL is written whole: %s", format, line)
			}
		}
		for _, want := range []string{"first: Post", "a.example/mcp?key=REDACTED", "<nil>", "second: http://b.example:8080/hook/"} {
			if !strings.Contains(lines[0], want) {
				t.Errorf("%s: %q is missing: %s", format, want, lines[0])
			}
		}
		if len(lines[1]) > 2*MaxValueBytes {
			t.Errorf("%s: 200 errors make a line of %d bytes", format, len(lines[1]))
		}
	}
}
