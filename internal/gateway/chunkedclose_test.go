package gateway

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestChunkedRequestClosesItsConnection: a request whose body comes chunked is answered and its
// connection then closed, so nothing that followed the body on that connection is read as a
// request (RFC 9112 §6.1). net/http drops a Content-Length sent beside Transfer-Encoding before
// the handler sees it, so the gateway cannot tell when both came; a proxy in front that framed
// the body by its Content-Length would have taken what follows the chunks as part of it, and
// this gateway would have served it as a request of its own (request smuggling). Each case
// sends a tools/call and, on the same connection, a second one; with a chunked first body the
// second must never reach the backend. A body sent with a Content-Length alone keeps the
// connection, and its second call runs: the case shows the test can tell the two apart.
func TestChunkedRequestClosesItsConnection(t *testing.T) {
	alpha := mcptest.StartServer(t, "alpha")
	gw := startTestGateway(t, nil, alpha)
	call := func(text string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + testMeta +
			`,"name":"alpha__echo","arguments":{"text":"` + text + `"}}}`
	}
	head := "POST /mcp HTTP/1.1\r\nHost: " + gw.MCP + "\r\nContent-Type: application/json\r\n" +
		"Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n" +
		"Mcp-Method: tools/call\r\nMcp-Name: alpha__echo\r\n"
	second := head + fmt.Sprintf("Content-Length: %d\r\n\r\n", len(call("second"))) + call("second")
	chunked := func(body string) string { return fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(body), body) }
	for _, tt := range []struct {
		name        string
		first       string
		keepsSecond bool
	}{
		// What a proxy framing by Content-Length passes on: the chunks and the next request
		// counted as one body.
		{"chunked with a content length", head + "Transfer-Encoding: chunked\r\n" +
			fmt.Sprintf("Content-Length: %d\r\n\r\n", len(chunked(call("first")))+len(second)) + chunked(call("first")), false},
		{"chunked", head + "Transfer-Encoding: chunked\r\n\r\n" + chunked(call("first")), false},
		{"content length", head + fmt.Sprintf("Content-Length: %d\r\n\r\n", len(call("first"))) + call("first"), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			alpha.Reset()
			conn, err := net.Dial("tcp", gw.MCP)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			_ = conn.SetDeadline(time.Now().Add(20 * time.Second)) // a fail-safe, not a timing assertion
			if _, err := io.WriteString(conn, tt.first+second); err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(conn)
			res, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusOK || !strings.Contains(string(body), "first") {
				t.Fatalf("the first call: %d %s", res.StatusCode, body)
			}
			res, err = http.ReadResponse(br, nil)
			if tt.keepsSecond {
				if err != nil {
					t.Fatalf("the second call on a kept connection: %v", err)
				}
				res.Body.Close()
				if toolCalls(alpha) != 2 {
					t.Fatalf("the backend got %d calls, want both", toolCalls(alpha))
				}
				return
			}
			if err == nil {
				res.Body.Close()
				t.Fatalf("after a chunked body the connection served what followed it: %d", res.StatusCode)
			}
			if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("after a chunked body: %v, want the connection closed", err)
			}
			if res := toolCalls(alpha); res != 1 {
				t.Fatalf("the backend got %d calls, want only the first", res)
			}
		})
	}
}
