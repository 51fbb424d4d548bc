// Package direct is the HTTP/1.1 client of a plain-http backend: an http.RoundTripper in which
// the goroutine that makes a call writes the request and reads the response itself. upstreams
// gives it to every backend whose URL is http://; https backends keep net/http's Transport.
package direct

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"
)

// Transport is the HTTP/1.1 client of a plain-http backend. The goroutine that makes a
// call writes the request and reads the response on a pooled connection itself; net/http's
// Transport instead runs a reader and a writer goroutine per connection and hands every request
// and response between them, which CPU profiles of a forwarded call put at about a fifth of the
// gateway's work. HTTP framing is still net/http's: Request.Write and ReadResponse.
//
// What it keeps of the Transport's behaviour, since a tool call must never run twice:
//   - a request is retried on a new connection only when not one byte of it reached the old one;
//   - a pooled connection is checked before reuse (a non-blocking peek at its socket), and one
//     the backend closed (or that sent anything unasked) is dropped, as is one idle longer than
//     the idle timeout;
//   - a connection goes back to the pool only after its response body was read to the end of a
//     keep-alive response; a body closed early closes the connection (never drained, so an
//     endless event stream cannot hold a caller);
//   - the request's context ends the round trip at once by expiring the connection's deadlines;
//   - response headers are bounded in time (ResponseHeaderTimeout) and size.
//
// https backends keep net/http's Transport (HTTP/2, TLS settings, mTLS).
type Transport struct {
	addr          string
	dial          func(ctx context.Context, network, addr string) (net.Conn, error)
	headerTimeout time.Duration
	idleTimeout   time.Duration
	maxIdle       int
	now           func() time.Time

	mu   sync.Mutex
	idle []*conn // most recently returned last
}

// MaxResponseHeaderBytes bounds what a backend may send before its response headers end; the
// https backends' transport (net/http's) is given the same bound.
const MaxResponseHeaderBytes = 1 << 20

// maxInterimResponses bounds the 1xx responses skipped before the real one.
const maxInterimResponses = 8

// errNothingWritten marks a failure before any byte of the request reached the connection.
var errNothingWritten = errors.New("connection failed before the request was sent")

// aLongTimeAgo is a deadline that has passed: setting it makes pending reads and writes fail.
var aLongTimeAgo = time.Unix(1, 0)

// Config holds the transport's bounds.
type Config struct {
	// ConnectTimeout bounds the TCP connect.
	ConnectTimeout time.Duration
	// ResponseHeaderTimeout bounds the wait for the response headers; zero waits as long as the
	// request's context allows.
	ResponseHeaderTimeout time.Duration
	// KeepAlive is the TCP keep-alive period of new connections.
	KeepAlive time.Duration
	// IdleTimeout is how long a connection may stay pooled unused.
	IdleTimeout time.Duration
	// MaxIdle bounds the pooled connections.
	MaxIdle int
	// Now returns the current time, against which IdleTimeout is measured; nil means time.Now.
	Now func() time.Time
}

// New returns the transport for rawURL, or nil when rawURL is not plain http.
func New(rawURL string, cfg Config) *Transport {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != "http" || u.Hostname() == "" {
		return nil
	}
	port := u.Port()
	if port == "" {
		port = "80"
	}
	d := &net.Dialer{Timeout: cfg.ConnectTimeout, KeepAlive: cfg.KeepAlive}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	return &Transport{addr: net.JoinHostPort(u.Hostname(), port), dial: d.DialContext,
		headerTimeout: cfg.ResponseHeaderTimeout, idleTimeout: cfg.IdleTimeout, maxIdle: cfg.MaxIdle, now: now}
}

// IdleTimeout reports how long a connection may stay pooled unused (Config.IdleTimeout).
func (t *Transport) IdleTimeout() time.Duration { return t.idleTimeout }

// conn is one connection and its buffers.
type conn struct {
	c       net.Conn
	limit   limitedReader // under br: bounds response headers
	br      *bufio.Reader
	bw      *bufio.Writer
	written int64 // bytes written during the current request
	idleAt  time.Time
}

func (d *conn) Write(p []byte) (int, error) {
	n, err := d.c.Write(p)
	d.written += int64(n)
	return n, err
}

// limitedReader reads from a connection, failing once more than remain bytes were asked for
// while on is set.
type limitedReader struct {
	c      net.Conn
	on     bool
	remain int64
}

var errHeadersTooLarge = fmt.Errorf("response headers exceed %d bytes", MaxResponseHeaderBytes)

func (l *limitedReader) Read(p []byte) (int, error) {
	if !l.on {
		return l.c.Read(p)
	}
	if l.remain <= 0 {
		return 0, errHeadersTooLarge
	}
	if int64(len(p)) > l.remain {
		p = p[:l.remain]
	}
	n, err := l.c.Read(p)
	l.remain -= int64(n)
	return n, err
}

func (t *Transport) newConn(ctx context.Context) (*conn, error) {
	c, err := t.dial(ctx, "tcp", t.addr)
	if err != nil {
		return nil, err
	}
	d := &conn{c: c}
	d.limit.c = c
	d.br = bufio.NewReaderSize(&d.limit, 4<<10)
	d.bw = bufio.NewWriterSize(d, 4<<10)
	return d, nil
}

// RoundTrip sends req and returns the response once its headers have arrived.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	if err := ctx.Err(); err != nil {
		closeRequestBody(req)
		return nil, err
	}
	d, reused, err := t.get(ctx)
	if err != nil {
		closeRequestBody(req)
		return nil, err
	}
	resp, err := t.do(ctx, d, req)
	if err == nil || !reused || !errors.Is(err, errNothingWritten) || req.GetBody == nil {
		return resp, err
	}
	// The pooled connection failed before the backend could have seen anything: send the
	// request once more, on a new connection, with its body rewound.
	body, gerr := req.GetBody()
	if gerr != nil {
		return nil, err
	}
	retry := *req
	retry.Body = body
	if d, err = t.newConn(ctx); err != nil {
		closeRequestBody(&retry)
		return nil, err
	}
	return t.do(ctx, d, &retry)
}

func closeRequestBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

// get returns a pooled connection that is still open, or a new one.
func (t *Transport) get(ctx context.Context) (*conn, bool, error) {
	for {
		d := t.pop()
		if d == nil {
			break
		}
		if t.usable(d) {
			return d, true, nil
		}
		_ = d.c.Close()
	}
	d, err := t.newConn(ctx)
	return d, false, err
}

func (t *Transport) pop() *conn {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(t.idle)
	if n == 0 {
		return nil
	}
	d := t.idle[n-1]
	t.idle[n-1] = nil
	t.idle = t.idle[:n-1]
	return d
}

// usable reports whether an idle connection may carry another request: not idle too long, and
// neither closed by the backend nor holding bytes nobody asked for.
func (t *Transport) usable(d *conn) bool {
	return t.now().Sub(d.idleAt) <= t.idleTimeout && d.br.Buffered() == 0 && !peerClosed(d.c)
}

// put returns d to the pool, and closes the pooled connections idle for too long.
func (t *Transport) put(d *conn) {
	now := t.now()
	d.idleAt = now
	t.mu.Lock()
	var stale []*conn
	for len(t.idle) > 0 && now.Sub(t.idle[0].idleAt) > t.idleTimeout {
		stale = append(stale, t.idle[0])
		t.idle = t.idle[1:]
	}
	keep := len(t.idle) < t.maxIdle
	if keep {
		t.idle = append(t.idle, d)
	}
	t.mu.Unlock()
	for _, s := range stale {
		_ = s.c.Close()
	}
	if !keep {
		_ = d.c.Close()
	}
}

// CloseIdleConnections closes the pooled connections; the transport stays usable.
func (t *Transport) CloseIdleConnections() {
	t.mu.Lock()
	idle := t.idle
	t.idle = nil
	t.mu.Unlock()
	for _, d := range idle {
		_ = d.c.Close()
	}
}

// do writes req on d and reads the response headers. On error d is closed.
func (t *Transport) do(ctx context.Context, d *conn, req *http.Request) (*http.Response, error) {
	x := &connUse{t: t, d: d}
	x.stop = context.AfterFunc(ctx, x.cancel)
	d.written = 0
	if t.headerTimeout > 0 {
		x.setReadDeadline(time.Now().Add(t.headerTimeout)) // deadlines are wall-clock, whatever t.now is
	}
	err := req.Write(d.bw)
	if err == nil {
		err = d.bw.Flush()
	}
	if err != nil {
		if d.written == 0 {
			err = fmt.Errorf("%w: %w", errNothingWritten, err)
		}
		return nil, x.fail(ctx, err)
	}
	resp, err := x.readResponse(req)
	if err != nil {
		var ne net.Error
		if t.headerTimeout > 0 && errors.As(err, &ne) && ne.Timeout() {
			err = headerTimeoutError{err}
		}
		return nil, x.fail(ctx, err)
	}
	if t.headerTimeout > 0 {
		x.setReadDeadline(time.Time{}) // the call's own timeout bounds the body
	}
	x.reuse = !resp.Close && !req.Close
	if resp.Body == http.NoBody {
		x.release(true)
		return resp, nil
	}
	resp.Body = &body{rc: resp.Body, x: x}
	return resp, nil
}

// headerTimeoutError is the response-header timeout; it is a net.Error whose Timeout is true, so
// it counts as a backend timeout.
type headerTimeoutError struct{ err error }

func (e headerTimeoutError) Error() string   { return "timeout awaiting response headers" }
func (e headerTimeoutError) Timeout() bool   { return true }
func (e headerTimeoutError) Temporary() bool { return true }
func (e headerTimeoutError) Unwrap() error   { return e.err }

// connUse is one request's hold on a connection.
type connUse struct {
	t         *Transport
	d         *conn
	stop      func() bool
	cancelled atomic.Bool
	reuse     bool
	once      sync.Once
}

// cancel runs when the request's context ends: every pending and later read and write on the
// connection fails at once.
func (x *connUse) cancel() {
	x.cancelled.Store(true)
	_ = x.d.c.SetDeadline(aLongTimeAgo)
}

// setReadDeadline sets a read deadline without undoing a cancellation that raced with it.
func (x *connUse) setReadDeadline(at time.Time) {
	_ = x.d.c.SetReadDeadline(at)
	if x.cancelled.Load() {
		_ = x.d.c.SetDeadline(aLongTimeAgo)
	}
}

// readResponse reads the response headers, skipping interim (1xx) responses, within
// MaxResponseHeaderBytes.
func (x *connUse) readResponse(req *http.Request) (*http.Response, error) {
	lr := &x.d.limit
	defer func() { lr.on = false }()
	for range maxInterimResponses + 1 {
		lr.on, lr.remain = true, MaxResponseHeaderBytes
		resp, err := http.ReadResponse(x.d.br, req)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
			return resp, nil
		}
	}
	return nil, errors.New("too many interim responses")
}

// fail closes the connection and returns err, or the context's error when the call was
// cancelled meanwhile.
func (x *connUse) fail(ctx context.Context, err error) error {
	x.once.Do(func() {
		x.stop()
		_ = x.d.c.Close()
	})
	if x.cancelled.Load() {
		return ctx.Err()
	}
	return err
}

// release ends the request's use of the connection: it goes back to the pool when the response was read to
// its end, allows keep-alive, and the context has not expired the connection's deadlines.
func (x *connUse) release(complete bool) {
	x.once.Do(func() {
		if x.stop() && complete && x.reuse {
			x.t.put(x.d)
			return
		}
		_ = x.d.c.Close()
	})
}

// body is a response body that returns its connection when read to the end.
type body struct {
	rc io.ReadCloser
	x  *connUse
}

func (b *body) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	switch {
	case err == io.EOF:
		b.x.release(true)
	case err != nil:
		b.x.release(false)
	}
	return n, err
}

// Close ends the body. One not read to its end closes the connection rather than draining it.
func (b *body) Close() error {
	b.x.release(false)
	return nil
}
