//lint:file-ignore SA1019 pre-2026 clients and backends still use logging, deprecated in 2026-07-28 (SEP-2577); the gateway serves them on purpose
package gateway

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	sdkrpc "github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// credEchoTools answer with the headers of the request they got: "headers" in its result and
// in a log message and a progress notification before it, "refuse" in a JSON-RPC error's
// message and data, as a backend that reports what it was sent does.
func credEchoTools() []mcptest.Option {
	object := &jsonschema.Schema{Type: "object"}
	dump := func(req *mcp.CallToolRequest) string {
		if req.Extra == nil {
			return "no headers"
		}
		b, _ := json.Marshal(req.Extra.Header) // json escapes &, < and >: the answer spells them \u0026 and so on
		return string(b)
	}
	return []mcptest.Option{
		mcptest.WithTool(&mcp.Tool{Name: "headers", InputSchema: object}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			h := dump(req)
			_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "error", Logger: "echo", Data: h})
			if tok := req.Params.GetProgressToken(); tok != nil {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Message: h})
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: h}}}, nil
		}),
		mcptest.WithTool(&mcp.Tool{Name: "refuse", InputSchema: object}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			h := dump(req)
			return nil, &sdkrpc.Error{Code: -32603, Message: "refused a request with " + h, Data: json.RawMessage(h)}
		}),
	}
}

// TestBackendEchoesNoCredential: a backend that answers with the headers it was sent (in a
// result, a JSON-RPC error's message and data, a log message, a progress notification) gives
// no client the credentials the gateway sent it: a configured header (with characters JSON
// escapes), the password of its URL's user information, the token exchanged for the caller,
// for backends and clients of both eras. What the caller reads holds the headers' names and
// REDACTED where each credential was.
func TestBackendEchoesNoCredential(t *testing.T) {
	const apiKey = "k3y&<v>/with+chars=0123456789"
	const password = "pw-0123456789-basic"
	iss := newExchangeIssuer(t)
	alpha := mcptest.StartServer(t, "alpha", credEchoTools()...)
	beta := mcptest.StartLegacyServer(t, "beta", credEchoTools()...)
	gamma := mcptest.StartServer(t, "gamma", credEchoTools()...)
	delta := mcptest.StartLegacyServer(t, "delta", credEchoTools()...)
	gw, _, _ := startLoggedGateway(t, func(c *Config) {
		trustIssuers(c, iss)
		c.MRTR.Keys = testKeys
		c.Upstreams[0].Headers = map[string]Secret{"X-Api-Key": {Value: apiKey}}
		c.Upstreams[1].URL = strings.Replace(c.Upstreams[1].URL, "http://", "http://gw:"+password+"@", 1)
		for i, b := range []*mcptest.Server{gamma, delta} {
			c.Upstreams[2+i].Auth = exchangeUpstream(b.Name(), b.URL(), iss).Auth
		}
		c.Auth.Policy.Rules = []authz.RuleConfig{{ID: "all", Upstream: "*", Tools: []string{"*"}}}
	}, alpha, beta, gamma, delta)
	token := mintFor(t, iss, "alice")

	var mu sync.Mutex
	var read []string // what the clients read, decoded
	keep := func(s ...string) {
		mu.Lock()
		defer mu.Unlock()
		read = append(read, s...)
	}
	for _, era := range []string{"2026-07-28", "2025-11-25"} {
		client := mcptest.Connect(t, "http://"+gw.MCP+"/mcp", mcptest.WithBearer(token), mcptest.WithProtocolVersion(era),
			mcptest.WithLogging(func(_ context.Context, r *mcp.LoggingMessageRequest) { keep(fmt.Sprint(r.Params.Data)) }),
			mcptest.WithProgress(func(_ context.Context, r *mcp.ProgressNotificationClientRequest) { keep(r.Params.Message) }))
		if era != "2026-07-28" {
			if err := client.SetLoggingLevel(t.Context(), &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
				t.Fatal(err)
			}
		}
		for _, b := range []string{"alpha", "beta", "gamma", "delta"} {
			res, err := client.CallTool(t.Context(), &mcp.CallToolParams{Name: b + "__headers", Meta: mcp.Meta{"progressToken": "p1"}})
			if err != nil || res.IsError {
				t.Fatalf("%s %s__headers: %v %+v", era, b, err, res)
			}
			keep(mcptest.ResultText(res))
			_, err = client.CallTool(t.Context(), &mcp.CallToolParams{Name: b + "__refuse"})
			var rpc *sdkrpc.Error
			if !errors.As(err, &rpc) {
				t.Fatalf("%s %s__refuse: %v, want the backend's error", era, b, err)
			}
			keep(rpc.Message, string(rpc.Data))
		}
	}

	// The credentials are what the backends were sent.
	creds := map[string]bool{apiKey: true, password: true}
	for _, b := range []*mcptest.Server{alpha, beta, gamma, delta} {
		for _, ex := range b.Requests() {
			if v := ex.Header.Get("X-Api-Key"); v != "" {
				creds[v] = true
			}
			if scheme, cred, ok := strings.Cut(ex.Header.Get("Authorization"), " "); ok {
				creds[cred] = true
				if raw, err := base64.StdEncoding.DecodeString(cred); scheme == "Basic" && err == nil {
					creds[string(raw)] = true
				}
			}
		}
	}
	if len(creds) < 5 { // the key, the password, the Basic credential both ways, a token exchanged
		t.Fatalf("the backends were sent only %d credentials", len(creds))
	}
	mu.Lock()
	got := slices.Clone(read) // a notification handled late is not read while it is added
	mu.Unlock()
	all := strings.Join(got, "\n")
	for _, want := range []string{"X-Api-Key", "Authorization", "REDACTED", "Mcp-Method"} {
		if !strings.Contains(all, want) {
			t.Errorf("the answers do not quote %s: %.600s", want, all)
		}
	}
	for c := range creds {
		// What a client reads may be JSON a backend wrote into a string: the credential
		// spelt as JSON writes it is the credential too.
		quoted, err := json.Marshal(c) // as the backends write it: <, > and & escaped
		if err != nil {
			t.Fatal(err)
		}
		for _, form := range []string{c, string(quoted[1 : len(quoted)-1])} {
			for _, s := range got {
				if i := strings.Index(s, form); i >= 0 {
					t.Errorf("a client read the credential %.12q…: …%s…", c, s[max(0, i-120):min(len(s), i+len(form)+20)])
					break
				}
			}
		}
	}
}
