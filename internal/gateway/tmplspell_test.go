package gateway

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/tsnames"
	"github.com/mcp-gateway/gateway/upstreams"
)

// A read of a URI under a resource template its backend listed in another spelling than the
// normal form reaches the backend respelt as the backend spelt the template (docs/protocol.md,
// "Resource URIs toward a backend"): the Go SDK server matches a read against the template's
// literal text byte for byte, so mem://items/~1 is no expansion of MEM://Items/%7e{id} to it.
//
//	go test -count=1 -run 'TestTemplateSpelling' ./internal/gateway

// spelledTemplates are what the backends list: case in the scheme and host, escapes of
// unreserved characters, a run of '/', raw non-ASCII literal text. Each answers "read <the URI
// the backend received>".
var spelledTemplates = []string{
	"MEM://Items/%7e{id}",
	"Mem://Docs/%41{name}/x",
	"mem://Mixed//{a}/%7E",
	"mem://u/é/{id}",
}

// listedResources are resources the backends list beside the templates, each served by its
// own handler: in the normal form, with case in the host, and with an escaped unreserved
// character, those two under the first template as well, and a UI resource (MCP Apps) with
// case in its host.
var listedResources = []string{"mem://items/~static", "MEM://Items/%7eOdd", "mem://items/%7Eesc", "ui://Widget/view"}

// templateBackend lists templates and resources.
func templateBackend(t *testing.T, name string, legacy bool, templates, resources []string) *mcptest.Server {
	t.Helper()
	echo := func(prefix string) mcp.ResourceHandler {
		return func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: prefix + req.Params.URI}}}, nil
		}
	}
	// Completion answers a template it lists, named exactly as listed, with one value.
	complete := func(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
		values := []string{}
		if ref := req.Params.Ref; ref != nil && ref.Type == "ref/resource" && slices.Contains(templates, ref.URI) {
			values = append(values, "1")
		}
		return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: values, Total: len(values)}}, nil
	}
	opts := []mcptest.Option{mcptest.WithoutDefaults(), mcptest.WithCompletion(complete)}
	for _, uri := range resources {
		opts = append(opts, mcptest.WithResource(&mcp.Resource{URI: uri, Name: uri, MIMEType: "text/plain"}, echo("resource ")))
	}
	for _, tmpl := range templates {
		opts = append(opts, mcptest.WithResourceTemplate(&mcp.ResourceTemplate{URITemplate: tmpl, Name: tmpl, MIMEType: "text/plain"}, echo("read ")))
	}
	if legacy {
		return mcptest.StartLegacyServer(t, name, opts...)
	}
	return mcptest.StartServer(t, name, opts...)
}

// templateReads are client URIs (after the upstream's prefix) under spelledTemplates and what
// the backend must have received.
var templateReads = []struct{ uri, want string }{
	{"mem://items/~1", "read MEM://Items/%7e1"},
	{"MEM://ITEMS/%7E1", "read MEM://Items/%7e1"},
	{"mem://items/a/../~1", "read MEM://Items/%7e1"}, // the client's dot segment never reaches it
	{"mem://items/~caf%C3%A9", "read MEM://Items/%7ecaf%C3%A9"},
	{"mem://items/~café", "read MEM://Items/%7ecaf%C3%A9"},
	{"mem://docs/Ab/x", "read Mem://Docs/%41b/x"},
	{"mem://mixed/q/~", "read mem://Mixed//q/%7E"},
	{"mem://u/%C3%A9/1", "read mem://u/é/1"},
	// A resource the backend lists is sent as it listed it, not respelt under the template.
	{"mem://items/~static", "resource mem://items/~static"},
	{"mem://items/~Odd", "resource MEM://Items/%7eOdd"},
	{"MEM://ITEMS/%7EOdd", "resource MEM://Items/%7eOdd"},
	{"mem://items/~esc", "resource mem://items/%7Eesc"},
	{"ui://{up}/widget/view", "resource ui://Widget/view"},
}

func TestTemplateSpellingRealSDK(t *testing.T) {
	t.Parallel()
	goBackend := templateBackend(t, "gosdk", false, spelledTemplates, listedResources)
	legacyBackend := templateBackend(t, "legacy", true, spelledTemplates, listedResources)
	// Two spellings of one normal form, of a template or of a resource (one of them the
	// normal form): which the backend would serve a URI by is not the gateway's to pick, so
	// the URI goes in its normal form, as before; and one name listed with two definitions,
	// neither is listed to clients (docs/protocol.md §5.1).
	twice := templateBackend(t, "twice", false, []string{"MEM://Items/%7e{id}", "mem://ITEMS/~{id}"}, []string{"mem://k/a", "MEM://k/a"})
	replicaA := startTestGateway(t, nil, goBackend, legacyBackend, twice)
	replicaB := startTestGateway(t, nil, goBackend, legacyBackend, twice)

	// Replica A has listed the templates for a client; replica B has never listed anything.
	listed := mcptest.Connect(t, "http://"+replicaA.MCP+"/mcp")
	if res, err := listed.ListResourceTemplates(t.Context(), nil); err != nil || len(res.ResourceTemplates) != 2*len(spelledTemplates) {
		t.Fatalf("templates: %v, %v", res, err)
	}
	for _, replica := range []struct {
		name string
		l    Listeners
	}{{"replica that listed", replicaA}, {"replica that never listed", replicaB}} {
		for _, version := range []string{"", "2025-11-25"} {
			var opts []mcptest.ClientOption
			if version != "" {
				opts = append(opts, mcptest.WithProtocolVersion(version))
			}
			t.Run(replica.name+" "+version, func(t *testing.T) {
				cs := mcptest.Connect(t, "http://"+replica.l.MCP+"/mcp", opts...)
				for _, up := range []string{"gosdk", "legacy"} {
					for _, r := range templateReads {
						uri := up + "+" + r.uri
						if rest, ok := strings.CutPrefix(r.uri, "ui://{up}/"); ok {
							uri = "ui://" + up + "/" + rest // a UI resource is namespaced by its host
						}
						res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
						if err != nil {
							t.Errorf("read %s: %v", uri, err)
							continue
						}
						if got := res.Contents[0].Text; got != r.want {
							t.Errorf("read %s: backend got %q, want %q", uri, got, r.want)
						}
					}
				}
				before := len(twice.RequestsOf("resources/read"))
				if _, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "twice+MEM://Items/%7e1"}); err == nil {
					t.Error("twice: a URI under two spellings of one template was respelt")
				}
				reads := twice.RequestsOf("resources/read")
				if len(reads) != before+1 || readURI(t, reads[len(reads)-1].Body) != "mem://items/~1" {
					t.Errorf("twice: the backend did not get the normal form: %d reads", len(reads)-before)
				}
				for _, uri := range []string{"twice+mem://k/a", "twice+MEM://k/a"} {
					res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
					if err != nil || res.Contents[0].Text != "resource mem://k/a" {
						t.Errorf("read %s: %v, %v; want the resource listed in the normal form", uri, res, err)
					}
				}
			})
		}
	}

	// A completion names a template by its text: the backend gets it as it listed it, from a
	// replica that never listed it too.
	cs := mcptest.Connect(t, "http://"+replicaB.MCP+"/mcp")
	for _, up := range []string{"gosdk", "legacy"} {
		for _, c := range []struct{ ref, arg string }{{"mem://items/~{id}", "id"}, {"MEM://ITEMS/%7E{id}", "id"},
			{"mem://docs/A{name}/x", "name"}, {"mem://mixed/{a}/~", "a"}} {
			res, err := cs.Complete(t.Context(), &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/resource", URI: up + "+" + c.ref},
				Argument: mcp.CompleteParamsArgument{Name: c.arg, Value: ""}})
			if err != nil || len(res.Completion.Values) != 1 {
				t.Errorf("complete %s+%s: %+v, %v; the backend did not get the template as it listed it", up, c.ref, res, err)
			}
		}
	}

	// URIs that normalise outside what the backend may read are refused and never forwarded.
	before := len(goBackend.RequestsOf("resources/read"))
	for _, uri := range []string{"MEM://Items/%7e1/../../x", "MEM://Items/%7e1%2F..%2F..%2Fx", "MEM://Items/%7e1/%2e%2e%2e", "MEM://Items/%7e%00"} {
		if _, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "gosdk+" + uri}); err == nil || !strings.Contains(err.Error(), "resource URI") {
			t.Errorf("read %q: %v, want the URI refused", uri, err)
		}
	}
	if n := len(goBackend.RequestsOf("resources/read")) - before; n != 0 {
		t.Errorf("%d refused reads reached the backend", n)
	}
}

// readURI returns params.uri of a JSON-RPC request body.
func readURI(t *testing.T, body []byte) string {
	t.Helper()
	var m struct {
		Params struct {
			URI string `json:"uri"`
		} `json:"params"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	return m.Params.URI
}

// TestTemplateSubscriptionSpellingRealSDK: a subscription to a URI under a template its backend
// spelt otherwise goes in the spelling a read of it goes in, respelt under the template, so
// the backend, which matches the updates it sends to subscriptions by exact string, updates
// it: the Go SDK client at both eras hears of it under the URI it knows.
func TestTemplateSubscriptionSpellingRealSDK(t *testing.T) {
	echo := func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "read " + req.Params.URI}}}, nil
	}
	tmpl := &mcp.ResourceTemplate{URITemplate: "MEM://Items/%7e{id}", Name: "items", MIMEType: "text/plain"}
	goBackend := mcptest.StartServer(t, "gosdk", mcptest.WithoutDefaults(), mcptest.WithSubscriptions(), mcptest.WithResourceTemplate(tmpl, echo))
	legacyBackend := mcptest.StartLegacyServer(t, "legacy", mcptest.WithoutDefaults(), mcptest.WithSubscriptions(), mcptest.WithResourceTemplate(tmpl, echo))
	gw := startTestGateway(t, nil, goBackend, legacyBackend)
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(version, func(t *testing.T) {
			u := &mcptest.ResourceUpdates{}
			cs := mcptest.Connect(t, "http://"+gw.MCP+"/mcp", mcptest.WithProtocolVersion(version), mcptest.WithResourceUpdated(u.Handler))
			want := []string{"gosdk+mem://items/~1", "legacy+mem://items/~1"}
			for _, uri := range want {
				if err := cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: uri}); err != nil {
					t.Fatalf("subscribe %q: %v", uri, err)
				}
			}
			// The subscriptions reach the backends asynchronously: update until both arrived;
			// bounded.
			for i := 0; ; i++ {
				got := u.Seen()
				if !slices.ContainsFunc(want, func(w string) bool { return !slices.Contains(got, w) }) {
					break
				}
				if i == 400 {
					t.Fatalf("after %d rounds the client heard of %q, want each of %q", i, got, want)
				}
				for _, s := range []*mcptest.Server{goBackend, legacyBackend} {
					_ = s.MCP().ResourceUpdated(t.Context(), &mcp.ResourceUpdatedNotificationParams{URI: "MEM://Items/%7e1"})
				}
				time.Sleep(25 * time.Millisecond) // a poll interval, not an assertion
			}
		})
	}
}

// TestTemplateSpellingTypeScriptSDK: the TypeScript SDK server matches a read against the
// literal text of its templates too; a template it lists with case in its host and an escaped
// unreserved character is read through the gateway in its own spelling (the normal form is
// "Resource not found" to it). Its scheme is lower case: the server reads a URI as a WHATWG
// URL, which lower-cases the scheme before any template sees it.
func TestTemplateSpellingTypeScriptSDK(t *testing.T) {
	tsBackend := tsnames.StartBackend(t, tsnames.Names{Templates: []string{"mem://Items/%7e{id}"}})
	gw := startTestGateway(t, func(c *Config) {
		c.Upstreams = append(c.Upstreams, UpstreamConfig{UpstreamConfig: upstreams.UpstreamConfig{Name: "ts", URL: tsBackend, Timeout: 10 * time.Second}})
	})
	cs := mcptest.Connect(t, "http://"+gw.MCP+"/mcp")
	for _, uri := range []string{"ts+mem://items/~1", "ts+MEM://ITEMS/%7E1"} {
		res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			t.Errorf("read %s: %v", uri, err)
			continue
		}
		if got := res.Contents[0].Text; got != "read mem://Items/%7e1" {
			t.Errorf("read %s: backend got %q, want %q", uri, got, "read mem://Items/%7e1")
		}
	}
}
