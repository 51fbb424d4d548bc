package mcptest

import (
	"encoding/base64"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestClock(t *testing.T) {
	start := time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)
	c := NewClock(start)
	if got := c.Now(); !got.Equal(start) || got.Location() != time.UTC {
		t.Fatalf("Now = %v, want %v in UTC", got, start)
	}
	if !c.Now().Equal(start) {
		t.Fatal("the clock moved on its own")
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { c.Advance(time.Second) })
	}
	wg.Wait()
	if got := c.Now(); !got.Equal(start.Add(8 * time.Second)) {
		t.Fatalf("after 8 concurrent Advance(1s): %v", got)
	}
}

func TestLogBuffer(t *testing.T) {
	var b LogBuffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { _, _ = b.Write([]byte("line\n")) })
	}
	wg.Wait()
	if got := b.String(); got != strings.Repeat("line\n", 8) {
		t.Fatalf("String = %q", got)
	}
}

func TestJWTClaims(t *testing.T) {
	enc := base64.RawURLEncoding.EncodeToString
	tok := enc([]byte(`{"alg":"none"}`)) + "." + enc([]byte(`{"sub":"alice","aud":"x"}`)) + ".sig"
	c := JWTClaims(t, tok)
	if c["sub"] != "alice" || c["aud"] != "x" || len(c) != 2 {
		t.Fatalf("claims = %v", c)
	}
}

func TestRequestsOf(t *testing.T) {
	srv := StartServer(t, "kit")
	cs := Connect(t, srv.URL())
	srv.Reset()
	if _, err := cs.ListTools(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: ToolEcho, Arguments: map[string]any{"text": "x"}}); err != nil {
			t.Fatal(err)
		}
	}
	calls := srv.RequestsOf("tools/call")
	if len(calls) != 2 || len(srv.RequestsOf("tools/list")) != 1 || len(srv.RequestsOf("prompts/list")) != 0 {
		t.Fatalf("tools/call %d, tools/list %d, prompts/list %d; want 2, 1, 0 of %d recorded",
			len(calls), len(srv.RequestsOf("tools/list")), len(srv.RequestsOf("prompts/list")), len(srv.Requests()))
	}
	for _, ex := range calls {
		if !strings.Contains(string(ex.Body), `"method":"tools/call"`) {
			t.Errorf("RequestsOf(tools/call) returned %s", ex.Body)
		}
	}
}

func TestResultText(t *testing.T) {
	res := &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.TextContent{Text: "a"}, &mcp.ImageContent{MIMEType: "image/png", Data: []byte{1}}, &mcp.TextContent{Text: "b"},
	}}
	if got := ResultText(res); got != "ab" {
		t.Fatalf("ResultText = %q, want %q", got, "ab")
	}
	if got := ResultText(&mcp.CallToolResult{}); got != "" {
		t.Fatalf("ResultText of no content = %q", got)
	}
}

// TestLastSSEDataLineEnds: LastSSEData reads an event stream by the standard's line ends, CR LF,
// LF and a lone CR, and takes the last event that has data.
func TestLastSSEDataLineEnds(t *testing.T) {
	for _, end := range []string{"\n", "\r\n", "\r"} {
		body := ": c" + end + "data: {\"a\":1}" + end + end + "id: 2" + end + "data:{\"b\":2}" + end + end + "id: 3" + end + end
		if got := string(LastSSEData([]byte(body))); got != `{"b":2}` {
			t.Errorf("line end %q: %q", end, got)
		}
	}
}
