package gateway

import (
	"regexp"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/embedtest"
)

// TestCheckConfigOnlineNamesEndpointsWithoutSecrets: check-config --online names each endpoint
// it contacts, and a URL's query or user information may carry a credential (an endpoint
// keyed by ?key=, as backends' reports already assume: upstreams.Status.URL). The embeddings
// endpoint's line names it by scheme, host and path and the query's parameter names, whether it
// answers or not, and shows neither the query's value nor a password.
func TestCheckConfigOnlineNamesEndpointsWithoutSecrets(t *testing.T) {
	const querySecret = "embed-query-secret-5d1c"
	srv := embedtest.Start(t, embedKey)
	for _, tc := range []struct {
		url    string
		failed bool
		want   string
	}{
		{srv.URL + "?key=" + querySecret, false, `(?m)^ok     search\.embeddings ` + regexp.QuoteMeta(srv.URL+"?key=REDACTED") + `: model stand-in: \d+ dimensions$`},
		{strings.Replace(srv.URL, "/v1/", "/v2/", 1) + "?key=" + querySecret, true,
			`(?m)^FAILED search\.embeddings ` + regexp.QuoteMeta(strings.Replace(srv.URL, "/v1/", "/v2/", 1)+"?key=REDACTED") + `: `},
	} {
		checkOnlineLines(t, "search:\n  embeddings: {url: \""+tc.url+"\", model: stand-in, apiKey: {value: "+embedKey+"}}\n",
			tc.failed, []string{tc.want}, querySecret, embedKey)
	}
}
