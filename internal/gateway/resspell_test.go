package gateway

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/tsnames"
	"github.com/mcp-gateway/gateway/upstreams"
)

// Resource URIs outside plain ASCII reach the backend in a spelling it finds (docs/protocol.md,
// "Resource URIs toward a backend"). The gateway authorises the normal form, in which
// "mem://x/%C3%A9" is "mem://x/é"; the Go SDK server looks a read up by the exact string it
// listed, the TypeScript SDK server by the percent-encoded form. Each resource below answers
// "read <the URI the backend received>", so the test sees the spelling forwarded.
//
//	go test -count=1 -run 'TestResourceSpelling' ./internal/gateway

// spelledResources are what the Go SDK backends list: percent-encoded and raw non-ASCII, both
// in one URI, a query, a 4-byte character, and plain ASCII as the control.
var spelledResources = []string{
	"mem://enc/caf%C3%A9",
	"mem://raw/café",
	"mem://mix/%C3%A9/日本",
	"mem://q/x?name=%C3%BC",
	"mem://emoji/%F0%9F%9A%80",
	"mem://ascii/a%20b",
}

// Two URIs with one normal form, serving different texts: policy cannot tell them apart, so
// the gateway picks neither listed spelling and sends the URI form.
var collidingResources = []string{"mem://c/%C3%A9", "mem://c/é"}

func spelledBackend(t *testing.T, name string, legacy bool, uris []string) *mcptest.Server {
	t.Helper()
	opts := []mcptest.Option{mcptest.WithoutDefaults()}
	for _, uri := range uris {
		opts = append(opts, mcptest.WithResource(&mcp.Resource{URI: uri, Name: uri, MIMEType: "text/plain"},
			func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "read " + req.Params.URI}}}, nil
			}))
	}
	if legacy {
		return mcptest.StartLegacyServer(t, name, opts...)
	}
	return mcptest.StartServer(t, name, opts...)
}

// spellingRead is one read through the gateway: the client URI and the URI the backend must
// have received.
type spellingRead struct{ uri, want string }

// spellingReads are the reads of uris behind upstream up, each by its normal form and by its
// URI form, each expected to reach the backend as it listed it.
func spellingReads(up string, uris []string) []spellingRead {
	var out []spellingRead
	for _, listed := range uris {
		n, err := upstreams.NormalizeResource(listed)
		if err != nil {
			panic(err)
		}
		out = append(out, spellingRead{up + "+" + n, listed})
		if enc := uriFormForTest(n); enc != n {
			out = append(out, spellingRead{up + "+" + enc, listed})
		}
	}
	return out
}

// uriFormForTest percent-encodes every non-ASCII byte, written here again rather than taken
// from the code under test.
func uriFormForTest(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x80 {
			fmt.Fprintf(&b, "%%%02X", c)
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

func TestResourceSpellingRealSDKs(t *testing.T) {
	t.Parallel()
	goBackend := spelledBackend(t, "gosdk", false, spelledResources)
	legacyBackend := spelledBackend(t, "legacy", true, spelledResources)
	collide := spelledBackend(t, "collide", false, collidingResources)
	// The TypeScript SDK server finds only what it lists percent-encoded (a raw listing cannot
	// be read even directly), and finds it by either spelling.
	tsResources := []string{"mem://ts/caf%C3%A9", "mem://ts/%E6%97%A5/x?q=%C3%BC"}
	tsBackend := tsnames.StartBackend(t, tsnames.Names{Resources: tsResources})
	gw := startTestGateway(t, func(c *Config) {
		c.Upstreams = append(c.Upstreams, UpstreamConfig{UpstreamConfig: upstreams.UpstreamConfig{Name: "ts", URL: tsBackend, Timeout: 10 * time.Second}})
	}, goBackend, legacyBackend, collide)
	url := "http://" + gw.MCP + "/mcp"

	var reads []spellingRead
	reads = append(reads, spellingReads("gosdk", spelledResources)...)
	reads = append(reads, spellingReads("legacy", spelledResources)...)
	// The TypeScript server answers with the URI it registered, which is what it found.
	reads = append(reads, spellingReads("ts", tsResources)...)
	for _, uri := range []string{"collide+mem://c/é", "collide+mem://c/%C3%A9"} {
		reads = append(reads, spellingRead{uri, "mem://c/%C3%A9"})
	}

	check := func(t *testing.T, uri, text, errText string, want string) {
		t.Helper()
		switch {
		case errText != "":
			t.Errorf("read %q: %s", uri, errText)
		case text != "read "+want:
			t.Errorf("read %q: backend got %q, want %q", uri, strings.TrimPrefix(text, "read "), want)
		}
	}
	for _, version := range []string{"", "2025-11-25"} {
		name := "go-sdk client"
		var opts []mcptest.ClientOption
		if version != "" {
			name += " " + version
			opts = append(opts, mcptest.WithProtocolVersion(version))
		}
		t.Run(name, func(t *testing.T) {
			cs := mcptest.Connect(t, url, opts...)
			for _, r := range reads {
				res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: r.uri})
				if err != nil {
					check(t, r.uri, "", err.Error(), r.want)
					continue
				}
				check(t, r.uri, res.Contents[0].Text, "", r.want)
				// What the client reads is in the gateway's namespace and normal form.
				if n, _ := upstreams.NormalizeResource(r.uri[strings.IndexByte(r.uri, '+')+1:]); res.Contents[0].URI != r.uri[:strings.IndexByte(r.uri, '+')+1]+n {
					t.Errorf("read %q: contents uri %q", r.uri, res.Contents[0].URI)
				}
			}
		})
	}
	t.Run("typescript client", func(t *testing.T) {
		var uris []string
		for _, r := range reads {
			uris = append(uris, r.uri)
		}
		res := tsnames.RunClient(t, url, tsnames.Names{Resources: uris})
		if len(res.Calls) != len(reads) {
			t.Fatalf("calls: %+v", res.Calls)
		}
		for i, c := range res.Calls {
			check(t, c.Name, c.Text, c.Error, reads[i].want)
		}
	})
}
