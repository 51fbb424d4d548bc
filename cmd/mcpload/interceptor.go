package main

import (
	"context"
	"flag"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/mcp-gateway/gateway/internal/tools/loadgen"
)

// defaultInterceptorPath is the MCP endpoint path of `mcpload interceptor`.
const defaultInterceptorPath = "/interceptors"

// runInterceptor is `mcpload interceptor`: an Interceptor Server on the official Go SDK that
// allows every invocation (loadgen.NewInterceptor), served on loopback until a signal or
// -max-lifetime. .ci/bench puts it behind the gateway's request phase to measure what asking an
// interceptor costs a call.
func runInterceptor(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("interceptor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:0", "loopback address to listen on (port 0: any free port)")
	addrFile := fs.String("addr-file", "", "write the endpoint URL here once it listens")
	lifetime := fs.Duration("max-lifetime", defaultMaxLifetime, "exit after this long even without a signal")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := loadgen.CheckLoopback(ctx, &net.Resolver{}, "http://"+*listen+"/"); err != nil {
		return err
	}
	h, err := loadgen.NewInterceptor()
	if err != nil {
		return err
	}
	lns, urls, err := listenAll(*listen, 1, defaultInterceptorPath)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(lns[0]) }()
	if err := publish(stdout, *addrFile, urls); err != nil {
		_ = srv.Close()
		return err
	}
	return waitAndStop(ctx, srv, nil, errc, *lifetime)
}
