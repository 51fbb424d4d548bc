package gateway

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/tsnames"
	"github.com/mcp-gateway/gateway/upstreams"
)

// A resource subscription reaches its backend in the spelling a read of the same URI does
// (docs/protocol.md, "Resource URIs toward a backend"), and the backend's resources/updated,
// in whatever spelling it writes the URI, reaches the client as the URI it was acknowledged
// with (a pre-2026 client's: the URI as it subscribed). Clients: the Go SDK client at
// 2026-07-28 and 2025-11-25 and the TypeScript SDK client. The Go SDK server and the
// TypeScript SDK server match an update to a subscription by exact string, so a subscription
// sent in the gateway's normal form ("mem://x/é") to a backend that listed and updates
// "mem://x/%C3%A9" would never hear of it.
//
//	go test -count=1 -run 'TestSubscriptionSpelling' ./internal/gateway

// subscribedResources are what the Go SDK backends list: one percent-encoded, one raw.
var subscribedResources = []string{"mem://enc/caf%C3%A9", "mem://raw/café"}

func subscribingBackend(t *testing.T, name string, legacy bool, uris []string) *mcptest.Server {
	t.Helper()
	opts := []mcptest.Option{mcptest.WithoutDefaults(), mcptest.WithSubscriptions()}
	for _, uri := range uris {
		opts = append(opts, mcptest.WithResource(&mcp.Resource{URI: uri, Name: uri, MIMEType: "text/plain"},
			func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "read " + req.Params.URI}}}, nil
			}))
	}
	if legacy {
		return mcptest.StartLegacyServer(t, name, opts...)
	}
	return mcptest.StartServer(t, name, opts...)
}

func TestSubscriptionSpellingRealSDKs(t *testing.T) {
	t.Parallel()
	goBackend := subscribingBackend(t, "gosdk", false, subscribedResources)
	legacyBackend := subscribingBackend(t, "legacy", true, subscribedResources)
	tsResources := []string{"mem://ts/caf%C3%A9"}
	tsBackend := tsnames.StartBackend(t, tsnames.Names{Resources: tsResources, Subscribe: true})
	gw := startTestGateway(t, func(c *Config) {
		c.Upstreams = append(c.Upstreams, UpstreamConfig{UpstreamConfig: upstreams.UpstreamConfig{Name: "ts", URL: tsBackend, Timeout: 10 * time.Second}})
	}, goBackend, legacyBackend)
	url := "http://" + gw.MCP + "/mcp"

	// poke makes every backend send resources/updated for each URI it listed, in its listed
	// spelling, which is what the SDK servers match subscriptions against.
	poke := func(ctx context.Context) {
		for _, s := range []*mcptest.Server{goBackend, legacyBackend} {
			for _, uri := range subscribedResources {
				_ = s.MCP().ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: uri})
			}
		}
		for _, uri := range tsResources {
			tsnames.NotifyUpdated(t, tsBackend, uri)
		}
	}
	// Each client subscribes to every resource, by its normal form (as the gateway lists it)
	// or by its URI form, and must hear of each, whatever spelling the backend wrote, under the
	// URI it knows: a 2026-07-28 client under the namespaced normal form its acknowledgement
	// names, a pre-2026 client (which has no acknowledgement) under the URI as it subscribed.
	var subscribe, normal []string
	for up, uris := range map[string][]string{"gosdk": subscribedResources, "legacy": subscribedResources, "ts": tsResources} {
		for i, listed := range uris {
			n, err := upstreams.NormalizeResource(listed)
			if err != nil {
				t.Fatal(err)
			}
			by := up + "+" + n
			if i%2 == 0 {
				by = up + "+" + uriFormForTest(n)
			}
			subscribe = append(subscribe, by)
			normal = append(normal, up+"+"+n)
		}
	}
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		want := normal
		if version != "2026-07-28" {
			want = subscribe
		}
		t.Run("go-sdk client "+version, func(t *testing.T) {
			u := &mcptest.ResourceUpdates{}
			cs := mcptest.Connect(t, url, mcptest.WithProtocolVersion(version), mcptest.WithResourceUpdated(u.Handler))
			for _, uri := range subscribe {
				if err := cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: uri}); err != nil {
					t.Fatalf("subscribe %q: %v", uri, err)
				}
			}
			// The subscriptions reach the backends asynchronously (a listen stream of its
			// own, a GET stream that starts again): poke until every update arrived; bounded.
			var got []string
			for i := 0; ; i++ {
				got = u.Seen()
				if !slices.ContainsFunc(want, func(w string) bool { return !slices.Contains(got, w) }) {
					break
				}
				if i == 400 {
					slices.Sort(got)
					t.Fatalf("after %d rounds the client heard of %q, want each of %q", i, slices.Compact(got), want)
				}
				poke(t.Context())
				time.Sleep(25 * time.Millisecond) // a poll interval, not an assertion
			}
			for _, uri := range got {
				if !slices.Contains(want, uri) {
					t.Errorf("an update names %q, not a URI the client knows", uri)
				}
			}
		})
	}
	t.Run("typescript client", func(t *testing.T) {
		// The backends update every resource, round after round, until the client is done.
		ctx, stop := context.WithCancel(t.Context())
		poked := make(chan struct{})
		go func() {
			defer close(poked)
			for ctx.Err() == nil {
				poke(ctx)
				time.Sleep(25 * time.Millisecond) // a poll interval, not an assertion
			}
		}()
		res := tsnames.RunClient(t, url, tsnames.Names{Listen: subscribe})
		stop()
		<-poked
		slices.Sort(res.Honored)
		if want := slices.Sorted(slices.Values(normal)); !slices.Equal(res.Honored, want) {
			t.Fatalf("acknowledged %q, want %q", res.Honored, want)
		}
		for _, w := range normal {
			if !slices.Contains(res.Updates, w) {
				t.Errorf("the client never heard of %q (heard %q)", w, slices.Compact(slices.Sorted(slices.Values(res.Updates))))
			}
		}
		for _, uri := range res.Updates {
			if !slices.Contains(normal, uri) {
				t.Errorf("an update names %q, not a URI the client was acknowledged with", uri)
			}
		}
	})
	// The backends were sent each subscription in the spelling they listed, never in another.
	for _, s := range []*mcptest.Server{goBackend, legacyBackend} {
		n := 0
		for _, r := range s.Requests() {
			body := string(r.Body)
			if !strings.Contains(body, `"resources/subscribe"`) && !strings.Contains(body, `"subscriptions/listen"`) {
				continue
			}
			if strings.Contains(body, "mem://") {
				n++
			}
			if strings.Contains(body, "mem://enc/café") || strings.Contains(body, "mem://raw/caf%C3%A9") {
				t.Errorf("%s was sent a spelling it did not list: %s", s.Name(), body)
			}
		}
		if n == 0 {
			t.Errorf("%s was sent no resource subscription", s.Name())
		}
	}
}
