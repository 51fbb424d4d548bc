package gateway

import (
	"crypto/tls"
	"encoding/json"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/certtest"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestHTTPServerLinesReachTheLog: what net/http itself reports about a connection (a TLS
// handshake that fails, an HTTP/2 connection that does not start with the preface) is something
// any client can make the gateway write, a line per connection, with no token. Each is a line of
// the gateway's own log: JSON like every other line, through the log's bounded queue, at the
// configured level. Written by the process-wide default logger, they were plain text lines on
// stderr among the JSON ones, written synchronously by the connection's goroutine, whatever
// log.format and log.level said.
func TestHTTPServerLinesReachTheLog(t *testing.T) {
	ca := certtest.NewCA(t)
	mount := certtest.NewMount(t, t.TempDir(), ca.Issue(t, certtest.Leaf{CommonName: "gateway"}))
	gw, logs, stop := startLoggedGateway(t, func(c *Config) {
		c.Auth.Disabled = true
		c.Server.TLS = TLSConfig{CertFile: mount.CertFile(), KeyFile: mount.KeyFile()}
	}, mcptest.StartServer(t, "alpha"))

	// A handshake that is not one.
	conn, err := net.Dial("tcp", gw.MCP)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Write([]byte("\x16\x03\x01\x00\x05ZZZZZ")); err != nil {
		t.Fatal(err)
	}
	_, _ = io.ReadAll(conn) // the server's alert, then its close
	conn.Close()
	// HTTP/2 agreed on, then no preface.
	tc, err := tls.Dial("tcp", gw.MCP, &tls.Config{RootCAs: ca.Pool(), NextProtos: []string{"h2"}})
	if err != nil {
		t.Fatal(err)
	}
	if p := tc.ConnectionState().NegotiatedProtocol; p != "h2" {
		t.Fatalf("negotiated %q, want h2", p)
	}
	if _, err := tc.Write([]byte(strings.Repeat("Z", 24))); err != nil {
		t.Fatal(err)
	}
	_, _ = io.ReadAll(tc)
	tc.Close()
	stop()

	handshakes, prefaces := 0, 0
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("a log line that is not JSON: %.300q", line)
		}
		msg, _ := m["msg"].(string)
		if m["level"] != "WARN" {
			continue
		}
		if strings.Contains(msg, "TLS handshake error") {
			handshakes++
		}
		if strings.Contains(msg, "error reading preface") {
			prefaces++
		}
	}
	if handshakes != 1 || prefaces != 1 {
		t.Errorf("the gateway's log has %d lines of the failed handshake and %d of the missing preface, want 1 each:\n%s",
			handshakes, prefaces, logs.String())
	}
}
