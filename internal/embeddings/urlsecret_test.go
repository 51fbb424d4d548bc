package embeddings

import (
	"strings"
	"testing"
)

// TestURLErrorsQuoteNoSecret: an endpoint's URL may carry a credential in its query (?key=) or
// its user information, so a refused URL's error names the setting and what is wrong with it,
// never the URL: a configuration error reaches terminals and CI logs.
func TestURLErrorsQuoteNoSecret(t *testing.T) {
	const secret = "url-secret-3b9f"
	for _, raw := range []string{
		"http://embed.example.com/v1/embeddings?key=" + secret,
		"https://user:" + secret + "@embed.example.com/v1/embeddings",
		"https://embed.example.com/v1/embeddings?key=" + secret + "#frag",
		"http://user:" + secret + "@embed.example.com/v1/embeddings?key=" + secret,
	} {
		err := Config{URL: raw, Model: "m"}.Validate("search.embeddings")
		if err == nil {
			t.Errorf("%s: accepted", raw)
			continue
		}
		if !strings.Contains(err.Error(), "search.embeddings.url") || strings.Contains(err.Error(), secret) {
			t.Errorf("%s: %v; want the setting named and the secret left out", raw, err)
		}
	}
}
