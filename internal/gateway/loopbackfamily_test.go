package gateway

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUnicodeLoopbackSpellingsAreNotLoopback: every setting allowed plain http only on a
// loopback host, and auth.disabled allowed only on a loopback listener, refuses the Unicode
// spellings that IDNA (which net/http applies when it dials) maps to localhost or 127.0.0.1.
// Only clients that apply IDNA read them so; another client asks DNS, and the answer is some
// other machine's to give, so for these checks they are not loopback (internal/loopback.Host),
// while the check that refuses loopback (loopback.Maybe) counts them as loopback.
func TestUnicodeLoopbackSpellingsAreNotLoopback(t *testing.T) {
	t.Parallel()
	for _, host := range []string{"ℓocalhost", "ⓛocalhost", "ＬＯＣＡＬＨＯＳＴ", "①②⑦.0.0.1", "１２７.０.０.１", "①②⑦。0。0。1"} {
		run := func(cfg string, want ...string) {
			t.Helper()
			path := filepath.Join(t.TempDir(), "gateway.yaml")
			if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
				t.Fatal(err)
			}
			_, _, err := runGateway(t, "check-config", "--config", path)
			if err == nil {
				t.Fatalf("%s: check-config accepted:\n%s", host, cfg)
			}
			for _, w := range want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s: the error lacks %q:\n%v", host, w, err)
				}
			}
		}
		at := "http://" + host + ":9"
		run("server: {listen: \"127.0.0.1:0\", publicURL: \"http://localhost:1/mcp\"}\n"+
			"auth:\n  issuers: [{issuer: \""+at+"/\", jwksURL: \""+at+"/jwks\", audiences: [x]}]\n"+
			"  policy: {rules: [{id: all, issuers: [\"*\"]}]}\n"+
			"approval: {baseURL: \""+at+"\", clientID: pages, clientSecret: {value: s}}\n"+
			"userOAuth: {keys: [{id: v1, secret: {value: "+strings.Repeat("v", 32)+"}}]}\n"+
			"search: {embeddings: {url: \""+at+"/v1/embeddings\", model: m}}\n"+
			"upstreams:\n"+
			"  - {name: n, url: \"http://127.0.0.1:9/mcp\", timeout: 5s, auth: {type: userOAuth, clientID: c, authServer: \""+at+"\"}}\n"+
			"  - {name: e, url: \"http://127.0.0.1:9/mcp\", timeout: 5s, auth: {type: tokenExchange, tokenURL: \""+at+"/token\", clientID: c, clientSecret: {value: s}}}\n",
			"auth.issuers[0].issuer: ", "auth.issuers[0].jwksURL: ", "approval.baseURL: ", "search.embeddings.url: ",
			"upstreams[0].auth.authServer: want https", "upstreams[1].auth.tokenURL: want https")
		run("server: {listen: \""+host+":8080\", publicURL: \"http://localhost:1/mcp\"}\nauth: {disabled: true}\n"+
			"upstreams:\n  - {name: n, url: \"http://127.0.0.1:9/mcp\", timeout: 5s}\n",
			"auth.disabled: refused on the non-loopback listener")
	}
}
