package gateway

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestUnsentBodyClosesItsConnection: a request whose body never arrives whole is answered and
// its connection closed, whatever announced the body. net/http reads the rest of a body the
// handler left unread (up to 256 KiB) before it lets a connection go; a read without a deadline
// there waits for bytes a stalled client never sends, so the connection and its goroutine were
// held for as long as the client liked after the answer said "Connection: close", outside every
// listener timeout, and a client could hold any number of them. Each case sends a tools/call's
// headers and less of its body than they announce, then nothing; the answer must come, and the
// connection must end (EOF or a reset) well before the fail-safe deadline the test reads with.
func TestUnsentBodyClosesItsConnection(t *testing.T) {
	alpha := mcptest.StartServer(t, "alpha")
	gw := startTestGateway(t, func(c *Config) { c.Server.BodyReadTimeout = time.Second }, alpha)
	head := "POST /mcp HTTP/1.1\r\nHost: " + gw.MCP + "\r\nContent-Type: application/json\r\n" +
		"Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n" +
		"Mcp-Method: tools/call\r\nMcp-Name: alpha__echo\r\n"
	for _, tt := range []struct {
		name, rest string
		status     int
	}{
		{"part of a body", "Content-Length: 5000\r\n\r\n{\"jsonrpc\":", http.StatusRequestTimeout},
		{"100-continue, no body", "Expect: 100-continue\r\nContent-Length: 5000\r\n\r\n", http.StatusRequestTimeout},
		{"part of a chunked body", "Transfer-Encoding: chunked\r\n\r\n5\r\n{\"jso\r\n", http.StatusRequestTimeout},
		// net/http answers an expectation it does not know itself, before any handler.
		{"unknown expectation, no body", "Expect: something\r\nContent-Length: 5000\r\n\r\n", http.StatusExpectationFailed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", gw.MCP)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			// A fail-safe, not a timing assertion: without the fix the connection stays open
			// for as long as the client keeps it.
			_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
			if _, err := io.WriteString(conn, head+tt.rest); err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(conn)
			res, err := http.ReadResponse(br, nil)
			for err == nil && res.StatusCode == http.StatusContinue {
				res, err = http.ReadResponse(br, nil)
			}
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode != tt.status {
				t.Fatalf("status %d, want %d", res.StatusCode, tt.status)
			}
			n, err := br.Read(make([]byte, 1))
			switch {
			case errors.Is(err, os.ErrDeadlineExceeded):
				t.Fatal("the connection was still open long after its answer")
			case n > 0 || err == nil:
				t.Fatalf("bytes after the answer: %d %v", n, err)
			case !errors.Is(err, io.EOF) && !strings.Contains(err.Error(), "reset"):
				t.Fatalf("after the answer: %v, want the connection closed", err)
			}
		})
	}
}
