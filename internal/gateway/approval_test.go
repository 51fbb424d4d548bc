package gateway

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams"
)

const urlElicitMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"url":{}}}}`

// approvalRulesGateway fronts alpha with echo needing approval on the page, add needing it
// with a form fallback, and everything else allowed. The page is configured but never visited.
func approvalRulesGateway(t *testing.T, iss *devissuer.Issuer, alpha *mcptest.Server) Listeners {
	t.Helper()
	return startTestGateway(t, func(c *Config) {
		trustIssuers(c, iss)
		c.MRTR.Keys = testKeys
		c.Auth.Policy.Rules = []authz.RuleConfig{
			{ID: "echo-page", Upstream: "alpha", Tools: []string{"echo"}, Confirm: authz.ConfirmURL},
			{ID: "add-page-or-form", Upstream: "alpha", Tools: []string{"add"}, Confirm: authz.ConfirmURL, ConfirmFallback: authz.FallbackClientForm},
			{ID: "rest", Upstream: "alpha", Tools: []string{"*"}},
		}
		c.Approval.ClientID = "gateway-approval"
	}, alpha)
}

type urlAsk struct {
	Result struct {
		ResultType    string `json:"resultType"`
		RequestState  string `json:"requestState"`
		IsError       bool   `json:"isError"`
		Content       []struct{ Text string }
		InputRequests map[string]struct {
			Params struct{ Mode, URL, ElicitationID, Message string }
		} `json:"inputRequests"`
	} `json:"result"`
	Error *struct {
		Code    int
		Message string
		Data    json.RawMessage
	} `json:"error"`
}

func callWithMeta(t *testing.T, gw Listeners, tok, meta, name, args, retry string) (int, urlAsk) {
	t.Helper()
	h := modernHeaders("tools/call", name)
	h.Set("Authorization", "Bearer "+tok)
	status, _, body := post(t, "http://"+gw.MCP+"/mcp", h,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`+meta+`,"name":"`+name+`","arguments":`+args+retry+`}}`)
	var r urlAsk
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatalf("%d %s: %v", status, body, err)
	}
	return status, r
}

// TestApprovalElicitation: a confirm: url call is asked with a URL elicitation naming the page,
// only of clients that declared URL elicitation (else -32021, or the form where the rule allows
// it); retries without a decision are asked again with the same page, a decline in the client
// is a tool error, and nothing reaches the backend.
func TestApprovalElicitation(t *testing.T) {
	iss := newIssuer(t)
	alpha := mcptest.StartServer(t, "alpha")
	gw := approvalRulesGateway(t, iss, alpha)
	tok := mintFor(t, iss, "alice")

	status, r := callWithMeta(t, gw, tok, elicitMeta, "alpha__echo", `{"text":"x"}`, "")
	if status != 400 || r.Error == nil || r.Error.Code != -32021 || !strings.Contains(string(r.Error.Data), `{"elicitation":{"url":{}}}`) {
		t.Errorf("form-only client: %d %+v", status, r.Error)
	}
	_, r = callWithMeta(t, gw, tok, elicitMeta, "alpha__add", `{"a":1,"b":2}`, "")
	if r.Result.ResultType != "input_required" || r.Result.InputRequests["io.mcp-gateway/confirm"].Params.Mode != "form" {
		t.Errorf("form fallback: %+v", r)
	}

	_, first := callWithMeta(t, gw, tok, urlElicitMeta, "alpha__echo", `{"text":"x"}`, "")
	p := first.Result.InputRequests["io.mcp-gateway/confirm"].Params
	if first.Result.ResultType != "input_required" || p.Mode != "url" || p.ElicitationID == "" ||
		p.URL != "https://mcp.test.invalid/approval/c/"+p.ElicitationID || !strings.Contains(p.Message, "alpha__echo") {
		t.Fatalf("URL elicitation: %+v", first)
	}
	state := first.Result.RequestState
	accept := `,"inputResponses":{"io.mcp-gateway/confirm":{"action":"accept"}},"requestState":"` + state + `"`
	for _, retry := range []string{`,"requestState":"` + state + `"`, accept} {
		_, again := callWithMeta(t, gw, tok, urlElicitMeta, "alpha__echo", `{"text":"x"}`, retry)
		if again.Result.RequestState != state || again.Result.InputRequests["io.mcp-gateway/confirm"].Params.URL != p.URL {
			t.Errorf("undecided retry: %+v", again)
		}
	}
	// Another user cannot use the state; other arguments neither.
	if _, other := callWithMeta(t, gw, mintFor(t, iss, "mallory"), urlElicitMeta, "alpha__echo", `{"text":"x"}`, accept); other.Error == nil || other.Error.Code != -32602 {
		t.Errorf("another caller's retry: %+v", other)
	}
	if _, other := callWithMeta(t, gw, tok, urlElicitMeta, "alpha__echo", `{"text":"y"}`, accept); other.Error == nil || other.Error.Code != -32602 {
		t.Errorf("retry with other arguments: %+v", other)
	}
	decline := `,"inputResponses":{"io.mcp-gateway/confirm":{"action":"decline"}},"requestState":"` + state + `"`
	if _, d := callWithMeta(t, gw, tok, urlElicitMeta, "alpha__echo", `{"text":"x"}`, decline); !d.Result.IsError {
		t.Errorf("declined in the client: %+v", d)
	}
	if _, d := callWithMeta(t, gw, tok, urlElicitMeta, "alpha__echo", `{"text":"x"}`, accept); d.Error == nil || d.Error.Code != -32602 {
		t.Errorf("retry after the decline: %+v", d)
	}
	if n := toolCalls(alpha); n != 0 {
		t.Errorf("backend received %d calls", n)
	}
}

// TestApprovalConfigValidation: confirm: url needs the page; the page needs authentication and
// an issuer the gateway trusts.
func TestApprovalConfigValidation(t *testing.T) {
	base := func() *Config {
		c := &Config{}
		c.Server.Listen, c.Admin.Listen = "127.0.0.1:0", "127.0.0.1:0"
		c.Server.PublicURL = testResource
		c.Auth.Issuers = []authz.IssuerConfig{{Issuer: "https://idp.example.com/"}}
		c.Auth.Policy.Rules = []authz.RuleConfig{{ID: "page", Tools: []string{"rm"}, Confirm: authz.ConfirmURL}}
		c.Upstreams = []UpstreamConfig{{UpstreamConfig: upstreams.UpstreamConfig{Name: "files", URL: "http://127.0.0.1:1/mcp"}}}
		return c
	}
	for name, tc := range map[string]struct {
		mutate func(*Config)
		want   string
	}{
		"no page":        {func(c *Config) {}, "approval page is not configured"},
		"foreign issuer": {func(c *Config) { c.Approval.ClientID, c.Approval.Issuer = "gw", "https://other.example.com/" }, "must be one of auth.issuers"},
		"no auth": {func(c *Config) {
			c.Approval.ClientID, c.Auth.Disabled, c.Auth.Policy.Rules = "gw", true, nil
		}, "needs authentication"},
		"bad path":      {func(c *Config) { c.Approval.ClientID, c.Approval.Path = "gw", "approval" }, "approval.path"},
		"mcp path":      {func(c *Config) { c.Approval.ClientID, c.Approval.Path = "gw", "/mcp" }, `approval.path: "/mcp" holds "/mcp"`},
		"plain http":    {func(c *Config) { c.Approval.ClientID, c.Approval.BaseURL = "gw", "http://gw.example.com" }, "approval.baseURL: \"http://gw.example.com\": want https"},
		"pending count": {func(c *Config) { c.Approval.ClientID, c.Approval.MaxPendingPerCaller = "gw", 5000 }, "approval.maxPendingPerCaller"},
		"pending bytes": {func(c *Config) { c.Approval.ClientID, c.Approval.MaxPendingBytesPerCaller = "gw", 1024 }, "approval.maxPendingBytesPerCaller"},
		"old fallback": {func(c *Config) {
			c.Approval.ClientID = "gw"
			c.Auth.Policy.Rules[0].ConfirmFallback = "form"
		}, "clientForm"},
		"base with query":  {func(c *Config) { c.Approval.ClientID, c.Approval.BaseURL = "gw", "https://gw.example.com/team-a?x=1" }, "approval.baseURL"},
		"base with prefix": {func(c *Config) { c.Approval.ClientID, c.Approval.BaseURL = "gw", "https://gw.example.com/team-a" }, ""},
		"ok":               {func(c *Config) { c.Approval.ClientID = "gw" }, ""},
	} {
		c := base()
		tc.mutate(c)
		c.applyDefaults()
		err := c.validate()
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
}

// TestApprovalPageTooLargeToShow: a confirm: url call whose page would be too large to show
// (approval.MaxPageBytes: 300,000 zero-width spaces, each a visible mark on the page, make
// about 25 MB of HTML from 900 KB of arguments) is a failed tool call saying so, asked of no
// one; an ordinary call is still asked. Before, it was asked, and each view of its page took
// seconds of the replica's time.
func TestApprovalPageTooLargeToShow(t *testing.T) {
	iss := newIssuer(t)
	alpha := mcptest.StartServer(t, "alpha")
	gw := approvalRulesGateway(t, iss, alpha)
	tok := mintFor(t, iss, "alice")
	marks := `{"text":"` + strings.Repeat("\u200b", 300_000) + `"}`
	_, r := callWithMeta(t, gw, tok, urlElicitMeta, "alpha__echo", marks, "")
	if !r.Result.IsError || r.Result.ResultType == "input_required" || len(r.Result.Content) == 0 ||
		!strings.Contains(r.Result.Content[0].Text, "too large to be shown for approval") {
		t.Errorf("a call whose page is too large: %+v %+v", r.Result, r.Error)
	}
	if _, r := callWithMeta(t, gw, tok, urlElicitMeta, "alpha__echo", `{"text":"x"}`, ""); r.Result.ResultType != "input_required" {
		t.Errorf("an ordinary call after it: %+v %+v", r.Result, r.Error)
	}
	if n := toolCalls(alpha); n != 0 {
		t.Errorf("backend received %d calls", n)
	}
}
