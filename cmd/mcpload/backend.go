package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/mcp-gateway/gateway/internal/tools/loadgen"
)

// Limits of `mcpload backend`.
const (
	maxListeners       = 100
	defaultMaxLifetime = time.Hour
	shutdownGrace      = 2 * time.Second
)

// runBackend is `mcpload backend`: one fast backend served on -count loopback listeners until a
// signal or -max-lifetime.
func runBackend(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("backend", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg loadgen.BackendConfig
	var listen, addrFile string
	var count int
	var lifetime time.Duration
	fs.StringVar(&listen, "listen", "127.0.0.1:0", "loopback address of each listener (port 0: any free port)")
	fs.IntVar(&count, "count", 1, "number of listeners, each a separate backend URL")
	fs.StringVar(&addrFile, "addr-file", "", "write the endpoint URLs here, one a line, once all listen")
	fs.DurationVar(&lifetime, "max-lifetime", defaultMaxLifetime, "exit after this long even without a signal")
	fs.StringVar(&cfg.Name, "name", loadgen.DefaultBackendName, "serverInfo name")
	fs.StringVar(&cfg.Path, "path", loadgen.DefaultBackendPath, "MCP endpoint path")
	fs.IntVar(&cfg.Tools, "tools", 0, "tools in tools/list (minimum: the 4 working tools)")
	fs.IntVar(&cfg.Progress, "progress", loadgen.DefaultBackendProgress, "progress notifications per progress call by default")
	fs.IntVar(&cfg.TTLMs, "ttl-ms", loadgen.DefaultBackendTTLMs, "ttlMs of discover and tools/list (negative: 0)")
	fs.StringVar(&cfg.CacheScope, "cache-scope", loadgen.DefaultBackendScope, "cacheScope: public or private")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if count < 1 || count > maxListeners {
		return fmt.Errorf("count %d must be in [1, %d]", count, maxListeners)
	}
	if err := loadgen.CheckLoopback(ctx, &net.Resolver{}, "http://"+listen+"/"); err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	b, err := loadgen.NewBackend(cfg)
	if err != nil {
		return err
	}
	lns, urls, err := listenAll(listen, count, cfg.Path)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: b, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	errc := make(chan error, len(lns))
	for _, ln := range lns {
		go func() { errc <- srv.Serve(ln) }()
	}
	if err := publish(stdout, addrFile, urls); err != nil {
		_ = srv.Close()
		return err
	}
	return waitAndStop(ctx, srv, b, errc, lifetime)
}

func listenAll(addr string, n int, path string) ([]net.Listener, []string, error) {
	lns := make([]net.Listener, 0, n)
	urls := make([]string, 0, n)
	for range n {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			for _, l := range lns {
				l.Close()
			}
			return nil, nil, err
		}
		lns = append(lns, ln)
		urls = append(urls, "http://"+ln.Addr().String()+path)
	}
	return lns, urls, nil
}

// publish prints the URLs and writes them to path through a rename, so a script polling for
// the file never reads it half written.
func publish(stdout io.Writer, path string, urls []string) error {
	text := strings.Join(urls, "\n") + "\n"
	if _, err := io.WriteString(stdout, text); err != nil {
		return err
	}
	if path == "" {
		return nil
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// waitAndStop serves until ctx ends, lifetime passes or the server fails, then closes b (when
// there is one) and shuts the server down.
func waitAndStop(ctx context.Context, srv *http.Server, b *loadgen.Backend, errc <-chan error, lifetime time.Duration) error {
	timer := time.NewTimer(lifetime)
	defer timer.Stop()
	var err error
	select {
	case <-ctx.Done():
	case <-timer.C:
	case err = <-errc:
	}
	if b != nil {
		b.Close()
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if serr := srv.Shutdown(sctx); serr != nil {
		_ = srv.Close()
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}
