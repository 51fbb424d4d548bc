package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/eventstream"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestBackendWithGoSDKClient drives the fast backend with the official go-sdk client, which
// discovers, lists, calls, follows progress over SSE and performs MRTR retries on its own.
func TestBackendWithGoSDKClient(t *testing.T) {
	_, url := startBackend(t, BackendConfig{Tools: 12})
	var progress atomic.Int32
	cs := mcptest.Connect(t, url,
		mcptest.WithElicitation(mcptest.Accept(map[string]any{"approve": true})),
		mcptest.WithProgress(func(context.Context, *mcp.ProgressNotificationClientRequest) { progress.Add(1) }))
	ctx := t.Context()

	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != 12 || tools.Tools[0].Name != ToolEcho {
		t.Fatalf("ListTools = %v, %v; want 12 tools starting with echo", tools, err)
	}
	tests := []struct {
		name string
		args map[string]any
		tok  string
		want string
	}{
		{ToolEcho, map[string]any{"text": "Hello, 世界"}, "", "Hello, 世界"},
		{ToolProgress, map[string]any{"steps": 4}, "tok-1", "done 4"},
		{ToolConfirm, map[string]any{}, "", "confirmed"},
		{ToolSlow, map[string]any{"ms": 1}, "", "slept"},
		{ToolBlob, map[string]any{"bytes": 5}, "", "xxxxx"},
		{ToolBlob, map[string]any{"bytes": 10, "prose": true}, "", "Build 4821"},
		// An empty object, not nil: the go-sdk sends nil arguments as "arguments":null, which the
		// strict jsonrpc leaf rejects as not an object.
		{"tool_0012", map[string]any{}, "", "ok"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &mcp.CallToolParams{Name: tt.name, Arguments: tt.args}
			if tt.tok != "" {
				p.SetProgressToken(tt.tok)
			}
			res, err := cs.CallTool(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != tt.want {
				t.Fatalf("result %+v, want text %q", res, tt.want)
			}
		})
	}
	if n := progress.Load(); n != 4 {
		t.Errorf("go-sdk client saw %d progress notifications, want 4", n)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tool_0013", Arguments: map[string]any{}}); err == nil {
		t.Error("calling a tool beyond the list succeeded")
	}
}

// post sends one raw request and returns the status and body.
func post(t *testing.T, url string, hdr map[string]string, body string) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

func TestBackendProtocolErrors(t *testing.T) {
	_, url := startBackend(t, BackendConfig{})
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	good := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "echo"}
	with := func(k, v string) map[string]string {
		h := map[string]string{}
		for a, b := range good {
			h[a] = b
		}
		if v == "" {
			delete(h, k)
		} else {
			h[k] = v
		}
		return h
	}
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + meta + `,"name":"echo","arguments":{"text":"x"}}}`
	tests := []struct {
		name   string
		hdr    map[string]string
		body   string
		status int
		code   string
	}{
		{"ok", good, call, 200, ""},
		{"no Mcp-Method", with("Mcp-Method", ""), call, 400, "-32020"},
		{"wrong Mcp-Name", with("Mcp-Name", "other"), call, 400, "-32020"},
		{"version header mismatch", with("Mcp-Protocol-Version", "2025-11-25"), call, 400, "-32020"},
		{"missing _meta", good, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`, 400, "-32602"},
		{"unsupported version", with("Mcp-Protocol-Version", "1900-01-01"),
			strings.Replace(call, `"2026-07-28"`, `"1900-01-01"`, 1), 400, "-32022"},
		{"confirm without elicitation", good, strings.Replace(call, `"name":"echo"`, `"name":"confirm"`, 1), 400, "-32021"},
		{"unknown method", with("Mcp-Method", "ping"), `{"jsonrpc":"2.0","id":1,"method":"ping","params":{` + meta + `}}`, 404, "-32601"},
		{"bad Accept", with("Accept", "application/json"), call, 400, "-32600"},
		{"bad Content-Type", with("Content-Type", "text/plain"), call, 415, ""},
		{"notification", with("Mcp-Method", "notifications/x"), `{"jsonrpc":"2.0","method":"notifications/x","params":{` + meta + `}}`, 202, ""},
		{"batch", good, `[` + call + `]`, 400, "-32600"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.name == "confirm without elicitation" {
				tt.hdr = with("Mcp-Name", "confirm")
			}
			status, _, body := post(t, url, tt.hdr, tt.body)
			if status != tt.status || (tt.code != "" && !strings.Contains(body, `"code":`+tt.code)) {
				t.Fatalf("status %d body %s, want %d with code %s", status, body, tt.status, tt.code)
			}
		})
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "POST" {
		t.Fatalf("GET = %v %v, want 405 with Allow: POST", resp, err)
	}
	resp.Body.Close()
}

// captured is the first request of a go-sdk exchange in ../../testsupport/mcptest/testdata.
type captured struct {
	header map[string]string
	body   string
	reply  string // the captured server's first data line or JSON body
}

func readCaptured(t *testing.T, name string) captured {
	t.Helper()
	b, err := os.ReadFile("../../testsupport/mcptest/testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	c := captured{header: map[string]string{}}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	state := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, ">>> "):
			if c.body != "" {
				return c
			}
			state = "reqhdr"
		case strings.HasPrefix(line, "<<< "):
			state = "resphdr"
		case line == "" && state == "reqhdr":
			state = "reqbody"
		case line == "" && state == "resphdr":
			state = "respbody"
		case state == "reqhdr":
			k, v, _ := strings.Cut(line, ": ")
			c.header[k] = v
		case state == "reqbody" && line != "":
			c.body = line
		case state == "respbody" && strings.HasPrefix(line, "{"):
			c.reply = line
		case state == "respbody" && strings.HasPrefix(line, "data: "):
			c.reply = strings.TrimPrefix(line, "data: ") // the last data line is the response
		}
	}
	return c
}

// TestBackendAgainstCapturedExchanges replays requests the go-sdk client really sent and checks
// the backend's answers carry the same result members as the go-sdk server's.
func TestBackendAgainstCapturedExchanges(t *testing.T) {
	_, url := startBackend(t, BackendConfig{})
	for _, name := range []string{"discover.txt", "tools_list.txt", "tools_call_echo.txt", "tools_call_progress.txt"} {
		t.Run(name, func(t *testing.T) {
			c := readCaptured(t, name)
			delete(c.header, "Content-Length")
			delete(c.header, "Accept-Encoding")
			status, hdr, body := post(t, url, c.header, c.body)
			if status != http.StatusOK {
				t.Fatalf("status %d body %s", status, body)
			}
			last := body
			if strings.HasPrefix(hdr.Get("Content-Type"), "text/event-stream") {
				evs, err := eventstream.Parse([]byte(body), maxBody)
				if err != nil || len(evs) == 0 {
					t.Fatalf("%v: %s", err, body)
				}
				last = string(evs[len(evs)-1].Data)
			}
			got, want := resultKeys(t, last), resultKeys(t, c.reply)
			for k := range want {
				if !got[k] {
					t.Errorf("result lacks %q: got %s", k, last)
				}
			}
			if name == "tools_call_echo.txt" && !strings.Contains(last, `"text":"Hello, 世界"`) {
				t.Errorf("echo result %s", last)
			}
			if name == "tools_call_progress.txt" && strings.Count(body, `"progressToken":"tok-1"`) != 3 {
				t.Errorf("progress stream %s, want 3 notifications for tok-1", body)
			}
		})
	}
}

func resultKeys(t *testing.T, msg string) map[string]bool {
	t.Helper()
	m, err := jsonrpc.DecodeMessage([]byte(msg), jsonrpc.Limits{})
	if err != nil || m.Result == nil {
		t.Fatalf("not a result: %s (%v)", msg, err)
	}
	keys := map[string]bool{}
	var obj map[string]json.RawMessage
	_ = json.Unmarshal(m.Result, &obj)
	for k := range obj {
		keys[k] = true
	}
	return keys
}

// TestHoldStreams opens idle listen streams, then closes the backend, which must end each with
// its closing result.
func TestHoldStreams(t *testing.T) {
	b, url := startBackend(t, BackendConfig{})
	s, err := OpenStreams(t.Context(), HoldConfig{URL: url, Streams: 20, Parallel: 4}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Opened != 20 || len(s.Failed) != 0 {
		t.Fatalf("opened %d failed %v, want 20 and none", s.Opened, s.Failed)
	}
	if s.Ended() != 0 {
		t.Fatalf("%d streams ended while the backend was up", s.Ended())
	}
	b.Close()
	deadline := time.Now().Add(20 * time.Second)
	for s.Ended() < 20 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if s.Ended() != 20 {
		t.Fatalf("%d of 20 streams ended after the backend closed", s.Ended())
	}
}

func TestHoldRefusesNonLoopback(t *testing.T) {
	if _, err := OpenStreams(t.Context(), HoldConfig{URL: "http://192.0.2.1/mcp"}, nil); err == nil {
		t.Fatal("OpenStreams accepted a non-loopback target")
	}
}
