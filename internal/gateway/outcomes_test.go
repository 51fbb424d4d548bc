package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams"
)

// outcomeBackend is an MCP backend on loopback that decodes each request with encoding/json into
// a struct, as Go backends do, and answers tools/call by the tool's name: "ok" with a result,
// "reject" with a JSON-RPC error, "garbage" with a body that is not JSON-RPC, "hang" not at all
// until the request ends. entered receives the name of every tools/call as it arrives.
type outcomeBackend struct {
	srv     *httptest.Server
	entered chan string
}

func startOutcomeBackend(t *testing.T) *outcomeBackend {
	t.Helper()
	ob := &outcomeBackend{entered: make(chan string, 64)}
	ob.srv = httptest.NewServer(http.HandlerFunc(ob.serve))
	t.Cleanup(ob.srv.Close)
	return ob
}

func (ob *outcomeBackend) serve(w http.ResponseWriter, r *http.Request) {
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.ID) == 0 {
		w.WriteHeader(http.StatusAccepted) // a notification
		return
	}
	answer := func(member string) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,`+member+`}`)
	}
	switch req.Method {
	case "server/discover":
		answer(`"result":{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"serverInfo":{"name":"outcomes","version":"1"}}`)
		return
	case "tools/list":
		answer(`"result":{"tools":[` + outcomeTool("ok") + `,` + outcomeTool("reject") + `,` + outcomeTool("garbage") + `,` +
			outcomeTool("hang") + `,` + outcomeTool("confirm") + `,` + outcomeTool("limited") + `]}`)
		return
	case "tools/call":
	default:
		answer(`"error":{"code":-32601,"message":"Method not found"}`)
		return
	}
	ob.entered <- req.Params.Name
	switch req.Params.Name {
	case "ok", "limited", "confirm":
		answer(`"result":{"content":[{"type":"text","text":"done"}]}`)
	case "reject":
		answer(`"error":{"code":-32602,"message":"Invalid params: no such record"}`)
	case "garbage":
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, "<html>not JSON-RPC</html>")
	case "hang":
		<-r.Context().Done()
	}
}

func outcomeTool(name string) string {
	return `{"name":"` + name + `","inputSchema":{"type":"object"}}`
}

// closedPort returns a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

const outcomesResource = "https://mcp.test.invalid/mcp"

// outcomeMeta declares form elicitation, so a confirmation is asked rather than refused.
const outcomeMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
	`"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`

// TestOutcomesScraped drives the real gateway, with authentication, a policy and four backends,
// into every outcome it can reach from outside, and compares what GET /metrics on the admin
// listener returns, series by series, with what each request must have counted. A backend's
// JSON-RPC error is backend_error on both the client request and the backend request; the
// gateway's own failure (error) is counted by no request here.
func TestOutcomesScraped(t *testing.T) {
	iss, err := devissuer.New(devissuer.Options{Audience: outcomesResource})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { iss.Close() })
	tok, err := iss.Mint(devissuer.Claims{"sub": "alice", "scope": "tools:use"})
	if err != nil {
		t.Fatal(err)
	}
	good, garbage, slow := startOutcomeBackend(t), startOutcomeBackend(t), startOutcomeBackend(t)
	gw := startTestGateway(t, func(c *Config) {
		c.Auth.Disabled = false
		c.Server.PublicURL = outcomesResource
		c.MRTR.Keys = []KeyConfig{{ID: "k1", Secret: Secret{Value: "an-outcomes-test-secret-of-32-bytes-or-more"}}}
		c.Auth.Issuers = []authz.IssuerConfig{{Issuer: iss.URL()}}
		c.HealthInterval = time.Hour
		c.Upstreams = nil
		for _, u := range []struct {
			name, url string
			timeout   time.Duration
		}{
			{"good", good.srv.URL, 10 * time.Second},
			{"bad", garbage.srv.URL, 10 * time.Second},
			{"slow", slow.srv.URL, time.Second},
			{"gone", "http://" + closedPort(t), 10 * time.Second},
		} {
			var uc UpstreamConfig
			uc.Name, uc.URL, uc.Protocol, uc.Timeout = u.name, u.url+"/mcp", upstreams.ProtocolVersion, u.timeout
			c.Upstreams = append(c.Upstreams, uc)
			c.Auth.Policy.Rules = append(c.Auth.Policy.Rules, authz.RuleConfig{ID: u.name, Upstream: u.name,
				Tools: []string{"ok", "reject", "garbage", "hang"}, AnyScope: []string{"tools:use"}})
		}
		c.Auth.Policy.Rules = append(c.Auth.Policy.Rules,
			authz.RuleConfig{ID: "confirm", Upstream: "good", Tools: []string{"confirm"}, AnyScope: []string{"tools:use"}, Confirm: authz.ConfirmForm},
			authz.RuleConfig{ID: "limited", Upstream: "good", Tools: []string{"limited"}, AnyScope: []string{"tools:use"}, RateLimit: "1/h"})
	})
	url := "http://" + gw.MCP + "/mcp"
	call := func(ctx context.Context, name, bearer string) (int, string, error) {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + outcomeMeta + `,"name":"` + name + `","arguments":{}}}`
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
		if err != nil {
			return 0, "", err
		}
		req.Header = mcptest.RequestHeaders("tools/call", name)
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		return res.StatusCode, string(b), err
	}
	for _, c := range []struct {
		name, bearer string
		status       int
		body         string
	}{
		{"good__ok", tok, http.StatusOK, `"text":"done"`},
		{"good__reject", tok, http.StatusOK, `"code":-32602,"message":"Invalid params: no such record"`},
		{"bad__garbage", tok, http.StatusBadGateway, `"code":`},
		{"slow__hang", tok, http.StatusGatewayTimeout, `"code":`},
		{"gone__ok", tok, http.StatusBadGateway, `"code":`},
		{"nobody__ok", tok, http.StatusBadRequest, `"code":-32602`},
		{"good__ok", "", http.StatusUnauthorized, ``},
		{"good__confirm", tok, http.StatusOK, `"resultType":"input_required"`},
		{"good__limited", tok, http.StatusOK, `"text":"done"`},
		{"good__limited", tok, http.StatusTooManyRequests, `"code":`},
	} {
		status, body, err := call(context.Background(), c.name, c.bearer)
		if err != nil || status != c.status || !strings.Contains(body, c.body) {
			t.Fatalf("%s: status %d, body %s, err %v; want %d with %s", c.name, status, body, err, c.status, c.body)
		}
	}

	// The caller goes away while the backend is working on its call.
	for len(good.entered) > 0 {
		<-good.entered
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { _, _, err := call(ctx, "good__hang", tok); errc <- err }()
	select {
	case <-good.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the hanging call never reached the backend")
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled call: %v", err)
	}

	want := map[string][]string{
		"mcp_gateway_requests_total": {
			`{method="tools/call",outcome="ok"} 2`,
			`{method="tools/call",outcome="backend_error"} 1`,
			`{method="tools/call",outcome="bad_response"} 1`,
			`{method="tools/call",outcome="timeout"} 1`,
			`{method="tools/call",outcome="unavailable"} 1`,
			`{method="tools/call",outcome="client_error"} 1`,
			`{method="tools/call",outcome="denied"} 1`,
			`{method="tools/call",outcome="input_required"} 1`,
			`{method="tools/call",outcome="rate_limited"} 1`,
			`{method="tools/call",outcome="canceled"} 1`,
		},
		"mcp_gateway_upstream_requests_total": {
			`{method="tools/call",outcome="ok",upstream="good"} 2`,
			`{method="tools/call",outcome="backend_error",upstream="good"} 1`,
			`{method="tools/call",outcome="bad_response",upstream="bad"} 1`,
			`{method="tools/call",outcome="timeout",upstream="slow"} 1`,
			// gone's call fails on its tools/list, which the gateway reads to check the name: no
			// tools/call is sent to it.
			`{method="tools/call",outcome="canceled",upstream="good"} 1`,
		},
	}
	// The canceled request is counted when the gateway notices; wait for it, within a bound.
	var got map[string][]string
	for deadline := time.Now().Add(10 * time.Second); ; {
		got = scrapeCalls(t, "http://"+gw.Admin+"/metrics")
		if equalSeries(got, want) || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	for family, series := range want {
		if !slices.Equal(got[family], sorted(series)) {
			t.Errorf("%s:\n got %s\nwant %s", family, strings.Join(got[family], "\n     "), strings.Join(sorted(series), "\n     "))
		}
	}
}

// scrapeCalls returns, per family, the tools/call series of the two request counters as the
// exposition writes them (labels in name order, and the value), sorted. Health probes (server/discover) and tool
// list fetches depend on timing and caching, so only tools/call is compared.
func scrapeCalls(t *testing.T, url string) map[string][]string {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out := map[string][]string{}
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		line := sc.Text()
		family, rest, ok := strings.Cut(line, "{")
		if !ok || (family != "mcp_gateway_requests_total" && family != "mcp_gateway_upstream_requests_total") {
			continue
		}
		if strings.Contains(rest, `method="tools/call"`) {
			out[family] = append(out[family], "{"+rest)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for f := range out {
		slices.Sort(out[f])
	}
	return out
}

func equalSeries(got, want map[string][]string) bool {
	for f, s := range want {
		if !slices.Equal(got[f], sorted(s)) {
			return false
		}
	}
	return true
}

func sorted(s []string) []string { return slices.Sorted(slices.Values(s)) }
