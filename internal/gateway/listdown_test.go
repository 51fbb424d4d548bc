package gateway

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/freeport"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams"
)

// TestListWhenBackendsDown: as the README says, a list leaves out a backend that is down (none
// is required here), and when no backend answers at all the list fails with 502 and -32010,
// rather than an empty list a client would take for "no tools".
func TestListWhenBackendsDown(t *testing.T) {
	alpha := mcptest.StartServer(t, "alpha")
	dead := fmt.Sprintf("http://127.0.0.1:%d/mcp", freeport.Loopback(t, 1)[0])
	down := func(name string) UpstreamConfig {
		return UpstreamConfig{UpstreamConfig: upstreams.UpstreamConfig{Name: name, URL: dead, Timeout: 5 * time.Second}}
	}
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + testMeta + `}}`

	some := startTestGateway(t, func(c *Config) { c.Upstreams = append(c.Upstreams, down("gone")) }, alpha)
	status, _, body := post(t, "http://"+some.MCP+"/mcp", modernHeaders("tools/list", ""), list)
	if status != http.StatusOK || !strings.Contains(body, `"name":"alpha__echo"`) || strings.Contains(body, "gone__") {
		t.Errorf("one backend down: %d %s, want alpha's tools alone", status, body)
	}

	none := startTestGateway(t, func(c *Config) { c.Upstreams = []UpstreamConfig{down("gone"), down("away")} })
	status, _, body = post(t, "http://"+none.MCP+"/mcp", modernHeaders("tools/list", ""), list)
	if status != http.StatusBadGateway || !strings.Contains(body, `"code":-32010`) {
		t.Errorf("every backend down: %d %s, want 502 and -32010", status, body)
	}
}
