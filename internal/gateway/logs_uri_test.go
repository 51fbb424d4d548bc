package gateway

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/intercept"
	"github.com/mcp-gateway/gateway/internal/testsupport/intercepttest"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestLogsNameTheNormalURI: a resource URI is authorised and forwarded in its normal form, so
// the access log and the audit lines name that form, not the spelling the client sent
// (another case of the scheme, an escaped unreserved character, a dot segment): an operator
// searching the log for what was read finds every read of it, and a spelling chosen to hide a
// read from such a search does not. No line holds an argument value either.
//
//	go test -count=1 -run 'TestLogsNameTheNormalURI' ./internal/gateway
func TestLogsNameTheNormalURI(t *testing.T) {
	const normal = "alpha+mem://items/beta"
	spellings := []string{normal, "alpha+MEM://items/beta", "alpha+mem://items/%62eta", "alpha+mem://items/x/../beta", "alpha+mem://items//beta"}
	alpha := mcptest.StartServer(t, "alpha")
	gw, logs, stop := startLoggedGateway(t, func(c *Config) { c.Auth.Disabled = true }, alpha)
	cs := mcptest.Connect(t, "http://"+gw.MCP+"/mcp")
	for _, uri := range spellings {
		if _, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri}); err != nil {
			t.Fatalf("read %q: %v", uri, err)
		}
	}
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": logsArgSecret}}); err != nil {
		t.Fatal(err)
	}
	stop()
	var reads int
	for _, l := range logLines(t, logs.String()) {
		if l.str("msg") == "request" && l.str("method") == "resources/read" {
			reads++
			if l.str("name") != normal {
				t.Errorf("the access line names %q, want %q", l.str("name"), normal)
			}
		}
	}
	if reads != len(spellings) {
		t.Errorf("%d access lines for resources/read, want %d", reads, len(spellings))
	}
	out := logs.String()
	for _, s := range spellings[1:] {
		if strings.Contains(out, strings.TrimPrefix(s, "alpha+")) {
			t.Errorf("the log holds the client's spelling %q", s)
		}
	}
	if strings.Contains(out, logsArgSecret) {
		t.Error("the log holds an argument value")
	}
}

// TestLogsHideAResourceURIsCredentials: a resource URI may carry a credential where a URL does (a
// presigned URL's query, user information, a token as a path segment), and the log lines that
// name what was read (the access line, the decision lines) are the place every other URL the
// gateway shows goes through configerr.URL. There the URI is quoted by that rule too: scheme,
// host and path as read, each such part REDACTED. The backend still receives the URI whole.
func TestLogsHideAResourceURIsCredentials(t *testing.T) {
	const secret = "cnryUriQZxxxxxxxxxxxxxxxxxxxxxxxxx"
	uris := []string{
		"alpha+mem://ada:" + secret + "@items/beta",
		"alpha+mem://items/beta?sig=" + secret,
		"alpha+mem://items/" + strings.Repeat("a1B2", 8) + "/beta?page=2", // a path segment that may be a token
	}
	alpha := mcptest.StartServer(t, "alpha")
	// An interceptor on the reads: its audit line names the URI too.
	ics := intercepttest.Start(t, []intercepttest.Interceptor{{Name: "look", Type: intercept.TypeValidation, Handle: intercepttest.Allow()}})
	iss := newIssuer(t)
	gw, logs, stop := startLoggedGateway(t, func(c *Config) {
		trustIssuers(c, iss)
		c.Auth.Policy.Rules = []authz.RuleConfig{{ID: "content", Upstream: "*", Resources: []string{"**"}}}
		c.Interceptors = []InterceptorConfig{{Config: intercept.Config{Name: "look", URL: ics.URL(), Type: intercept.TypeValidation,
			Rules: []intercept.RuleConfig{{Upstream: "*", Resources: []string{"**"}, Phases: []string{"request"}}}}}}
	}, alpha)
	cs := mcptest.Connect(t, "http://"+gw.MCP+"/mcp", mcptest.WithBearer(mintFor(t, iss, "alice")))
	for _, uri := range uris {
		_, _ = cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri}) // not an item alpha has
	}
	reads := alpha.RequestsOf("resources/read")
	if len(reads) != len(uris) || !strings.Contains(string(reads[0].Body), secret) {
		t.Fatalf("the backend received %d reads, want %d, each with its URI whole", len(reads), len(uris))
	}
	stop()
	var names, audited, decided []string
	for _, l := range logLines(t, logs.String()) {
		if l.str("msg") == "request" && l.str("method") == "resources/read" {
			names = append(names, l.str("name"))
		}
		if l.str("msg") == "interceptor" {
			audited = append(audited, l.str("name"))
		}
		if l.str("msg") == "authz decision" && l.str("kind") == "resource" {
			decided = append(decided, "alpha+"+l.str("name"))
		}
	}
	want := []string{"alpha+mem://REDACTED@items/beta", "alpha+mem://items/beta?sig=REDACTED",
		"alpha+mem://items/REDACTED/beta?page=REDACTED"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("the access lines name\n%q, want\n%q", names, want)
	}
	if strings.Join(audited, " ") != strings.Join(want, " ") {
		t.Errorf("the interceptor's lines name\n%q, want\n%q", audited, want)
	}
	if strings.Join(decided, " ") != strings.Join(want, " ") {
		t.Errorf("the authorization decisions name (with the backend's prefix)\n%q, want\n%q", decided, want)
	}
	if i := strings.Index(logs.String(), secret); i >= 0 {
		t.Errorf("the log holds the URI's credential: …%s…", logs.String()[max(0, i-200):i+len(secret)])
	}
}
