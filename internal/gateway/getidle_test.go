package gateway

import (
	"bufio"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/testsupport/legacyclient"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestGetStreamWithNothingToHear: a pre-2026 client's GET stream stays open when no backend
// offers anything it could hear (none declares list_changed, as a server whose lists never
// change does, and the session has no resource subscription yet). It was ended at once after
// its priming event, and its client opened it again a second or two later, and again, for as
// long as it stayed connected. On the same stream, once the session subscribes to a resource,
// the backend's update arrives (from a 2026-07-28 and a pre-2026 backend).
func TestGetStreamWithNothingToHear(t *testing.T) {
	for _, legacyBackend := range []bool{false, true} {
		name, start := "modern", mcptest.StartServer
		if legacyBackend {
			name, start = "legacy", mcptest.StartLegacyServer
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			alpha := start(t, "alpha", mcptest.WithoutListChanged(), mcptest.WithSubscriptions())
			gw := startTestGateway(t, nil, alpha)
			url := "http://" + gw.MCP + "/mcp"
			raw := &legacyclient.Raw{}
			sid := raw.Initialize(t, url)
			res := raw.OpenGet(t, url, sid)
			if res.StatusCode != http.StatusOK {
				t.Fatalf("GET stream: %d", res.StatusCode)
			}
			lines := make(chan string, 16)
			go func() {
				defer close(lines)
				sc := bufio.NewScanner(res.Body)
				for sc.Scan() {
					if l := sc.Text(); strings.HasPrefix(l, "id:") || strings.HasPrefix(l, "data:") {
						lines <- l
					}
				}
			}()
			next := func(what string) string {
				t.Helper()
				select {
				case l, ok := <-lines:
					if !ok {
						t.Fatalf("the GET stream ended before %s", what)
					}
					return l
				case <-time.After(30 * time.Second): // fail-safe
					t.Fatalf("no %s on the GET stream", what)
				}
				return ""
			}
			if l := next("its priming event"); !strings.HasPrefix(l, "id:") {
				t.Fatalf("the GET stream began with %q, want its priming event id", l)
			}
			r := raw.Post(t, url, sid, `{"jsonrpc":"2.0","id":5,"method":"resources/subscribe","params":{"uri":"alpha+mem://readme"}}`)
			if r.Status != http.StatusOK {
				t.Fatalf("resources/subscribe: %s", r)
			}
			mcptest.WaitFor(t, "the backend subscribed", func() bool {
				for _, e := range alpha.Requests() {
					if strings.Contains(string(e.Body), `"resources/subscribe"`) || strings.Contains(string(e.Body), `"subscriptions/listen"`) {
						return true
					}
				}
				return false
			})
			go func() {
				// Until the update is read: the stream starts its listen again for the new
				// subscription, and an update the backend sends meanwhile is not replayed.
				for ctx := t.Context(); ctx.Err() == nil; time.Sleep(100 * time.Millisecond) {
					_ = alpha.MCP().ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: "mem://readme"})
				}
			}()
			if l := next("the resource's update"); !strings.Contains(l, `"notifications/resources/updated"`) || !strings.Contains(l, `"alpha+mem://readme"`) {
				t.Fatalf("the GET stream carried %q, want the update of alpha+mem://readme", l)
			}
		})
	}
}
