package upstreams

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams/internal/upstreamstest"
)

// TestListBackendCursorBounded: the go-sdk server's list cursor encodes the last item it listed,
// so long resource URIs make long cursors. One within the bound on a backend's nextCursor (4096
// bytes, docs/protocol.md §5.1) is followed to the end of the list; a longer one fails the
// backend's list as a bad response that says so, never cut and followed, never read as the
// end of the list.
func TestListBackendCursorBounded(t *testing.T) {
	read := func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "x"}}}, nil
	}
	for _, tt := range []struct {
		name   string
		uriLen int
		ok     bool
	}{
		{"short", 2000, true},   // a cursor of about 2,700 bytes
		{"long", 3500, false},   // one of about 4,700
		{"longer", 9000, false}, // one of about 12,000
	} {
		t.Run(tt.name, func(t *testing.T) {
			var opts []mcptest.Option
			for _, c := range "abc" {
				uri := "mem://" + string(c) + "/" + strings.Repeat("x", tt.uriLen)
				opts = append(opts, mcptest.WithResource(&mcp.Resource{URI: uri, Name: string(c)}, read))
			}
			srv := mcptest.StartServer(t, "alpha", append(opts, mcptest.WithoutDefaults(), mcptest.WithPageSize(1))...)
			r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "alpha", URL: srv.URL()}}}, Options{})
			res, err := r.List(context.Background(), &ListRequest{Method: MethodResourcesList,
				Params: json.RawMessage(`{"_meta":` + upstreamstest.Meta + `}`)})
			if tt.ok {
				if err != nil || strings.Count(string(res), `"uri":`) != 3 {
					t.Fatalf("err = %v; want the 3 resources: %.300s", err, res)
				}
				return
			}
			if !errors.Is(err, ErrBadResponse) || !strings.Contains(err.Error(), "more than the 4096 the gateway sends back") {
				t.Fatalf("err = %v; want a bad response naming the cursor bound", err)
			}
		})
	}
}
