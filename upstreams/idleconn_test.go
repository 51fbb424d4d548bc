package upstreams

import (
	"context"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// countingProxy is a TCP proxy in front of a backend, as a load balancer is, that counts the
// connections the gateway opens through it.
type countingProxy struct {
	addr  string
	conns atomic.Int64
}

func startCountingProxy(t *testing.T, target string) *countingProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	p := &countingProxy{addr: ln.Addr().String()}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.conns.Add(1)
			go p.pipe(c, target)
		}
	}()
	return p
}

func (p *countingProxy) pipe(c net.Conn, target string) {
	defer c.Close()
	be, err := net.Dial("tcp", target)
	if err != nil {
		return
	}
	defer be.Close()
	go func() { _, _ = io.Copy(be, c); be.Close() }()
	_, _ = io.Copy(c, be)
}

// TestIdleConnTimeoutPerUpstream: a backend's idleConnTimeout is how long its pooled connection
// may stay unused: one idle longer is not reused (a proxy in front that closes idle connections
// sooner than the default would otherwise race the next call), while by default the same pause
// keeps the connection.
func TestIdleConnTimeoutPerUpstream(t *testing.T) {
	// JSON answers: a connection goes back to the pool once its body was read to the end, which
	// for an event stream the relay may close first.
	backend := mcptest.StartServer(t, "alpha", mcptest.WithJSONResponse())
	target := strings.TrimPrefix(strings.TrimSuffix(backend.URL(), mcptest.EndpointPath), "http://")
	for _, tt := range []struct {
		name  string
		idle  time.Duration
		fresh int64 // new connections for the call after the pause
	}{
		{"configured below the pause", time.Second, 1},
		{"default", 0, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			proxy := startCountingProxy(t, target)
			clock := &skewClock{}
			r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "alpha", URL: "http://" + proxy.addr + mcptest.EndpointPath,
				Protocol: ProtocolVersion, IdleConnTimeout: tt.idle}}}, Options{Clock: clock.Now})
			ctx := context.Background()
			call := func(what string) int64 {
				t.Helper()
				if err := callAs(ctx, r, mcptest.ToolEcho, `{"text":"x"}`, "", ""); err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				return proxy.conns.Load()
			}
			call("first call")
			base := call("second call")
			if n := call("third call"); n != base {
				t.Fatalf("%d connections after a call in a row, want the pooled one reused (%d)", n, base)
			}
			clock.Skip(2 * time.Second)
			if n := call("call after the pause"); n != base+tt.fresh {
				t.Fatalf("%d connections after a 2 s pause, want %d", n, base+tt.fresh)
			}
		})
	}
}

func TestIdleConnTimeoutNotNegative(t *testing.T) {
	u := UpstreamConfig{Name: "a", URL: "http://a", IdleConnTimeout: -time.Second}
	if errs := u.Problems(); len(errs) != 1 || !strings.Contains(errs[0].Error(), "idleConnTimeout") {
		t.Fatalf("Problems() = %v, want one about idleConnTimeout", errs)
	}
}
