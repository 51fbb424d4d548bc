package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/http/pprof"
	"net/url"
	"sync"
	"time"

	"github.com/mcp-gateway/gateway/internal/tools/loadgen"
)

// proxyIdleConns is the reference proxy's idle pool toward its one upstream: enough for every
// client of a benchmark run to keep its own connection, as nginx's `keepalive 256` does.
const proxyIdleConns = 256

// runProxy is `mcpload proxy`: the standard library's reverse proxy on loopback in front of one
// upstream, doing no MCP work at all. .ci/bench runs it as the reference for what a bare Go hop
// (a net/http server plus a net/http client) costs on the machine, next to nginx's hop.
func runProxy(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("proxy", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:0", "loopback address to listen on (port 0: any free port)")
	upstream := fs.String("upstream", "", "loopback http URL of the upstream endpoint (required)")
	addrFile := fs.String("addr-file", "", "write the proxy's endpoint URL here once it listens")
	lifetime := fs.Duration("max-lifetime", defaultMaxLifetime, "exit after this long even without a signal")
	pprofAddr := fs.String("pprof", "", "loopback address to serve /debug/pprof/ on, to profile the reference hop beside the gateway")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *upstream == "" {
		fmt.Fprintln(stderr, "mcpload proxy: -upstream is required")
		return errUsage
	}
	for _, target := range []string{*upstream, "http://" + *listen + "/"} {
		if err := loadgen.CheckLoopback(ctx, &net.Resolver{}, target); err != nil {
			return err
		}
	}
	up, err := url.Parse(*upstream)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	if *pprofAddr != "" {
		if err := servePprof(ctx, *pprofAddr); err != nil {
			_ = ln.Close()
			return err
		}
	}
	srv := &http.Server{Handler: newGoProxy(up), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	if err := publish(stdout, *addrFile, []string{"http://" + ln.Addr().String() + up.Path}); err != nil {
		_ = srv.Close()
		return err
	}
	return waitAndStop(ctx, srv, nil, errc, *lifetime)
}

// newGoProxy is httputil.ReverseProxy sending every request to up's scheme and host (keeping
// the request's path), with a keep-alive pool sized for the benchmark. Its default flushing
// already relays text/event-stream responses (and bodies of unknown length) event by event, as
// nginx does with `proxy_buffering off`, and buffers nothing else.
func newGoProxy(up *url.URL) http.Handler {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	tr.MaxIdleConns = proxyIdleConns
	tr.MaxIdleConnsPerHost = proxyIdleConns
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(&url.URL{Scheme: up.Scheme, Host: up.Host})
		},
		Transport:  tr,
		BufferPool: &bufferPool{},
	}
}

// bufferPool recycles the proxy's copy buffers; without one, ReverseProxy allocates 32 KiB per
// response, which would make the reference hop look costlier than a tuned Go proxy is.
type bufferPool struct{ p sync.Pool }

const proxyCopyBuffer = 32 << 10

func (b *bufferPool) Get() []byte {
	if buf, ok := b.p.Get().(*[]byte); ok {
		return *buf
	}
	return make([]byte, proxyCopyBuffer)
}

func (b *bufferPool) Put(buf []byte) {
	if cap(buf) >= proxyCopyBuffer {
		buf = buf[:proxyCopyBuffer]
		b.p.Put(&buf)
	}
}

// servePprof serves the runtime profiles on a loopback address of their own until ctx ends.
func servePprof(ctx context.Context, addr string) error {
	if err := loadgen.CheckLoopback(ctx, &net.Resolver{}, "http://"+addr+"/"); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	context.AfterFunc(ctx, func() { _ = srv.Close() })
	return nil
}
