package gateway

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestUnreadBodyIsCut: a request refused without its body being read (a wrong Content-Type on
// the MCP endpoint, a route that does not exist, a method an admin route does not take) whose
// chunked body never ends is still answered, with its connection closed, once
// server.bodyReadTimeout has passed: net/http reads such a body on before it writes the
// response, and nothing else bounds that read.
func TestUnreadBodyIsCut(t *testing.T) {
	gw := startTestGateway(t, func(c *Config) { c.Server.BodyReadTimeout = time.Second }, mcptest.StartServer(t, "alpha"))
	for _, tc := range []struct {
		name, addr, head string
		status           int
	}{
		{"MCP endpoint, wrong Content-Type", gw.MCP, "POST /mcp HTTP/1.1\r\nContent-Type: text/plain\r\n" +
			"Accept: application/json, text/event-stream\r\n", http.StatusUnsupportedMediaType},
		{"MCP listener, no such route", gw.MCP, "POST /elsewhere HTTP/1.1\r\nContent-Type: application/json\r\n", http.StatusNotFound},
		{"admin listener", gw.Admin, "POST /metrics HTTP/1.1\r\nContent-Type: application/json\r\n", http.StatusMethodNotAllowed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := net.Dial("tcp", tc.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			// One chunk, and then nothing: the body neither goes on nor ends.
			fmt.Fprintf(c, "%sHost: %s\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n{\r\n", tc.head, tc.addr)
			_ = c.SetReadDeadline(time.Now().Add(20 * time.Second)) // generous: the bound is 1 s
			res, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatalf("no answer while the body never ended: %v", err)
			}
			res.Body.Close()
			if res.StatusCode != tc.status || !res.Close {
				t.Fatalf("status %d, close %v; want %d and the connection closed", res.StatusCode, res.Close, tc.status)
			}
		})
	}
}
