package backend

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// TestScrubBodyFindsFormsAcrossReads: the scrubber overwrites every form of a credential
// however the body's bytes arrive (one at a time, halves, the last with io.EOF), keeps the
// body's length and every other byte, and passes the body's error on.
func TestScrubBodyFindsFormsAcrossReads(t *testing.T) {
	const secret = `s3cret&"/token-0123456789`
	forms := credentialForms("Bearer " + secret)
	escaped, _ := json.Marshal(secret)
	twice, _ := json.Marshal(string(escaped))
	body := strings.Repeat("a", scrubChunk-5) + "Bearer " + secret + " then " + string(escaped) + ", " + string(twice) +
		strings.Repeat("b", 2*scrubChunk) + secret
	for name, wrap := range map[string]func(io.Reader) io.Reader{
		"whole":    func(r io.Reader) io.Reader { return r },
		"one byte": iotest.OneByteReader,
		"halves":   iotest.HalfReader,
		"EOF":      iotest.DataErrReader,
	} {
		got, err := io.ReadAll(newScrubBody(io.NopCloser(wrap(strings.NewReader(body))), forms, -1))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		// A short body of known length is read in a buffer of its size.
		short := "{" + secret + "}"
		if got, err := io.ReadAll(newScrubBody(io.NopCloser(wrap(strings.NewReader(short))), forms, int64(len(short)))); err != nil ||
			string(got) != "{"+strings.Repeat(scrubbedText, 4)[:len(secret)]+"}" {
			t.Errorf("%s: a short body of known length: %q, %v", name, got, err)
		}
		if len(got) != len(body) {
			t.Errorf("%s: %d bytes, want %d", name, len(got), len(body))
		}
		for _, f := range forms {
			if bytes.Contains(got, f) {
				t.Errorf("%s: %q is left in the body", name, f)
			}
		}
		if strings.Count(string(got), scrubbedText) < 4 || !bytes.HasPrefix(got, []byte(strings.Repeat("a", scrubChunk-5)+scrubbedText)) ||
			!bytes.Contains(got, []byte(" then ")) || !bytes.Contains(got, []byte(strings.Repeat("b", 2*scrubChunk))) {
			t.Errorf("%s: the body around the credential changed: %.200q", name, got[scrubChunk-20:])
		}
	}
	broken := iotest.TimeoutReader(strings.NewReader(body))
	if _, err := io.ReadAll(newScrubBody(io.NopCloser(broken), forms, int64(len(body)))); err != iotest.ErrTimeout {
		t.Errorf("a failing body: %v, want its error", err)
	}
}

// TestCredentialForms: the forms of a header value are its credential after the scheme, a Basic
// credential's user:password and password, as written and as JSON writes them once or twice;
// nothing shorter than MinScrubbedBytes, so a short user name is no form.
func TestCredentialForms(t *testing.T) {
	has := func(forms [][]byte, s string) bool {
		for _, f := range forms {
			if string(f) == s {
				return true
			}
		}
		return false
	}
	forms := credentialForms("Basic " + "Z3c6cGEvc3N3MHJkJjEyMzQ=") // gw:pa/ssw0rd&1234
	for _, want := range []string{"Basic Z3c6cGEvc3N3MHJkJjEyMzQ=", "Z3c6cGEvc3N3MHJkJjEyMzQ=", "gw:pa/ssw0rd&1234", "pa/ssw0rd&1234",
		`pa\/ssw0rd\u00261234`, `pa/ssw0rd\u00261234`, `pa/ssw0rd\\u00261234`, `pa\\/ssw0rd\\u00261234`} {
		if !has(forms, want) {
			t.Errorf("no form %s", want)
		}
	}
	for _, f := range forms {
		if len(f) < MinScrubbedBytes {
			t.Errorf("form %q is shorter than %d bytes", f, MinScrubbedBytes)
		}
	}
	if has(forms, "gw") {
		t.Error("the user name alone is a form")
	}
	// A password with a line break (percent-encoded in the URL) is looked for as JSON writes
	// it; as written it could not be told from the end of a line.
	forms = credentialForms("Basic " + base64.StdEncoding.EncodeToString([]byte("gw:line1\nline2")))
	if !has(forms, `line1\nline2`) || has(forms, "line1\nline2") {
		t.Errorf("forms of a password with a line break: %q", forms)
	}
}

// TestScrubbingOnlyWithCredentials: a backend without credentials reads its answers as they
// come, with no scrubber in the way.
func TestScrubbingOnlyWithCredentials(t *testing.T) {
	rt := http.DefaultTransport
	if got := scrubbing(rt, &Config{URL: "http://127.0.0.1:1/mcp"}); got != rt {
		t.Errorf("a backend without credentials: %T", got)
	}
	for _, c := range []Config{
		{URL: "http://u:password1@127.0.0.1:1/mcp"},
		{URL: "http://127.0.0.1:1/mcp", Headers: map[string]string{"X-Key": "0123456789"}},
		{URL: "http://127.0.0.1:1/mcp", Auth: AuthConfig{Type: AuthClientCredentials}},
	} {
		if got := scrubbing(rt, &c); unscrubbed(got) != rt || got == rt {
			t.Errorf("%+v: %T", c, got)
		}
	}
}

// TestScrubBodyPassesAnEventOn: an event of a stream reaches its reader as soon as it has
// arrived whole, while the backend sends nothing more (it waits for the answer to that
// event): only what follows the last line break is held for the next read.
func TestScrubBodyPassesAnEventOn(t *testing.T) {
	r, w := io.Pipe()
	defer r.Close()
	body := newScrubBody(r, credentialForms("Bearer "+strings.Repeat("t", 64)), -1)
	event := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"elicitation/create\"}\n\n"
	go func() { _, _ = w.Write([]byte(event)) }() // and nothing more: the pipe stays open
	got := make(chan string, 1)
	go func() {
		b := make([]byte, len(event))
		n, err := io.ReadFull(body, b)
		got <- fmt.Sprint(string(b[:n]), err)
	}()
	select {
	case s := <-got:
		if s != event+"<nil>" {
			t.Errorf("read %q", s)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the event was held back until more of the stream came")
	}
}
