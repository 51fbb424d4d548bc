package gateway

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// holdUnread POSTs one call of the edge backend's big tool as tok on a raw connection with a
// small receive buffer, reads the response's head and nothing more, and leaves the connection
// open until the test ends: a response that started is held unread. It returns the response.
func (f *edgeFixture) holdUnread(t *testing.T, tok string) *http.Response {
	t.Helper()
	c, err := net.Dial("tcp", f.gw.MCP)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.(*net.TCPConn).SetReadBuffer(4 << 10)
	body := edgeCallBody("big")
	fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"+
		"Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\n"+
		"Mcp-Name: edge__big\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n\r\n%s", f.gw.MCP, tok, len(body), body)
	_ = c.SetReadDeadline(time.Now().Add(30 * time.Second)) // a fail-safe for a loaded machine
	// Only the head is read (and a few KiB of the body with it): the rest stays unread.
	res, err := http.ReadResponse(bufio.NewReaderSize(c, 4<<10), nil)
	if err != nil {
		t.Fatalf("no response head: %v", err)
	}
	return res
}

// TestOneCallerCannotTakeTheResultBudget: the replica's result budget is shared between callers,
// one caller's responses being read or written within a share of it (an eighth, and at least
// three times the largest maxResponseBytes, so that one response always fits). A caller who asks
// for 15 MB results and reads none holds what its share of 48 MiB fits (two, the third's buffer
// growing past it); its next is refused with 429 -32012 (its own limit), while another caller's 15 MB result is
// still relayed whole. Before, the budget had no share: the
// one caller's unread results took all of it and every other caller's large result was refused
// until the write deadlines cut them (a minute and more each, again at every call).
func TestOneCallerCannotTakeTheResultBudget(t *testing.T) {
	const budget = 80 * mib // a share is 48 MiB: three times the default maxResponseBytes of 16 MiB
	f := startEdgeGateway(t, func(c *Config) {
		c.Server.MaxResultBytesInFlight = budget
		c.Server.WriteTimeout = time.Minute // the unread responses stay held for the test
	})
	held := 0
	for range budget/bigText + 2 {
		res := f.holdUnread(t, f.attacker)
		if res.StatusCode != http.StatusOK {
			// Its own limit, as too many concurrent requests from it are: not the replica's
			// overload (503), which would send it to another replica for nothing.
			b, _ := io.ReadAll(res.Body)
			if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") != "1" ||
				!strings.Contains(string(b), `"code":-32012`) || !strings.Contains(string(b), "for this caller") {
				t.Fatalf("an attacker's call past its share: HTTP %d, Retry-After %q: %s; want 429 -32012 for this caller", res.StatusCode, res.Header.Get("Retry-After"), b)
			}
			break
		}
		held++
	}
	inFlight := scrapeValue(t, f.gw.Admin, "mcp_gateway_result_bytes_in_flight")
	t.Logf("one caller holds %d unread 15 MB results, %.1f MiB of the %d MiB budget", held, inFlight/mib, budget/mib)
	if held == 0 {
		t.Fatal("no attacker's call was relayed")
	}
	if held*bigText > 48*mib {
		t.Errorf("one caller holds %d unread results of 15 MB, past its share of 48 MiB", held)
	}
	status, code, err := f.call(&http.Client{Timeout: 90 * time.Second}, f.healthy, "big")
	if err != nil || status != http.StatusOK || code != 0 {
		t.Errorf("another caller's 15 MB result while the first holds its share: HTTP %d code %d err %v; want 200 with the whole result", status, code, err)
	}
}
