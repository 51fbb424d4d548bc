package gateway

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/logging"
	"github.com/mcp-gateway/gateway/internal/testsupport/legacyclient"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestLogLinesBounded: what a client chooses reaches log lines (the name or URI it calls, in
// the access line and the decision lines), and a pre-2026 request's name is bounded only by the
// body's limits. Every value a line carries is cut to logging.MaxValueBytes, so one caller's
// requests of 300 KiB names write lines of a few KiB, not 300 KiB each that would fill the log
// queue and drop other callers' lines; the other caller's line is written as it was.
func TestLogLinesBounded(t *testing.T) {
	iss := newIssuer(t)
	alpha := mcptest.StartServer(t, "alpha")
	logs := &mcptest.LogBuffer{}
	gw := startTestGatewayTo(t, logs, func(c *Config) {
		trustIssuers(c, iss)
		c.Log = LogConfig{Level: "info", Format: "json"}
		c.Auth.Policy.Rules = []authz.RuleConfig{{ID: "tools", Upstream: "alpha", Tools: []string{"*"}, AnyScope: []string{"tools:use"}}}
	}, alpha)
	url := "http://" + gw.MCP + "/mcp"
	mallory := &legacyclient.Raw{Token: mintFor(t, iss, "mallory")}
	sid := mallory.Initialize(t, url)
	long := "alpha__" + strings.Repeat("x", 300<<10)
	for range 3 {
		if r := mallory.Post(t, url, sid, mallory.CallArgs(long, `{}`)); !strings.Contains(r.Body, `"error"`) {
			t.Fatalf("mallory's call of a tool alpha does not have: %.300s", r.Body)
		}
	}
	alice := &legacyclient.Raw{Token: mintFor(t, iss, "alice")}
	if r := alice.CallText(t, url, alice.Initialize(t, url), "alpha__echo", "hi"); !strings.Contains(r.Body, "hi") {
		t.Fatalf("alice's call: %s", r)
	}
	// The lines reach the output from the log's queue, a little after the responses.
	cut, aliceLogged := 0, false
	mcptest.WaitFor(t, "every request's access line", func() bool {
		cut, aliceLogged = 0, false
		for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
			if len(line) > 16<<10 {
				t.Fatalf("a log line of %d bytes: %.200s", len(line), line)
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatalf("log line %.200q: %v", line, err)
			}
			if name, _ := m["name"].(string); m["msg"] == "request" && strings.HasPrefix(name, "alpha__x") {
				if !strings.HasSuffix(name, "…") || len(name) > logging.MaxValueBytes+len("…") {
					t.Fatalf("a client's name logged as %d bytes", len(name))
				}
				cut++
			}
			aliceLogged = aliceLogged || (m["msg"] == "request" && m["name"] == "alpha__echo" && m["outcome"] == "ok")
		}
		return cut == 3 && aliceLogged
	})
}
