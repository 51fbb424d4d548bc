package era

import "testing"

// TestWebPageHostAsWritten: a URL-mode elicitation's url is asked only when the host a browser
// goes to is the host as written (in any case, with or without the root label's dot), which
// the person is shown and the guardrails' link allowlist reads. A host a browser
// percent-decodes, maps through IDNA or reads as an IPv4 address in another form is refused,
// as is a URL a browser does not open (a zone in an IPv6 literal, a bad port).
func TestWebPageHostAsWritten(t *testing.T) {
	for _, u := range []string{"https://idp.example/login", "https://IDP.Example/login", "https://idp.example./login",
		"http://127.0.0.1:8080/cb", "https://[2001:db8::1]/", "https://xn--bcher-kva.example/"} {
		if err := webPage([]byte(`"` + u + `"`)); err != nil {
			t.Errorf("%s: %v, want it asked", u, err)
		}
	}
	for _, u := range []string{
		"https://idp.example%E3%80%82attacker.test/login", // a percent-encoded ideographic full stop
		"https://%C3%BC.example/",                         // percent-encoded UTF-8
		"https://idp.example\u3002attacker.test/login",    // the full stop itself
		"https://ＩＤＰ.example/login",                       // fullwidth letters
		"https://idp.exam\u00adple/login",                 // a soft hyphen IDNA drops
		"https://bücher.example/",                         // Unicode, shown as such, opened as punycode
		"http://0x7f.1/", "http://2130706433/", "http://127.1/", "http://0177.0.0.1/",
		"http://[0:0::1]/",         // an IPv6 literal not in its compressed form
		"http://[fe80::1%25eth0]/", // a zone, which no browser reads
		"https://idp.example:99999/",
	} {
		if err := webPage([]byte(`"` + u + `"`)); err == nil {
			t.Errorf("%s: asked, want it refused", u)
		}
	}
}
