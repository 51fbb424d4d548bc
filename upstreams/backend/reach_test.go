package backend

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
)

// TestReachHandshakeBoundedByConnect: a host that takes the TCP connection and never answers
// the TLS handshake fails Reach within its connect timeout, as the backend transport's
// TLSHandshakeTimeout would, not only when the caller's context ends.
func TestReachHandshakeBoundedByConnect(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { <-done; c.Close() }() // held open, never answered
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = Reach(ctx, "https://"+ln.Addr().String()+"/", TLSConfig{}, 100*time.Millisecond)
	if !errors.Is(err, wire.ErrUnavailable) {
		t.Fatalf("Reach = %v, want ErrUnavailable", err)
	}
	if ctx.Err() != nil {
		t.Fatalf("Reach ended only with the caller's context: %v", err)
	}
}
