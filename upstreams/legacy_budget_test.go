package upstreams

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestLegacyResultsCharged: what the gateway reads of a pre-2026 backend's response to a call,
// as an event stream or as JSON, counts against Options.MaxResultBytesInFlight until the call's
// Stream is closed, as a 2026-07-28 backend's does. Before, the legacy round trip read into
// buffers of its own that nothing charged: a caller who did not read its results, or a
// pre-2026 client that left a mid-call request unanswered, held up to the backend's response
// limit per call outside the replica's budget. A result of 256 KiB is charged while its Stream
// is open and given back at Close; under a budget of 64 KiB the call fails with
// ErrResultBudget, which is the replica's overload and not the backend's failure.
func TestLegacyResultsCharged(t *testing.T) {
	const size = 256 << 10
	text := strings.Repeat("x", size)
	params := `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
		`"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}},` +
		`"name":"beta__echo","arguments":{"text":"` + text + `"}}`
	for _, tt := range []struct {
		name string
		opts []mcptest.Option
	}{
		{"sse", nil},
		{"json", []mcptest.Option{mcptest.WithJSONResponse()}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			beta := mcptest.StartLegacyServer(t, "beta", tt.opts...)
			call := func(budget int64) (*Registry, *Stream, error) {
				r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "beta", URL: beta.URL()}}},
					Options{MaxResultBytesInFlight: budget})
				target, err := r.Resolve(KindTool, "beta__echo")
				if err != nil {
					t.Fatal(err)
				}
				s, err := r.Call(context.Background(), &Call{Method: MethodToolsCall, ID: json.RawMessage(`7`),
					Params: json.RawMessage(params), Target: target})
				if err != nil {
					return r, nil, err
				}
				for range 100 {
					var last bool
					if _, last, err = s.Next(); err != nil || last {
						break
					}
				}
				return r, s, err
			}
			r, s, err := call(0)
			if err != nil {
				t.Fatalf("call: %v", err)
			}
			if n := r.ResultBytesInFlight(); n < size {
				t.Errorf("%d result bytes in flight while a %d-byte result is held, want at least that", n, size)
			}
			s.Close()
			if n := r.ResultBytesInFlight(); n != 0 {
				t.Errorf("%d result bytes in flight after Close, want 0", n)
			}
			r, s, err = call(64 << 10)
			if s != nil {
				s.Close()
			}
			if !errors.Is(err, ErrResultBudget) {
				t.Errorf("a %d-byte result under a 64 KiB budget: %v, want ErrResultBudget", size, err)
			}
			if n := r.ResultBytesInFlight(); n != 0 {
				t.Errorf("%d result bytes in flight after the refused call, want 0", n)
			}
		})
	}
}
