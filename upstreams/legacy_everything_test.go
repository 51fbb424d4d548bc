package upstreams

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/era"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams/internal/upstreamstest"
)

// startEverything runs the go-sdk's conformance everything-server on a free loopback port,
// stateful (2025-11-25 sessions) or stateless (2026-07-28), and waits until it answers.
func startEverything(t *testing.T, stateless bool) string {
	t.Helper()
	for range 5 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		cmd := exec.Command(everythingServer, "-http", addr, fmt.Sprintf("-stateless=%v", stateless))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited) }()
		t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
		if waitListening(addr, exited) {
			return "http://" + addr + "/mcp"
		}
	}
	t.Fatal("everything-server did not start")
	return ""
}

func waitListening(addr string, exited <-chan struct{}) bool {
	for range 200 {
		select {
		case <-exited:
			return false // lost the port to someone else; try another
		default:
		}
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return true
		}
		time.Sleep(25 * time.Millisecond)
	}
	return false
}

// TestEverythingServerLegacyAndModern puts the go-sdk's conformance server behind one Registry
// twice, stateful (bridged as 2025-11-25) and stateless (2026-07-28), and uses both the same way.
func TestEverythingServerLegacyAndModern(t *testing.T) {
	legacyURL, modernURL := startEverything(t, false), startEverything(t, true)
	r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{
		{Name: "old", URL: legacyURL}, {Name: "new", URL: modernURL},
	}}, Options{})
	res, err := r.List(context.Background(), &ListRequest{Method: MethodToolsList, Params: json.RawMessage(`{"_meta":` + upstreamstest.Meta + `}`)})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"old__test_simple_text"`, `"new__test_simple_text"`, `"old__test_tool_with_progress"`} {
		if !strings.Contains(string(res), want) {
			t.Errorf("merged tools/list lacks %s", want)
		}
	}
	if r.byName["old"].Era() != era.Legacy || r.byName["new"].Era() != era.Modern {
		t.Fatal("eras not detected as stateful=legacy, stateless=modern")
	}
	for _, up := range []string{"old", "new"} {
		t.Run(up, func(t *testing.T) {
			m := callOnce(t, r, MethodToolsCall, up+"__test_simple_text", KindTool,
				`{"_meta":`+upstreamstest.Meta+`,"name":"`+up+`__test_simple_text"}`)
			if got := mcptest.Path(m, "result", "content", 0, "text"); got != "This is a simple text response for testing." {
				t.Fatalf("test_simple_text: %v", m)
			}
			m = callOnce(t, r, MethodResourcesRead, up+"+test://static-text", KindResource,
				`{"_meta":`+upstreamstest.Meta+`,"uri":"`+up+`+test://static-text"}`)
			if mcptest.Path(m, "result", "contents", 0, "uri") != up+"+test://static-text" || mcptest.Path(m, "result", "cacheScope") == nil {
				t.Fatalf("static-text: %v", m)
			}
			s, err := r.Call(context.Background(), &Call{Method: MethodToolsCall, ID: json.RawMessage(`"p"`),
				Target: Target{Upstream: up, Name: "test_tool_with_progress"},
				Params: json.RawMessage(`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
					`"io.modelcontextprotocol/clientCapabilities":{},"progressToken":"tok"},"name":"` + up + `__test_tool_with_progress"}`),
				ProgressToken: json.RawMessage(`"tok"`)})
			if err != nil {
				t.Fatal(err)
			}
			msgs := collect(t, s)
			if len(msgs) != 4 || !strings.Contains(msgs[0], `"progressToken":"tok"`) || !strings.Contains(msgs[3], `"text":"tok"`) {
				t.Fatalf("progress call: %v", msgs)
			}
		})
	}
}

// backend0 is a test accessor for a configured backend.
