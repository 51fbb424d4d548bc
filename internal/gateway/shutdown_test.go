package gateway

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/testsupport/legacyclient"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestShutdownDrains holds docs/deploy.md's drain: on termination the gateway reports
// not-ready and keeps serving for server.drainDelay, then stops accepting and lets the calls in
// flight finish for up to server.shutdownTimeout; one still running then (its backend hangs) is
// ended, its backend call cancelled, and the gateway exits.
func TestShutdownDrains(t *testing.T) {
	release, cancelled := make(chan struct{}), make(chan struct{})
	alpha := mcptest.StartServer(t, "alpha", holdingTool(release, nil))
	beta := mcptest.StartServer(t, "beta", holdingTool(make(chan struct{}), cancelled))
	cfg := testConfig("error", "text", alpha, beta)
	cfg.Auth.Disabled = true
	cfg.applyDefaults()
	cfg.Server.DrainDelay, cfg.Server.ShutdownTimeout = 2*time.Second, 3*time.Second
	for i := range cfg.Upstreams {
		cfg.Upstreams[i].Timeout = time.Minute // the hanging call is ended by the shutdown, not its own timeout
	}
	gw, terminate, done := startServing(t, cfg)
	url := "http://" + gw.MCP + "/mcp"
	finishing, hanging := startHeldCallOf(t, url, "alpha__hold"), startHeldCallOf(t, url, "beta__hold")

	terminate()
	mcptest.WaitFor(t, "not ready while draining", func() bool { status, _ := readyz(t, gw); return status == http.StatusServiceUnavailable })
	if res, err := mcptest.Connect(t, url).CallTool(context.Background(), &mcp.CallToolParams{
		Name: "alpha__echo", Arguments: map[string]any{"text": "still served"}}); err != nil || res.IsError {
		t.Fatalf("a call during the drain delay: %v %+v", err, res)
	}
	mcptest.WaitFor(t, "the listener closed after the drain delay", func() bool {
		c, err := net.DialTimeout("tcp", gw.MCP, time.Second)
		if err == nil {
			c.Close()
		}
		return err != nil
	})
	close(release)
	if r := <-finishing; r.err != nil || r.res.IsError || r.res.Content[0].(*mcp.TextContent).Text != "held to the end" {
		t.Fatalf("the call in flight at shutdown: %v %+v", r.err, r.res)
	}
	select {
	case <-cancelled:
	case <-time.After(reloadWait):
		t.Fatal("the hanging backend call was not cancelled after server.shutdownTimeout")
	}
	if r := <-hanging; r.err == nil && !r.res.IsError {
		t.Fatalf("the hanging call completed: %+v", r.res)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(reloadWait):
		t.Fatal("the gateway did not exit")
	}
}

// startServing validates cfg and serves it as the process does until terminate is called (the
// SIGTERM); done receives serve's result.
func startServing(t *testing.T, cfg *Config) (gw Listeners, terminate func(), done <-chan error) {
	t.Helper()
	if err := cfg.validate(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	listening, served := make(chan Listeners, 1), make(chan error, 1)
	go func() {
		served <- serve(ctx, cfg, func(string) string { return "" }, io.Discard, io.Discard, listening)
	}()
	select {
	case gw = <-listening:
	case err := <-served:
		t.Fatalf("serve: %v", err)
	}
	return gw, cancel, served
}

// startHeldCallOf is startHeldCall for any holding tool.
func startHeldCallOf(t *testing.T, url, tool string) <-chan heldResult {
	t.Helper()
	progressed, onProgress := progressSignal()
	return heldCallOf(t, mcptest.Connect(t, url, mcptest.WithProgress(onProgress)), tool, progressed)
}

// TestShutdownAnswersCutCalls: the calls still running when server.shutdownTimeout passes are
// not left to lose their connections: each gets a JSON-RPC error (-32014, saying the gateway is
// shutting down and the call may or may not have run) on its open response, for 2026-07-28 and
// 2025-11-25 clients alike: on an event stream (progress had started it; go-sdk clients read
// it), or as a JSON body with 503 (read raw: the go-sdk client drops the body of a 503, which
// it takes as transient), and the gateway still exits.
func TestShutdownAnswersCutCalls(t *testing.T) {
	started := make(chan struct{}, 8)
	be := mcptest.StartServer(t, "be", mcptest.WithTool(&mcp.Tool{Name: "hang", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if tok := req.Params.GetProgressToken(); tok != nil {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Message: "hanging"})
			}
			started <- struct{}{}
			<-ctx.Done()
			return nil, ctx.Err()
		}))
	cfg := testConfig("error", "text", be)
	cfg.Auth.Disabled = true
	cfg.Legacy.Enabled = true
	// Without a GET stream: a go-sdk client whose stream ends and cannot reconnect (this
	// gateway has no other replica) fails its whole session, whichever answer comes first.
	cfg.Legacy.GetStream = false
	cfg.applyDefaults()
	// 5 s leaves the cut calls half a second (a tenth) to be answered on a loaded machine.
	cfg.Server.DrainDelay, cfg.Server.ShutdownTimeout = 50*time.Millisecond, 5*time.Second
	cfg.Upstreams[0].Timeout = time.Minute
	gw, terminate, done := startServing(t, cfg)
	url := "http://" + gw.MCP + "/mcp"
	calls := map[string]chan cutAnswer{}
	begin := func(name string, call func() cutAnswer) {
		out := make(chan cutAnswer, 1)
		go func() { out <- call() }()
		calls[name] = out
		select {
		case <-started:
		case <-time.After(reloadWait):
			t.Fatalf("%s: the call did not reach the backend", name)
		}
	}
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		cs := mcptest.Connect(t, url, mcptest.WithProtocolVersion(version))
		begin(version+" SSE", func() cutAnswer {
			params := &mcp.CallToolParams{Name: "be__hang", Arguments: map[string]any{}}
			params.SetProgressToken("p")
			_, err := cs.CallTool(context.Background(), params)
			return cutAnswer{err: err}
		})
	}
	h := modernHeaders("tools/call", "be__hang")
	begin("2026-07-28 JSON", func() cutAnswer {
		return rawCut(url, h, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`+testMeta+`,"name":"be__hang","arguments":{}}}`)
	})
	legacy := &legacyclient.Raw{}
	sid := legacy.Initialize(t, url)
	req, err := legacy.Request(context.Background(), url, sid, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"be__hang","arguments":{}}}`)
	if err != nil {
		t.Fatal(err)
	}
	begin("2025-11-25 JSON", func() cutAnswer {
		return rawCut(url, req.Header, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"be__hang","arguments":{}}}`)
	})
	// A 2025-03-26 batch (no SDK client sends one): its message is answered on the batch's stream.
	old := &legacyclient.Raw{Protocol: legacyclient.Protocol20250326}
	if req, err = old.Request(context.Background(), url, old.Initialize(t, url), ""); err != nil {
		t.Fatal(err)
	}
	begin("2025-03-26 batch", func() cutAnswer {
		a := rawCut(url, req.Header, `[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"be__hang","arguments":{}}}]`)
		a.batch = true
		return a
	})
	terminate()
	for name, out := range calls {
		select {
		case a := <-out:
			a.check(t, name)
		case <-time.After(reloadWait):
			t.Fatalf("%s: the call did not end", name)
		}
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(reloadWait):
		t.Fatal("the gateway did not exit")
	}
}

// cutAnswer is how a call cut by the shutdown ended: an SDK client's error, or a raw
// response's status and body.
type cutAnswer struct {
	err    error
	status int
	body   string
	batch  bool // body is a batch's event stream
}

// rawCut posts body with h and reads the whole answer.
func rawCut(url string, h http.Header, body string) cutAnswer {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return cutAnswer{err: err}
	}
	req.Header = h.Clone()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return cutAnswer{err: err}
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return cutAnswer{err: err, status: res.StatusCode, body: string(b)}
}

// check fails t unless the answer is the gateway's shutdown error.
func (a cutAnswer) check(t *testing.T, name string) {
	t.Helper()
	const code, says = -32014, "shutting down: this request was cancelled, and a call may or may not have run"
	if a.status == 0 {
		if rpcCode(a.err) != code || !strings.Contains(a.err.Error(), says) {
			t.Errorf("%s: err = %v, want %d saying %q", name, a.err, code, says)
		}
		return
	}
	var m struct {
		ID    json.RawMessage `json:"id"`
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if a.batch {
		msgs := legacyclient.SSEMessages([]byte(a.body))
		if a.err != nil || a.status != http.StatusOK || len(msgs) != 1 || json.Unmarshal(msgs[0], &m) != nil ||
			string(m.ID) != "1" || m.Error.Code != code || !strings.Contains(m.Error.Message, says) {
			t.Errorf("%s: HTTP %d %s (%v), want one event answering id 1 with %d saying %q", name, a.status, a.body, a.err, code, says)
		}
		return
	}
	if a.err != nil || a.status != http.StatusServiceUnavailable || json.Unmarshal([]byte(a.body), &m) != nil ||
		string(m.ID) != "1" || m.Error.Code != code || !strings.Contains(m.Error.Message, says) {
		t.Errorf("%s: HTTP %d %s (%v), want 503 with a %d error for id 1 saying %q", name, a.status, a.body, a.err, code, says)
	}
}
