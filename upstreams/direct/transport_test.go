package direct

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// directServer is an httptest server that counts the connections it accepted and the requests
// it served.
type directServer struct {
	*httptest.Server
	conns    atomic.Int64
	requests atomic.Int64
}

func startDirectServer(t *testing.T, h http.HandlerFunc) *directServer {
	t.Helper()
	ds := &directServer{}
	ds.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ds.requests.Add(1)
		h(w, r)
	}))
	ds.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			ds.conns.Add(1)
		}
	}
	ds.Start()
	t.Cleanup(ds.Close)
	return ds
}

func newTestDirect(t *testing.T, url string, headerTimeout time.Duration) *Transport {
	t.Helper()
	d := New(url, Config{ConnectTimeout: time.Second, ResponseHeaderTimeout: headerTimeout,
		KeepAlive: 30 * time.Second, IdleTimeout: 90 * time.Second, MaxIdle: 256})
	if d == nil {
		t.Fatalf("no direct transport for %s", url)
	}
	t.Cleanup(d.CloseIdleConnections)
	return d
}

// post sends body to url through rt and returns the response body, read to the end.
func post(ctx context.Context, rt http.RoundTripper, url, body string) (string, *http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return "", nil, err
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return "", nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), resp, err
}

func echoHandler(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	_, _ = w.Write(b)
}

func TestDirectOnlyForPlainHTTP(t *testing.T) {
	for url, want := range map[string]bool{
		"http://127.0.0.1:8080/mcp": true, "http://example.com/mcp": true,
		"https://127.0.0.1/mcp": false, "unix:mcp.sock": false, "http:///mcp": false, "::": false,
	} {
		if got := New(url, Config{ConnectTimeout: time.Second}) != nil; got != want {
			t.Errorf("New(%q) made one: %v, want %v", url, got, want)
		}
	}
	if d := New("http://example.com/mcp", Config{ConnectTimeout: time.Second}); d.addr != "example.com:80" {
		t.Errorf("addr = %q, want the default port", d.addr)
	}
}

// Keep-alive: sequential calls read to the end share one connection.
func TestDirectReusesConnections(t *testing.T) {
	srv := startDirectServer(t, echoHandler)
	d := newTestDirect(t, srv.URL, time.Second)
	for i := range 10 {
		got, _, err := post(context.Background(), d, srv.URL, fmt.Sprint("call ", i))
		if err != nil || got != fmt.Sprint("call ", i) {
			t.Fatalf("call %d = %q, %v", i, got, err)
		}
	}
	if n := srv.conns.Load(); n != 1 {
		t.Fatalf("%d connections for 10 sequential calls, want 1", n)
	}
}

// A pooled connection the backend closed is noticed before it is used: the next call goes out
// on a new connection, once.
func TestDirectDropsConnectionsTheBackendClosed(t *testing.T) {
	srv := startDirectServer(t, echoHandler)
	d := newTestDirect(t, srv.URL, time.Second)
	if _, _, err := post(context.Background(), d, srv.URL, "one"); err != nil {
		t.Fatal(err)
	}
	srv.CloseClientConnections()
	// Wait for the close to reach the pooled connection (reading the end of a stream consumes
	// nothing), so the call below meets a closed connection, not a race with the close.
	mcptest.WaitFor(t, "the pooled connection sees the close", func() bool {
		d.mu.Lock()
		defer d.mu.Unlock()
		return len(d.idle) == 1 && !d.usable(d.idle[0])
	})
	got, _, err := post(context.Background(), d, srv.URL, "two")
	if err != nil || got != "two" {
		t.Fatalf("call after the backend closed the pooled connection = %q, %v", got, err)
	}
	if n, c := srv.requests.Load(), srv.conns.Load(); n != 2 || c != 2 {
		t.Fatalf("the backend served %d requests on %d connections, want 2 on 2", n, c)
	}
}

// A body closed before its end closes the connection instead of draining it, so an endless
// event stream neither blocks Close nor returns to the pool.
func TestDirectEarlyCloseDoesNotDrain(t *testing.T) {
	srv := startDirectServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for {
			if _, err := io.WriteString(w, ": keep-alive\n\n"); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(time.Millisecond):
			}
		}
	})
	d := newTestDirect(t, srv.URL, time.Second)
	req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader("{}"))
	resp, err := d.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	var buf [64]byte
	if _, err := resp.Body.Read(buf[:]); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = resp.Body.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second): // a fail-safe, not a timing assertion
		t.Fatal("Close blocked on an endless body")
	}
	d.mu.Lock()
	pooled := len(d.idle)
	d.mu.Unlock()
	if pooled != 0 {
		t.Fatalf("%d connections pooled after an early close, want 0", pooled)
	}
}

// startHangingServer starts a backend that never answers: each request waits until its client
// goes away or the test ends.
func startHangingServer(t *testing.T) *directServer {
	t.Helper()
	release := make(chan struct{})
	srv := startDirectServer(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	t.Cleanup(func() { close(release) }) // runs before the server's Close, which waits for handlers
	return srv
}

// The request's context ends a call that waits for headers at once, and the connection is not
// reused.
func TestDirectCancelWhileWaiting(t *testing.T) {
	srv := startHangingServer(t)
	d := newTestDirect(t, srv.URL, time.Minute)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, _, err := post(ctx, d, srv.URL, "{}")
		errc <- err
	}()
	mcptest.WaitFor(t, "the backend has the request", func() bool { return srv.requests.Load() == 1 })
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second): // a fail-safe, not a timing assertion
		t.Fatal("the cancelled call did not return")
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.idle) != 0 {
		t.Fatal("a cancelled call's connection went back to the pool")
	}
}

func TestDirectResponseHeaderTimeout(t *testing.T) {
	srv := startHangingServer(t)
	d := newTestDirect(t, srv.URL, 50*time.Millisecond)
	_, _, err := post(context.Background(), d, srv.URL, "{}")
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() || !strings.Contains(err.Error(), "awaiting response headers") {
		t.Fatalf("err = %v, want a timeout awaiting response headers", err)
	}
}

// rawServer answers every connection with the bytes reply returns for its request, then
// closes it.
func rawServer(t *testing.T, reply func() []byte) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 4096)
				_, _ = c.Read(buf)
				_, _ = c.Write(reply())
			}()
		}
	}()
	return "http://" + ln.Addr().String() + "/mcp"
}

func TestDirectOversizedHeaders(t *testing.T) {
	url := rawServer(t, func() []byte {
		var b bytes.Buffer
		b.WriteString("HTTP/1.1 200 OK\r\n")
		for b.Len() < 2*MaxResponseHeaderBytes {
			b.WriteString("X-Filler: " + strings.Repeat("a", 1000) + "\r\n")
		}
		return b.Bytes()
	})
	d := newTestDirect(t, url, time.Second)
	if _, _, err := post(context.Background(), d, url, "{}"); !errors.Is(err, errHeadersTooLarge) {
		t.Fatalf("err = %v, want errHeadersTooLarge", err)
	}
}

func TestDirectGarbageAndInterimResponses(t *testing.T) {
	garbage := rawServer(t, func() []byte { return []byte("SSH-2.0-OpenSSH_9.6\r\n\r\n") })
	d := newTestDirect(t, garbage, time.Second)
	if _, _, err := post(context.Background(), d, garbage, "{}"); err == nil {
		t.Fatal("a non-HTTP answer gave no error")
	}
	hints := rawServer(t, func() []byte {
		return []byte("HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n" +
			"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
	})
	d = newTestDirect(t, hints, time.Second)
	got, resp, err := post(context.Background(), d, hints, "{}")
	if err != nil || got != "ok" || resp.StatusCode != 200 {
		t.Fatalf("after an interim response: %q, %v", got, err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.idle) != 0 {
		t.Fatal("a Connection: close response left its connection in the pool")
	}
}

// Idle connections older than the idle timeout are closed, not reused.
func TestDirectIdleTimeout(t *testing.T) {
	srv := startDirectServer(t, echoHandler)
	d := newTestDirect(t, srv.URL, time.Second)
	now := time.Unix(1000, 0)
	d.now = func() time.Time { return now }
	if _, _, err := post(context.Background(), d, srv.URL, "a"); err != nil {
		t.Fatal(err)
	}
	now = now.Add(d.idleTimeout + time.Second)
	if _, _, err := post(context.Background(), d, srv.URL, "b"); err != nil {
		t.Fatal(err)
	}
	if n := srv.conns.Load(); n != 2 {
		t.Fatalf("%d connections, want 2: the stale one must not be reused", n)
	}
}

// Many goroutines share the transport; every call gets its own answer.
func TestDirectConcurrent(t *testing.T) {
	srv := startDirectServer(t, echoHandler)
	d := newTestDirect(t, srv.URL, time.Second)
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := range 50 {
				want := fmt.Sprintf("g%d-%d", g, i)
				if got, _, err := post(context.Background(), d, srv.URL, want); err != nil || got != want {
					t.Errorf("%s: got %q, %v", want, got, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if n := srv.conns.Load(); n > 16 {
		t.Errorf("%d connections for 16 concurrent callers", n)
	}
}

// armedConn fails its writes once armed: after writing first bytes of what it is given.
type armedConn struct {
	net.Conn
	armed *atomic.Bool
	first int
}

func (c *armedConn) Write(p []byte) (int, error) {
	if !c.armed.Load() {
		return c.Conn.Write(p)
	}
	n, _ := c.Conn.Write(p[:min(c.first, len(p))])
	return n, errors.New("connection reset by the proxy")
}

// A request that fails on a reused connection before any byte of it was written is sent again,
// once, on a new connection: the backend cannot have seen it. One that failed after a byte was
// written is not (a tools/call must never run twice): the caller gets the error.
func TestDirectRetriesOnlyWhatWasNotWritten(t *testing.T) {
	for _, tt := range []struct {
		name    string
		first   int
		retried bool
	}{{"nothing written", 0, true}, {"a byte written", 10, false}} {
		t.Run(tt.name, func(t *testing.T) {
			srv := startDirectServer(t, echoHandler)
			d := newTestDirect(t, srv.URL, time.Second)
			var armed atomic.Bool
			dial := d.dial
			var dials atomic.Int64
			d.dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
				c, err := dial(ctx, network, addr)
				if err != nil {
					return nil, err
				}
				if dials.Add(1) > 1 {
					return c, nil // the retry's connection works
				}
				return &armedConn{Conn: c, armed: &armed, first: tt.first}, nil
			}
			if got, _, err := post(context.Background(), d, srv.URL, "one"); err != nil || got != "one" {
				t.Fatalf("first call = %q, %v", got, err)
			}
			armed.Store(true)
			got, _, err := post(context.Background(), d, srv.URL, "two")
			if tt.retried {
				if err != nil || got != "two" || dials.Load() != 2 || srv.requests.Load() != 2 {
					t.Fatalf("call = %q, %v after %d dials, %d requests served; want it sent again on a new connection",
						got, err, dials.Load(), srv.requests.Load())
				}
				return
			}
			if err == nil || dials.Load() != 1 {
				t.Fatalf("call = %q, %v after %d dials; want the error, not a second send", got, err, dials.Load())
			}
		})
	}
}
