package weburl

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/mcp-gateway/gateway/internal/testsupport/browsertest"
)

// spellings are URLs whose host a reader may take for another than a browser's: each class of
// what a browser does to a host before it connects.
var spellings = []string{
	// As written.
	"https://docs.example.com/a", "http://docs.example.com:8080/", "https://docs.example.com./",
	// Case, of ASCII and beyond.
	"https://DOCS.Example.COM/", "https://ＤＯＣＳ.example.com/",
	// Percent-encoded bytes in the host: ASCII, a dot, a forbidden code point, UTF-8.
	"https://docs.ex%61mple.com/", "https://docs%2Eexample.com/", "https://attacker.test%2F.example.com/",
	"https://docs.example.com%E3%80%82attacker.test/", "https://attacker%40.example.com/", "https://bad%ZZ.example.com/",
	"https://%C3%BC.example.com/", "https://%FF.example.com/",
	// IDNA: Unicode, punycode, full stops, compatibility and ignorable characters.
	"https://bücher.example/", "https://xn--bcher-kva.example/", "https://docs.example.com。attacker.test/",
	"https://docs.example．com/", "https://docs.example.c\u00adom/", "https://docs.exam\u200bple.com/",
	"https://ⓓocs.example.com/", "https://docs.example.com\u2100attacker.test/", "https://xn--zz.example/",
	"https://docs.example.com\uff0fattacker.test/",
	// Trailing and empty labels.
	"https://docs.example.com../", "https://.docs.example.com/", "https://docs..example.com/",
	// Numbers: IPv4 in the forms inet_aton takes, and a host that only ends in a number.
	"http://127.0.0.1/", "http://0x7f.1/", "http://2130706433/", "http://0177.0.0.1/", "http://127.1/",
	"http://256.0.0.1/", "http://1.2.3.4.5/", "http://docs.example.123/", "http://docs.example.0x1/", "http://127.0.0.1./",
	// IPv6: compressed, mapped, with a zone.
	"http://[::1]/", "http://[0:0::1]/", "http://[::ffff:1.2.3.4]/", "http://[fe80::1%25eth0]/", "http://[::1]x/",
	// Backslashes, slashes, user information, ports.
	`https:\\attacker.test\@docs.example.com/`, "https:docs.example.com/", "https:///docs.example.com/",
	"https://docs.example.com@attacker.test/", "https://docs.example.com:443@attacker.test/", "https://@docs.example.com/",
	"https://docs.example.com:99999/", "https://docs.example.com:/",
	// Tabs, line breaks, spaces and controls.
	"https://docs.example.com\n@attacker.test/", "https://att\tacker.test/", " https://docs.example.com/ ",
	"https://docs example.com/", "https://docs.example.com\x00/", "https://docs.example.com\x7f/",
	// Characters a browser keeps in a host.
	"https://docs.example.com,attacker.test/", "https://docs_example.com/", "https://docs.example.com}/",
	"https://docs.example.com^/", "https://docs.example.com|/",
	// Schemes.
	"HTTPS://docs.example.com/", "javascript://docs.example.com/", "ftp://docs.example.com/",
}

// TestParseAgreesWithABrowser: the host Parse reads, and whether it reads one, is chromium's
// (new URL(s).hostname, for each spelling), so an allowlist checked on it is checked on the
// host the browser goes to.
func TestParseAgreesWithABrowser(t *testing.T) {
	ctx := browsertest.Tab(t, browsertest.New(t))
	in, _ := json.Marshal(spellings)
	sctx, cancel := context.WithTimeout(ctx, browsertest.StepTimeout)
	defer cancel()
	got, err := chromedp.Run(sctx, chromedp.Evaluate[[]string](`(`+string(in)+`).map(s => {
		try { const u = new URL(s); return u.protocol === "http:" || u.protocol === "https:" ? u.hostname : "!scheme" } catch (e) { return "!" }
	})`))
	if err != nil || len(got) != len(spellings) {
		t.Fatalf("new URL in chromium: %v %v", err, got)
	}
	for i, s := range spellings {
		want := got[i]
		u, err := Parse(s)
		switch {
		case want == "!" || want == "!scheme":
			if err == nil {
				t.Errorf("%q: read host %q, a browser reads no http(s) URL (%s)", s, u.Host, want)
			}
		case err != nil && strings.Contains(want, "%"):
			// Chromium escapes some characters the standard forbids in a host (a space is
			// %20) where it should fail: a host no name resolves to, which Parse refuses.
		case err != nil:
			t.Errorf("%q: %v, a browser reads host %q", s, err, want)
		case u.Host != want:
			t.Errorf("%q: host %q, a browser reads %q", s, u.Host, want)
		}
	}
}
