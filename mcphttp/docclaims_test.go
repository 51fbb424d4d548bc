package mcphttp

// Behaviour the README and docs/observability.md promise of the MCP listener that no other
// test states as such.

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams"
)

// TestRequestIDs: as the README and docs/observability.md say, a client's X-Request-Id that is
// short and printable is kept, returned and sent to the backend; any other (over 128 bytes, with
// a space, tab or non-ASCII byte) is replaced by a random 128-bit hex id, which is returned and
// sent instead, so a hostile value reaches neither the log nor the backend.
func TestRequestIDs(t *testing.T) {
	be := mcptest.StartServer(t, "be")
	gw := startGateway(t, Config{}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	generated := regexp.MustCompile(`^[0-9a-f]{32}$`)
	for _, tt := range []struct {
		name, sent string
		kept       bool
	}{
		{"printable", "req-42.a_b:c", true},
		{"none", "", false},
		{"too long", strings.Repeat("a", 129), false},
		{"a space", "req 42", false},
		{"a tab", "req\t42", false},
		{"not ASCII", "req-é", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			be.Reset()
			h := modern("tools/call", "be__echo")
			if tt.sent != "" {
				h.Set("X-Request-Id", tt.sent)
			}
			r := do(t, "POST", gw.URL, h, body("tools/call", `,"name":"be__echo","arguments":{"text":"hi"}`))
			if r.Status != 200 {
				t.Fatalf("%d %s", r.Status, r.Body)
			}
			got := r.Header.Get("X-Request-Id")
			if tt.kept && got != tt.sent || !tt.kept && !generated.MatchString(got) {
				t.Errorf("returned X-Request-Id %q for %q", got, tt.sent)
			}
			calls := be.RequestsOf("tools/call")
			if len(calls) != 1 || calls[0].Header.Get("X-Request-Id") != got {
				t.Errorf("the backend got %d calls, the last with X-Request-Id %q; want the returned %q", len(calls), lastID(calls), got)
			}
		})
	}
}

func lastID(calls []mcptest.Exchange) string {
	if len(calls) == 0 {
		return ""
	}
	return calls[len(calls)-1].Header.Get("X-Request-Id")
}

// TestReplicaBusy: past server.maxConcurrent requests in flight on a replica, a request is
// answered 503 with -32014 and Retry-After: 1 and not forwarded, as the README's configuration
// reference and status table say; once the slot is free, calls are served again.
func TestReplicaBusy(t *testing.T) {
	be := mcptest.StartServer(t, "be")
	gw := startGateway(t, Config{MaxConcurrent: 1}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	// A call that holds the only slot until the client goes away.
	ctx, cancel := context.WithCancel(t.Context())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, gw.URL,
		strings.NewReader(body("tools/call", `,"name":"be__slow","arguments":{"ms":600000}`)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = modern("tools/call", "be__slow")
	held := make(chan error, 1)
	go func() {
		res, err := http.DefaultClient.Do(req)
		if err == nil {
			_, err = io.Copy(io.Discard, res.Body)
			res.Body.Close()
		}
		held <- err
	}()
	mcptest.WaitFor(t, "the slow call at the backend", func() bool { return len(be.RequestsOf("tools/call")) == 1 })
	echo := body("tools/call", `,"name":"be__echo","arguments":{"text":"hi"}`)
	r := do(t, "POST", gw.URL, modern("tools/call", "be__echo"), echo)
	if r.Status != 503 || r.Header.Get("Retry-After") != "1" {
		t.Errorf("a call past maxConcurrent: %d, Retry-After %q: %s", r.Status, r.Header.Get("Retry-After"), r.Body)
	}
	checkRPC(t, r, -32014)
	if n := len(be.RequestsOf("tools/call")); n != 1 {
		t.Errorf("the backend got %d calls, want only the slow one", n)
	}
	cancel()
	<-held
	mcptest.WaitFor(t, "the slot given back", func() bool {
		return do(t, "POST", gw.URL, modern("tools/call", "be__echo"), echo).Status == 200
	})
}

// TestAllowedOrigins: a browser Origin is allowed when it is the public URL's own origin or one
// server.allowedOrigins lists ("*": any), as the README's configuration reference says; any
// other is 403 and not forwarded (the refusals in depth are internal/gateway's TestHostileRequests).
func TestAllowedOrigins(t *testing.T) {
	be := mcptest.StartServer(t, "be")
	up := upstreams.UpstreamConfig{Name: "be", URL: be.URL()}
	listed := startGateway(t, Config{PublicURL: "https://mcp.example.com/mcp", AllowedOrigins: []string{"https://app.example.com"}}, up)
	anyOrigin := startGateway(t, Config{PublicURL: "https://mcp.example.com/mcp", AllowedOrigins: []string{"*"}}, up)
	for _, tt := range []struct {
		name   string
		gw     *testGateway
		origin string
		status int
	}{
		{"the public URL's origin", listed, "https://mcp.example.com", 200},
		{"a listed origin", listed, "https://app.example.com", 200},
		{"a listed origin in capitals", listed, "HTTPS://APP.EXAMPLE.COM", 200},
		{"another origin", listed, "https://other.example", 403},
		{"a listed origin's other port", listed, "https://app.example.com:8443", 403},
		{"any, with *", anyOrigin, "https://other.example", 200},
	} {
		t.Run(tt.name, func(t *testing.T) {
			be.Reset()
			r := do(t, "POST", tt.gw.URL, with(modern("tools/list", ""), "Origin", tt.origin), body("tools/list", ""))
			if r.Status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.Status, tt.status, r.Body)
			}
			if tt.status != 200 && len(be.Forwarded()) > 0 {
				t.Error("a refused request reached the backend")
			}
		})
	}
}

// TestDecodeGateAsDocumented: SECURITY.md's resource-bounds row for the CPU of large bodies
// states the gate's threshold, its number of turns and its wait; they are the code's.
func TestDecodeGateAsDocumented(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "SECURITY.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`\| CPU of large bodies \| bodies of ([0-9]+) KiB or more are decoded by at most half the cores \(at least one\)[^|]*\|[^|]*after ([0-9]+) s without a turn \|`).
		FindStringSubmatch(string(raw))
	if m == nil {
		t.Fatal("SECURITY.md no longer states the decode gate's bounds in the form this test reads")
	}
	if m[1] != strconv.Itoa(largeBody>>10) || m[2] != strconv.Itoa(int(decodeWait/time.Second)) {
		t.Errorf("SECURITY.md says %s KiB and %s s; the code has %d KiB and %v", m[1], m[2], largeBody>>10, decodeWait)
	}
	if got, want := cap(newDecodeGate().slots), max(1, runtime.GOMAXPROCS(0)/2); got != want {
		t.Errorf("%d decode turns with GOMAXPROCS %d, want half the cores, at least one (%d)", got, runtime.GOMAXPROCS(0), want)
	}
}
