package gateway

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// paddedCall is a 2026-07-28 tools/call of tool with args whose body is padded with whitespace
// to about pad bytes, so that its buffer is the size the test charges.
func paddedCall(tool, args string, pad int) string {
	return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args +
		`,` + testMeta + `}` + strings.Repeat(" ", pad) + `}`
}

// sendFrom posts body to the gateway's endpoint from c with token, until ctx ends; an error
// only when no answer came.
func sendFrom(ctx context.Context, c *http.Client, url, token, tool, body string) (peerReply, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return peerReply{}, err
	}
	req.Header = modernHeaders("tools/call", tool)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := c.Do(req)
	if err != nil {
		return peerReply{}, err
	}
	return readPeerReply(res), nil
}

// TestCallerBodyShareAcrossAddresses: one identity sending from seven loopback addresses, each
// within its address's share of the body budget, holds no more than its caller's share of it
// (a quarter of server.maxBodyBytesInFlight) once authenticated: the calls past it are refused
// with 429, -32012 and Retry-After, and another caller's body still finds room. Before the
// caller had a share, the one identity held the replica's whole budget and the other caller
// got 503.
func TestCallerBodyShareAcrossAddresses(t *testing.T) {
	iss := newIssuer(t)
	backend := mcptest.StartServer(t, "alpha")
	gw := startTestGateway(t, func(c *Config) {
		trustIssuers(c, iss)
		c.Auth.Policy.Rules = []authz.RuleConfig{{ID: "calls", Upstream: "alpha",
			Tools: []string{mcptest.ToolSlow, mcptest.ToolEcho}, AnyScope: []string{"tools:use"}}}
		// A 60 KiB body ends in a 64 KiB buffer: the 1 MiB budget holds 16 of them, a client
		// address's share and a caller's (a quarter) 4.
		c.Server.MaxBodyBytes = 64 << 10
		c.Server.MaxBodyBytesInFlight = 1 << 20
		c.Server.MaxConcurrentPerCaller = 64
	}, backend)
	url := "http://" + gw.MCP + "/mcp"
	mallory, bob := mintFor(t, iss, "mallory"), mintFor(t, iss, "bob")
	slow := "alpha__" + mcptest.ToolSlow
	body := paddedCall(slow, `{"ms":60000}`, 60<<10)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	replies := make(chan peerReply, 16)
	var refused []peerReply
	started := 0
	for i := range 16 {
		c := from(fmt.Sprintf("127.0.0.%d", 2+i%7))
		go func() {
			r, err := sendFrom(ctx, c, url, mallory, slow, body)
			if err == nil {
				replies <- r
			}
		}()
		// One at a time: the call is either running at the backend or answered.
		deadline := time.Now().Add(15 * time.Second)
		tick := time.NewTicker(10 * time.Millisecond)
	wait:
		for {
			select {
			case r := <-replies:
				refused = append(refused, r)
				break wait
			case <-tick.C:
				if n := backend.SlowStats().Started; n > started {
					started = n
					break wait
				}
				if time.Now().After(deadline) {
					tick.Stop()
					t.Fatalf("call %d neither started nor was answered", i)
				}
			}
		}
		tick.Stop()
	}
	if started != 4 || len(refused) != 12 {
		t.Errorf("one identity from seven addresses: %d calls hold their bodies, %d refused; want 4 and 12", started, len(refused))
	}
	for i, r := range refused {
		wantLimited(t, fmt.Sprintf("mallory's refused call %d", i), r)
		if !strings.Contains(r.body, "from this caller") {
			t.Errorf("mallory's refused call %d: %s; want the caller's refusal", i, r.body)
		}
	}

	echo := "alpha__" + mcptest.ToolEcho
	r, err := sendFrom(ctx, from("127.0.0.9"), url, bob, echo, paddedCall(echo, `{"text":"bob was served"}`, 60<<10))
	if err != nil {
		t.Fatal(err)
	}
	if r.status != http.StatusOK || r.code != 0 || !strings.Contains(r.body, "bob was served") {
		t.Errorf("another caller while mallory holds its share: %d %d\n%s", r.status, r.code, r.body)
	}
}
