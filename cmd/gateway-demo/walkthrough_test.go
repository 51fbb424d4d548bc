package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/mcp-gateway/gateway/internal/testsupport/browsertest"
	"github.com/mcp-gateway/gateway/upstreams"
)

var update = flag.Bool("update", false, "rewrite the README's demo walkthrough from the banner's")

// walkthroughOf returns the export lines and the walkthrough between the markers of a banner.
func walkthroughOf(t *testing.T, banner string) (exports []string, text string) {
	t.Helper()
	for _, m := range bannerExport.FindAllString(banner, -1) {
		exports = append(exports, strings.TrimSpace(m))
	}
	i, j := strings.Index(banner, walkthroughStart+"\n"), strings.Index(banner, "\n"+walkthroughEnd)
	if i < 0 || j < i {
		t.Fatalf("the banner has no walkthrough between %q and %q:\n%s", walkthroughStart, walkthroughEnd, banner)
	}
	return exports, banner[i+len(walkthroughStart)+1 : j]
}

// lineCheck is what one pasted command must show: the command it applies to (a prefix, with
// {MCP} and {ADMIN} standing for the listeners' addresses) and the check of its output.
type lineCheck struct {
	prefix string
	check  func(t *testing.T, out string)
}

// walk is the state of one run of the walkthrough.
type walk struct {
	d       *demoProcess
	browser func(page string) // signs alice in on the approval page and approves
	issuer  string
}

// wantStatus checks a curl -i response's status and returns its headers and body.
func wantStatus(t *testing.T, out string, status int) (string, string) {
	t.Helper()
	code, hdr, body := httpResponse(t, out)
	if code != status {
		t.Fatalf("status %d, want %d:\n%s", code, status, out)
	}
	var lines []string
	for k, v := range hdr {
		lines = append(lines, k+": "+strings.Join(v, ", "))
	}
	return strings.Join(lines, "\n"), body
}

// wantBody checks that a response body holds every substring of want.
func wantBody(t *testing.T, body string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(body, w) {
			t.Errorf("the response lacks %q:\n%s", w, body)
		}
	}
}

var approvalURL = regexp.MustCompile(`"url":"(http://[0-9.:]+/approval/c/[0-9a-f]{32})"`)

// checks are the walkthrough's commands in order, each with its documented outcome.
func (w *walk) checks() []lineCheck {
	empty := func(t *testing.T, out string) {
		if out != "" {
			t.Errorf("printed %q, want nothing", out)
		}
	}
	status := func(code int, want ...string) func(*testing.T, string) {
		return func(t *testing.T, out string) {
			hdr, body := wantStatus(t, out, code)
			wantBody(t, hdr+"\n"+body, want...)
		}
	}
	return []lineCheck{
		{"export ALICE=", empty},
		{"export BOB=", empty},
		{"MCPLOG=$(mktemp)", empty},
		{"mcp() {", empty},
		{"TOKEN= mcp tools/list", status(401, `Www-Authenticate: Bearer resource_metadata="http://`+w.d.mcp+`/.well-known/oauth-protected-resource/mcp"`)},
		{"curl -sS -i http://{MCP}/.well-known/oauth-protected-resource/mcp", status(200,
			`"resource":"`+w.d.mcpURL+`"`, `"authorization_servers":["`+w.issuer+`"]`)},
		{"TOKEN=$BOB mcp server/discover", status(200, `"supportedVersions":["2026-07-28"]`)},
		{"TOKEN=$BOB mcp tools/list", func(t *testing.T, out string) {
			_, body := wantStatus(t, out, 200)
			checkListBody(t, body, wantListed("bob"), "private")
		}},
		{"TOKEN=$BOB mcp tools/call notes__add_note", status(403, `error="insufficient_scope", scope="notes:write"`)},
		{"TOKEN=$BOB mcp tools/call toolbox__echo", status(403, `error="insufficient_scope", scope="tools:use"`)},
		{"TOKEN=$ALICE mcp tools/call notes__add_note", status(200, "Added note 1: hello")},
		{"TOKEN=$ALICE mcp tools/call toolbox__count_slowly", func(t *testing.T, out string) {
			hdr, body := wantStatus(t, out, 200)
			wantBody(t, hdr, "Content-Type: text/event-stream")
			if n := strings.Count(body, `"method":"notifications/progress"`); n != 3 {
				t.Errorf("%d progress notifications, want 3:\n%s", n, body)
			}
			wantBody(t, body, "Counted to 3.")
		}},
		{"TOKEN=$ALICE mcp tools/call notes__delete_note ',\"arguments\":{\"id\":\"1\"}'", func(t *testing.T, out string) {
			_, body := wantStatus(t, out, 200)
			wantBody(t, body, `"resultType":"input_required"`, `"mode":"url"`, `"requestState":"`)
			m := approvalURL.FindStringSubmatch(body)
			if m == nil || !strings.HasPrefix(m[1], "http://"+w.d.mcp+"/") {
				t.Fatalf("no approval page URL on the gateway:\n%s", body)
			}
			w.browser(m[1])
		}},
		{`STATE=$(sed`, empty},
		{"TOKEN=$ALICE mcp tools/call notes__delete_note ',\"arguments\":{\"id\":\"1\"},\"requestState\"", status(200, "Deleted note 1")},
		{"TOKEN=$ALICE mcp initialize", status(404, `"code":-32601`)},
		{"curl -sS -i http://{ADMIN}/authz/explain", status(200, `"effect":"step_up"`, `"ruleId":"notes-write"`, `"requiredScopes":["notes:write"]`)},
		{"legacy() {", empty},
		{"SID= TOKEN=$ALICE legacy", status(200, "Mcp-Session-Id: ", `"protocolVersion":"2025-11-25"`)},
		{"SID=$(sed", empty},
		{"TOKEN=$ALICE legacy '{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}'", status(202)},
		{"TOKEN=$ALICE legacy '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}'", func(t *testing.T, out string) {
			_, body := wantStatus(t, out, 200)
			checkListBody(t, body, wantListed("alice"), "") // 2025-11-25 has no cache hints
		}},
		{"curl -sS -i http://{ADMIN}/readyz", status(200, `"ready":true`)},
		{"curl -sS http://{ADMIN}/metrics", func(t *testing.T, out string) {
			wantBody(t, out, `mcp_gateway_authz_decisions_total{decision="step_up",upstream="notes"}`,
				`mcp_gateway_authz_decisions_total{decision="allow",upstream="toolbox"}`)
		}},
	}
}

// checkListBody compares a tools/list response body with the tools and marks want, and its
// cacheScope with scope.
func checkListBody(t *testing.T, body string, want map[string][]string, scope string) {
	t.Helper()
	var res struct {
		Result struct {
			Tools []struct {
				Name string         `json:"name"`
				Meta map[string]any `json:"_meta"`
			} `json:"tools"`
			CacheScope string `json:"cacheScope"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(body), &res); err != nil {
		t.Fatalf("tools/list: %v\n%s", err, body)
	}
	got := map[string][]string{}
	for _, tl := range res.Result.Tools {
		var scopes []string
		if raw, ok := tl.Meta[upstreams.RequiredScopesMeta].([]any); ok {
			for _, s := range raw {
				scopes = append(scopes, fmt.Sprint(s))
			}
		}
		got[tl.Name] = scopes
	}
	if !reflect.DeepEqual(got, want) || res.Result.CacheScope != scope {
		t.Errorf("tools/list = %v (cacheScope %q), want %v (%q)", got, res.Result.CacheScope, want, scope)
	}
}

// TestWalkthrough starts the demo command and pastes what its banner says to paste (the
// export lines, then every line of the walkthrough) into one bash, as a user would, checking
// each command's documented outcome; the URL-approval step is done in headless chromium: open
// the page the gateway names, sign in as alice on the development issuer's form, approve.
func TestWalkthrough(t *testing.T) {
	browser := browsertest.New(t)
	d := startDemo(t)
	issuer := regexp.MustCompile(`OpenID issuer on (http://[0-9.:]+) `).FindStringSubmatch(d.banner)
	if issuer == nil {
		t.Fatalf("the banner does not name the issuer:\n%s", d.banner)
	}
	w := &walk{d: d, issuer: issuer[1], browser: func(page string) { approveAsAlice(t, browser, page) }}
	pasteWalkthrough(t, d, w.checks())
}

// TestWalkthroughNoAuth is TestWalkthrough for the demo without authentication, whose
// walkthrough shows a pre-2026 client on the same endpoint too.
func TestWalkthroughNoAuth(t *testing.T) {
	d := startDemo(t, "--no-auth")
	all := wantListed("alice")
	empty := func(t *testing.T, out string) {
		if out != "" {
			t.Errorf("printed %q, want nothing", out)
		}
	}
	pasteWalkthrough(t, d, []lineCheck{
		{"mcp() {", empty},
		{"mcp server/discover", func(t *testing.T, out string) {
			_, body := wantStatus(t, out, 200)
			wantBody(t, body, `"supportedVersions":["2026-07-28"]`)
		}},
		{"mcp tools/list", func(t *testing.T, out string) {
			_, body := wantStatus(t, out, 200)
			checkListBody(t, body, all, "public")
		}},
		{"mcp tools/call toolbox__count_slowly", func(t *testing.T, out string) {
			_, body := wantStatus(t, out, 200)
			wantBody(t, body, `"method":"notifications/progress"`, "Counted to 3.")
		}},
		{"MCPLOG=$(mktemp)", empty},
		{"legacy() {", empty},
		{"SID= legacy", func(t *testing.T, out string) {
			hdr, body := wantStatus(t, out, 200)
			wantBody(t, hdr+"\n"+body, "Mcp-Session-Id: ", `"protocolVersion":"2025-11-25"`)
		}},
		{"SID=$(sed", empty},
		{"legacy '{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}'", func(t *testing.T, out string) { wantStatus(t, out, 202) }},
		{"legacy '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}'", func(t *testing.T, out string) {
			_, body := wantStatus(t, out, 200)
			checkListBody(t, body, all, "") // 2025-11-25 has no cache hints
		}},
		{"curl -sS -i http://{ADMIN}/readyz", func(t *testing.T, out string) {
			_, body := wantStatus(t, out, 200)
			wantBody(t, body, `"ready":true`)
		}},
	})
}

// pasteWalkthrough pastes the export lines and the walkthrough of d's banner into one bash and
// runs each command's check, in order; every command needs one.
func pasteWalkthrough(t *testing.T, d *demoProcess, checks []lineCheck) {
	t.Helper()
	exports, text := walkthroughOf(t, d.banner)
	cmds := append(exports, commands(text)...)
	if len(cmds) != len(checks) {
		t.Errorf("%d commands to paste, %d documented outcomes: every line needs its check", len(cmds), len(checks))
	}
	sh := startShell(t)
	for i, cmd := range cmds {
		if i >= len(checks) {
			t.Fatalf("no documented outcome for %q", cmd)
		}
		c := checks[i]
		prefix := strings.NewReplacer("{MCP}", d.mcp, "{ADMIN}", d.admin).Replace(c.prefix)
		if !strings.HasPrefix(cmd, prefix) {
			t.Fatalf("command %d is %q, expected %q next", i+1, cmd, prefix)
		}
		out := sh.run(t, cmd)
		if !t.Run(fmt.Sprintf("%02d %s", i+1, c.prefix), func(t *testing.T) { c.check(t, out) }) {
			t.Logf("the command was:\n%s", cmd)
		}
	}
	// Every outcome above is what the demo is for: none of it is worth a log line, but the
	// warning that authentication is off, when it is.
	for _, line := range strings.Split(strings.TrimSpace(d.logged()), "\n") {
		if line != "" && !(len(d.tokens) == 0 && strings.Contains(line, "AUTHENTICATION IS DISABLED")) {
			t.Errorf("the demo logged during the walkthrough: %s", line)
		}
	}
}

// approveAsAlice opens the approval page, signs in as alice on the development issuer's form
// and approves the call.
func approveAsAlice(t *testing.T, browser context.Context, page string) {
	t.Helper()
	b := browsertest.Tab(t, browser)
	browsertest.Step(t, b, "sign in as alice",
		chromedp.Navigate(page),
		chromedp.WaitVisible(chromedp.CSS("#username")),
		chromedp.SendKeys(chromedp.CSS("#username"), "alice"),
		chromedp.Click(chromedp.CSS("button[type=submit]")),
		chromedp.WaitVisible(chromedp.CSS("#approve")),
	)
	if body := browsertest.Text(t, b, "main"); !strings.Contains(body, "notes__delete_note") || !strings.Contains(body, "alice") {
		t.Errorf("the approval page does not show the call and its caller:\n%s", body)
	}
	browsertest.Approve(t, b)
}

// readmeWalkthrough locates the README's copy of the walkthrough: the shell block after the
// marker comment.
const readmeMarker = "<!-- The demo's walkthrough, as `make demo` prints it for the default addresses; go test ./cmd/gateway-demo -run TestREADMEWalkthrough -update rewrites it. -->\n```sh\n"

// TestREADMEWalkthrough: the README's demo walkthrough is the banner's, rendered for the
// default addresses, so what the README shows is what TestWalkthrough runs.
func TestREADMEWalkthrough(t *testing.T) {
	const path = "../../README.md"
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	want, err := walkthroughText(bannerData{MCP: defaultMCPAddr, Admin: defaultAdminAddr, Issuer: "http://127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	want += "\n"
	i := strings.Index(readme, readmeMarker)
	if i < 0 {
		t.Fatalf("the README has no demo walkthrough block (%q)", readmeMarker)
	}
	start := i + len(readmeMarker)
	end := strings.Index(readme[start:], "```\n")
	if end < 0 {
		t.Fatal("the README's walkthrough block does not end")
	}
	got := readme[start : start+end]
	if got == want {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(readme[:start]+want+readme[start+end:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("the README's walkthrough differs from the banner's; run go test ./cmd/gateway-demo -run TestREADMEWalkthrough -update\n--- README\n%s\n--- banner\n%s", got, want)
}
