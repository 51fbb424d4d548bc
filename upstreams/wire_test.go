package upstreams

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/iotest"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams/internal/upstreamstest"
	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
)

// countingConn counts the Write calls the transport makes on a backend connection.
type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// TestOneWritePerBackendRequest: a forwarded call reaches the backend in one write, headers and
// body together. The transport flushes the headers on their own whenever it cannot tell that a
// body is already in memory, which costs a second system call (and a second TCP segment) on
// every call.
func TestOneWritePerBackendRequest(t *testing.T) {
	srv := mcptest.StartServer(t, "alpha")
	var writes atomic.Int64
	d := &net.Dialer{}
	rt := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return countingConn{c, &writes}, nil
	}}
	t.Cleanup(rt.CloseIdleConnections)
	r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "alpha", URL: srv.URL()}}}, Options{Transport: rt})
	target, err := r.Resolve(KindTool, "alpha__echo")
	if err != nil {
		t.Fatal(err)
	}
	const calls = 6
	for i := range calls {
		before := writes.Load()
		s, err := r.Call(context.Background(), &Call{Method: MethodToolsCall, ID: json.RawMessage(`7`), Target: target,
			Params: json.RawMessage(`{"_meta":` + upstreamstest.Meta + `,"name":"alpha__echo","arguments":{"text":"hi"}}`)})
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		collect(t, s)
		if i == 0 {
			continue // the first call also learns the backend's era with a request of its own
		}
		if n := writes.Load() - before; n != 1 {
			t.Fatalf("call %d took %d writes on the backend connection, want 1", i, n)
		}
	}
}

// TestReadBody: wire.ReadBody keeps everything up to max, refuses max+1 whatever the read sizes, and
// passes a read error on.
func TestReadBody(t *testing.T) {
	const max = 3000 // several of wire.ReadBody's 512-byte steps
	boom := errors.New("reset")
	tests := []struct {
		name string
		r    io.Reader
		size int
		want error
	}{
		{"empty", strings.NewReader(""), 0, nil},
		{"at the limit", strings.NewReader(strings.Repeat("x", max)), max, nil},
		{"at the limit, a byte at a time", iotest.OneByteReader(strings.NewReader(strings.Repeat("x", max))), max, nil},
		{"one over", strings.NewReader(strings.Repeat("x", max+1)), 0, wire.ErrTooLarge},
		{"far over, a byte at a time", iotest.OneByteReader(strings.NewReader(strings.Repeat("x", 3*max))), 0, wire.ErrTooLarge},
		{"error mid-way", io.MultiReader(strings.NewReader("abc"), iotest.ErrReader(boom)), 0, boom},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			err := wire.ReadBody(&buf, tt.r, max)
			if !errors.Is(err, tt.want) {
				t.Fatalf("wire.ReadBody = %v, want %v", err, tt.want)
			}
			if tt.want == nil && buf.Len() != tt.size {
				t.Fatalf("read %d bytes, want %d", buf.Len(), tt.size)
			}
			if buf.Len() > max+1 {
				t.Fatalf("buffered %d bytes with a limit of %d", buf.Len(), max)
			}
		})
	}
}
