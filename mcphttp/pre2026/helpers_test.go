package pre2026

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/mcp-gateway/gateway/internal/seal"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/mcphttp"
	"github.com/mcp-gateway/gateway/upstreams"
)

// gwSpec is what a test gateway is built from: the endpoint's configuration and components
// (Backends, Edge and Loopback are filled in), and the edge's (Enabled and the GET stream on;
// Keys defaults to testKeyRing; Logger, Clock and Metrics default to the endpoint's).
type gwSpec struct {
	Server   mcphttp.Config
	Deps     mcphttp.Deps
	Edge     Config
	EdgeDeps Deps
	Opts     upstreams.Options
	// Modern builds no edge: the gateway serves 2026-07-28 clients only.
	Modern bool
}

// testGateway is a gateway (mcphttp with the pre-2026 edge over a real upstreams.Registry),
// served over real HTTP on loopback.
type testGateway struct {
	URL string
	srv *httptest.Server
	mcp *mcphttp.Server
}

// testServer builds the MCP endpoint with the pre-2026 edge over a real upstreams.Registry of
// ucfg and registers it on a new echo. The registry is closed when the test ends.
func testServer(tb testing.TB, c gwSpec, ucfg upstreams.Config) (*Edge, *echo.Echo) {
	tb.Helper()
	e, h, _ := testServerOf(tb, c, ucfg)
	return e, h
}

// testServerOf is testServer, with the MCP endpoint's server.
func testServerOf(tb testing.TB, c gwSpec, ucfg upstreams.Config) (*Edge, *echo.Echo, *mcphttp.Server) {
	tb.Helper()
	discard := slog.New(slog.DiscardHandler)
	if c.Opts.Logger == nil {
		c.Opts.Logger = discard
	}
	if c.Opts.Cursors == nil {
		c.Opts.Cursors = testKeyRing(tb).Sealer(seal.PurposeCursor)
	}
	reg, err := upstreams.New(ucfg, c.Opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(reg.Close)
	c.Edge.Enabled, c.Edge.GetStream = true, true
	if c.EdgeDeps.Keys == nil {
		c.EdgeDeps.Keys = testKeyRing(tb)
	}
	if c.Deps.Logger == nil {
		c.Deps.Logger = discard
	}
	if c.EdgeDeps.Logger == nil {
		c.EdgeDeps.Logger = c.Deps.Logger
	}
	if c.EdgeDeps.Clock == nil {
		c.EdgeDeps.Clock = c.Deps.Clock
	}
	if c.EdgeDeps.Metrics == nil {
		c.EdgeDeps.Metrics = c.Deps.Metrics
	}
	if c.Deps.Version == "" {
		c.Deps.Version = "test"
	}
	e, err := New(c.Edge, c.EdgeDeps)
	if err != nil {
		tb.Fatal(err)
	}
	c.Deps.Backends, c.Deps.Loopback = reg, true
	if !c.Modern {
		c.Deps.Edge = e
	}
	s, err := mcphttp.New(c.Server, c.Deps)
	if err != nil {
		tb.Fatal(err)
	}
	h := echo.New()
	s.Register(h)
	return e, h, s
}

// startLegacyGateway serves the gateway c describes in front of ups until the test ends.
func startLegacyGateway(t testing.TB, c gwSpec, ups ...upstreams.UpstreamConfig) (*testGateway, *Edge) {
	t.Helper()
	e, h, s := testServerOf(t, c, upstreams.Config{Upstreams: ups})
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	return &testGateway{URL: hs.URL + mcphttp.DefaultPath, srv: hs, mcp: s}, e
}

// testStateSealer seals requestState for the tests' MRTR codec.
func testStateSealer(tb testing.TB) *seal.Sealer {
	tb.Helper()
	ring, err := seal.New(seal.Config{Keys: []seal.Key{{ID: "t", Secret: bytes.Repeat([]byte("s"), 32)}}})
	if err != nil {
		tb.Fatal(err)
	}
	return ring.Sealer(seal.PurposeRequestState)
}

// stored is caller's record as the store holds it, opened; ok is false when there is none.
func (st *sessionState) stored(tb testing.TB, caller string) (cs callerState, ok bool) {
	tb.Helper()
	v, ok, err := st.kv.Get(tb.Context(), stateKey(caller))
	if err != nil {
		tb.Fatal(err)
	}
	if !ok {
		return cs, false
	}
	got, clear, err := st.decode(v)
	if err != nil || clear {
		tb.Fatalf("caller's stored record: clear %v, %v", clear, err)
	}
	return *got, true
}

// mustJSON is v in JSON.
func mustJSON(tb testing.TB, v any) []byte {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

type response = mcptest.Response

func do(t testing.TB, method, url string, h http.Header, b string) *response {
	t.Helper()
	return mcptest.Do(t, method, url, h, b)
}
