package mcphttp

import (
	"bytes"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/racetest"
	"github.com/mcp-gateway/gateway/upstreams"
)

// TestAccessLogClientAddress: the access log writes the client's address (through the trusted
// proxy) only where server.logClientAddress turns it on.
func TestAccessLogClientAddress(t *testing.T) {
	for _, on := range []bool{false, true} {
		var logs bytes.Buffer
		cfg := Config{LogClientAddress: on, TrustedProxies: []string{"192.0.2.0/24"}}
		_, e := testServer(t, cfg, oneBackend("http://127.0.0.1:9/mcp"), upstreams.Options{},
			Deps{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		req := httptest.NewRequest(http.MethodPost, DefaultPath, strings.NewReader("{}"))
		req.RemoteAddr = "192.0.2.1:4000"
		req.Header.Set("X-Forwarded-For", "2001:db8::7")
		e.ServeHTTP(httptest.NewRecorder(), req)
		line := logs.String()
		if !strings.Contains(line, "msg=request") {
			t.Fatalf("no access line:\n%s", line)
		}
		if got := strings.Contains(line, "client=2001:db8::7"); got != on {
			t.Errorf("logClientAddress %v: address written %v:\n%s", on, got, line)
		}
		if !on && strings.Contains(line, "client=") {
			t.Errorf("a client attribute without logClientAddress:\n%s", line)
		}
	}
}

// TestUntrustedProxyHeadersWarnedOnce: with no trusted proxy, requests carrying a proxy's client
// header make the gateway say once that the header is ignored.
func TestUntrustedProxyHeadersWarnedOnce(t *testing.T) {
	var logs bytes.Buffer
	_, e := testServer(t, Config{}, oneBackend("http://127.0.0.1:9/mcp"), upstreams.Options{},
		Deps{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	for _, h := range []string{"X-Forwarded-For", "Forwarded", "X-Forwarded-For"} {
		req := httptest.NewRequest(http.MethodPost, DefaultPath, strings.NewReader("{}"))
		req.Header.Set(h, "203.0.113.7")
		e.ServeHTTP(httptest.NewRecorder(), req)
	}
	if n := strings.Count(logs.String(), "server.trustedProxies is empty"); n != 1 {
		t.Errorf("%d warnings, want 1:\n%s", n, logs.String())
	}
}

// TestClientBodyShare: the bodies of one client address's unauthenticated requests hold at most
// its share of the replica's body budget (server.perClient.maxBodyBytesInFlight, a quarter of
// the budget by default): its next body is refused with 429 while another address's is read.
func TestClientBodyShare(t *testing.T) {
	cfg := Config{MaxBodyBytes: 64 << 10, MaxBodyBytesInFlight: 1 << 20, PerClient: PerClientConfig{MaxUnauthenticated: 100}}
	s, e := testServer(t, cfg, oneBackend("http://127.0.0.1:9/mcp"), upstreams.Options{}, Deps{})
	addr := serveTest(t, e).Listener.Addr().String()
	// Three bodies of 40 KiB that never end hold 64 KiB buffers each: 192 of the share's 256 KiB.
	head := "POST /mcp HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/json\r\n" +
		"Accept: application/json, text/event-stream\r\nContent-Length: 65000\r\n\r\n{"
	for range 3 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Write([]byte(head + strings.Repeat(" ", 40<<10))); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for s.BodyBytesInFlight() < 3*64<<10 {
		if time.Now().After(deadline) {
			t.Fatalf("the slow bodies hold %d bytes", s.BodyBytesInFlight())
		}
		time.Sleep(5 * time.Millisecond)
	}
	post := func(local string) (int, string) {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
		hc := &http.Client{Transport: &http.Transport{DialContext: d.DialContext}, Timeout: 10 * time.Second}
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+DefaultPath, strings.NewReader("{"+strings.Repeat(" ", 40<<10)+"}"))
		req.Header = http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
		res, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, res.Header.Get("Retry-After") + " " + string(b)
	}
	if status, body := post("127.0.0.1"); status != http.StatusTooManyRequests || !strings.Contains(body, "request bytes in flight from this client") {
		t.Errorf("the same client's fourth body: %d %s; want 429", status, body)
	}
	if status, body := post("127.0.0.2"); status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable {
		t.Errorf("another client's body: %d %s", status, body)
	}
}

// TestClientBoundsCostNoAllocation: the per-client bounds, on as by default and with the client
// named by a trusted proxy's X-Forwarded-For, add no allocation to a served tools/call of a
// client already seen, as docs/client-bounds.md promises: the same count as with both bounds
// switched off. (Authentication is off here, as in BenchmarkForwardToolsCall.)
func TestClientBoundsCostNoAllocation(t *testing.T) {
	if racetest.Enabled {
		t.Skip("allocations are counted without -race (sync.Pool drops at random under it); make unit runs this test without it")
	}
	body := `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{` + meta + `,"name":"be__echo","arguments":{"text":"hello"}}}`
	allocs := func(cfg Config, h http.Header) float64 {
		_, e := testServer(t, cfg, oneBackend("http://127.0.0.1:9/mcp"), upstreams.Options{Transport: newCannedBackend()}, Deps{})
		w, rd, u := mcptest.NewBenchWriter(), strings.NewReader(body), &url.URL{Path: DefaultPath}
		return testing.AllocsPerRun(500, func() {
			rd.Reset(body)
			w.Reset()
			e.ServeHTTP(w, &http.Request{Method: http.MethodPost, URL: u, RequestURI: DefaultPath, Proto: "HTTP/1.1",
				ProtoMajor: 1, ProtoMinor: 1, Header: h, Body: io.NopCloser(rd), ContentLength: int64(len(body)),
				Host: "127.0.0.1", RemoteAddr: "192.0.2.1:1234"})
			if w.Code != http.StatusOK {
				t.Fatalf("status %d: %s", w.Code, w.Body.Bytes())
			}
		})
	}
	plain := modern("tools/call", "be__echo")
	proxied := plain.Clone()
	proxied.Set("X-Forwarded-For", "198.51.100.1, 2001:db8::7")
	off := allocs(Config{PerClient: PerClientConfig{MaxUnauthenticated: -1, FailedAuthPerMinute: -1}}, plain)
	if on := allocs(Config{}, plain); on > off {
		t.Errorf("bounds on: %v allocations a call, %v with them off", on, off)
	}
	if on := allocs(Config{TrustedProxies: []string{"192.0.2.0/24"}}, proxied); on > off {
		t.Errorf("bounds on, client behind a trusted proxy: %v allocations a call, %v with them off", on, off)
	}
}
