package mcphttp

import (
	"bytes"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/mcp-gateway/gateway/internal/seal"
	"github.com/mcp-gateway/gateway/upstreams"
)

// testServer builds the MCP endpoint over a real upstreams.Registry of ucfg and registers it on
// a new echo: the set-up every test, benchmark and fuzz target of this package shares. Unset,
// opts gets a discarded log and test cursors, and deps a discarded log; deps.Backends is the
// registry, and the listener counts as loopback. The registry is closed when the test ends.
func testServer(tb testing.TB, cfg Config, ucfg upstreams.Config, opts upstreams.Options, deps Deps) (*Server, *echo.Echo) {
	tb.Helper()
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Cursors == nil {
		opts.Cursors = testCursors(tb)
	}
	reg, err := upstreams.New(ucfg, opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(reg.Close)
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	deps.Backends, deps.Loopback = reg, true
	s, err := New(cfg, deps)
	if err != nil {
		tb.Fatal(err)
	}
	e := echo.New()
	s.Register(e)
	return s, e
}

// oneBackend is the upstreams configuration of a single backend named "be" at url.
func oneBackend(url string) upstreams.Config {
	return upstreams.Config{Upstreams: []upstreams.UpstreamConfig{{Name: "be", URL: url}}}
}

// serveTest serves e over real HTTP on loopback until the test ends.
func serveTest(tb testing.TB, e *echo.Echo) *httptest.Server {
	hs := httptest.NewServer(e)
	tb.Cleanup(hs.Close)
	return hs
}

func testCursors(tb testing.TB) *seal.Sealer {
	tb.Helper()
	ring, err := seal.New(seal.Config{Keys: []seal.Key{{ID: "t", Secret: bytes.Repeat([]byte("k"), 32)}}})
	if err != nil {
		tb.Fatal(err)
	}
	return ring.Sealer(seal.PurposeCursor)
}

func testStateSealer(tb testing.TB) *seal.Sealer {
	tb.Helper()
	ring, err := seal.New(seal.Config{Keys: []seal.Key{{ID: "t", Secret: bytes.Repeat([]byte("s"), 32)}}})
	if err != nil {
		tb.Fatal(err)
	}
	return ring.Sealer(seal.PurposeRequestState)
}
