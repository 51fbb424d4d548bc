package guardrails

import (
	"testing"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/weburl"
)

// TestLinkHostAsABrowser: a link is a finding exactly when the host a browser goes to for it
// (weburl.Parse, held to chromium by TestParseAgreesWithABrowser) is not allowed, for each
// class of spelling: case, percent-encoding, IDNA mappings, full stops, IPv4 forms, user
// information, a line break a browser removes. A URL a browser does not open may be either.
func TestLinkHostAsABrowser(t *testing.T) {
	cfg := everything("flag")
	cfg.AllowedHosts = []string{"docs.example.com", "*.example.com", "127.0.0.1", "bücher.example"}
	r := testEngine(t, cfg).Rule(KindTool, "b", "t")
	for _, s := range []string{
		"https://docs.example.com/a", "https://DOCS.Example.COM/", "https://ＤＯＣＳ.example.com/",
		"https://docs.ex%61mple.com/", "https://docs%2Eexample.com/", "https://docs.example.com%E3%80%82attacker.test/",
		"https://%C3%BC.example.com/", "https://bücher.example/", "https://xn--bcher-kva.example/",
		"https://docs.example.com。attacker.test/", "https://docs.example．com/", "https://docs.example.c\u00adom/",
		"https://ⓓocs.example.com/", "http://127.0.0.1/", "http://0x7f.1/", "http://2130706433/", "http://0177.0.0.1/",
		"http://127.1/", "http://127.0.0.2/", "http://0x7f.2/", "https://docs.example.com@attacker.test/",
		"https://attacker.test@docs.example.com/", "https://docs.example.com\n@attacker.test/",
		"https://docs.example.com\t@attacker.test/", "https://docs.example.com,attacker.test/", "https://attacker.test/",
	} {
		rep := r.ScanResult([]byte(`{"content":[{"type":"text","text":` + jsonString("see "+s+" now") + `}]}`))
		u, err := weburl.Parse(s)
		if err != nil {
			continue
		}
		allowed := false
		for _, g := range cfg.AllowedHosts {
			allowed = allowed || authz.CompileGlob(asciiPattern(g)).Match(u.Host)
		}
		if flagged := rep.Counts[DetLink] > 0; flagged == allowed {
			t.Errorf("%q: a browser goes to %s (allowed %v), link finding %v", s, u.Host, allowed, flagged)
		}
	}
}
