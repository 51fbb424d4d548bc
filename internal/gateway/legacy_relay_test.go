//lint:file-ignore SA1019 pre-2026 clients and backends still use logging, sampling and roots, deprecated in 2026-07-28 (SEP-2577); the gateway serves them on purpose

package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/testsupport/legacyclient"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
	"github.com/mcp-gateway/gateway/mcphttp/pre2026"
)

// The relay of a pre-2026 backend's mid-call requests (elicitation/create,
// sampling/createMessage, roots/list) to a pre-2026 client, as the go-sdk's 2025 servers (the
// everything-server among them) ask for input: in the middle of the call, on its stream.
//
//	go test -race -count=1 -run 'TestLegacyRelay' ./internal/gateway

// toolRelay is the legacy backend's tool that asks its client for what (elicit, sample, roots)
// in the middle of the call and reports what it got, or the error it got, as its text.
const toolRelay = "relay"

// relayManyAsks is how often the relay tool's "many" asks its client at most: well beyond
// legacy.maxRounds.
const relayManyAsks = 25

// relayIn is the relay tool's input.
type relayIn struct {
	What string `json:"what" jsonschema:"elicit, sample or roots"`
}

// relayTool asks the client in-request, as a 2025 server does, and says what came back; an
// error is reported as text, so a test reads what the backend got.
func relayTool(ctx context.Context, req *mcp.CallToolRequest, in relayIn) (*mcp.CallToolResult, any, error) {
	var got string
	var err error
	switch in.What {
	case "elicit":
		var res *mcp.ElicitResult
		res, err = req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "Your name, old__friend?", RequestedSchema: &jsonschema.Schema{
			Type: "object", Properties: map[string]*jsonschema.Schema{"name": {Type: "string"}}}})
		if err == nil {
			got = fmt.Sprintf("%s %v", res.Action, res.Content["name"])
		}
	case "sample":
		var res *mcp.CreateMessageResult
		res, err = req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 10,
			Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "say old__hi"}}}})
		if err == nil {
			text, _ := res.Content.(*mcp.TextContent)
			got = res.Model + " " + text.Text
		}
	case "roots":
		var res *mcp.ListRootsResult
		res, err = req.Session.ListRoots(ctx, nil)
		if err == nil {
			var uris []string
			for _, r := range res.Roots {
				uris = append(uris, r.URI)
			}
			got = strings.Join(uris, ",")
		}
	case "many":
		// A backend that keeps asking: it elicits until the gateway refuses, at most
		// relayManyAsks times, and says how many answers it got.
		n := 0
		for ; n < relayManyAsks; n++ {
			if _, err = req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "Again?", RequestedSchema: &jsonschema.Schema{
				Type: "object", Properties: map[string]*jsonschema.Schema{"name": {Type: "string"}}}}); err != nil {
				break
			}
		}
		got = fmt.Sprintf("%d answered", n)
	default:
		err = fmt.Errorf("unknown what %q", in.What)
	}
	if err != nil {
		got = strings.TrimPrefix(got+"; ", "; ") + "error: " + err.Error()
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.What + ": " + got}}}, nil, nil
}

// startRelayBackend starts a 2025-11-25 go-sdk server (with sessions) offering the relay tool.
func startRelayBackend(t *testing.T) *mcptest.Server {
	t.Helper()
	return mcptest.StartLegacyServer(t, "old", mcptest.WithoutDefaults(),
		mcptest.WithTool(&mcp.Tool{Name: toolRelay, Description: "Asks the client mid-call.", InputSchema: &jsonschema.Schema{
			Type: "object", Properties: map[string]*jsonschema.Schema{"what": {Type: "string"}}}},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				var in relayIn
				if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
					return nil, err
				}
				res, _, err := relayTool(ctx, req, in)
				return res, err
			}))
}

// relayGateway starts a gateway serving legacy clients in front of backend; pin, when set, is
// the backend's protocol; redisURL, when set, is shared with other replicas.
func relayGateway(t *testing.T, backend *mcptest.Server, pin, redisURL string) string {
	t.Helper()
	gw := startTestGateway(t, func(c *Config) {
		c.MRTR.Keys = testKeys
		c.Upstreams[0].Protocol = pin
		c.Redis.URL = redisURL
	}, backend)
	return "http://" + gw.MCP + "/mcp"
}

// relayCall calls old__relay for what and returns the tool's text, failing on anything else.
func relayCall(t *testing.T, cs *mcp.ClientSession, what string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "old__" + toolRelay, Arguments: map[string]any{"what": what}})
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if res.IsError {
		t.Fatalf("%s: tool error %q", what, mcptest.ResultText(res))
	}
	return mcptest.ResultText(res)
}

// TestLegacyRelay: a go-sdk client pinned to 2025-11-25 (and one pinned to 2025-06-18) calls a
// 2025-11-25 backend's tool that elicits, samples and lists roots in the middle of the call,
// through the gateway (the backend's era pinned, and learnt): each request reaches the client as it was asked (the message and the
// sampling content are not renamed), and the backend gets the client's answer.
func TestLegacyRelay(t *testing.T) {
	for _, tc := range []struct{ name, pin, client string }{
		{"pinned", "2025-11-25", "2025-11-25"},
		{"learnt", "", "2025-11-25"},
		{"client-2025-06-18", "2025-11-25", "2025-06-18"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			backend := startRelayBackend(t)
			url := relayGateway(t, backend, tc.pin, "")
			asked := make(chan string, 3)
			cs := mcptest.Connect(t, url, mcptest.WithProtocolVersion(tc.client),
				mcptest.WithElicitation(func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					asked <- req.Params.Message
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
				}),
				mcptest.WithSampling(func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
					text, _ := req.Params.Messages[0].Content.(*mcp.TextContent)
					asked <- text.Text
					return &mcp.CreateMessageResult{Model: "m1", Role: "assistant", Content: &mcp.TextContent{Text: "sampled"}}, nil
				}),
				mcptest.WithRoots(&mcp.Root{URI: "file:///projects/a", Name: "a"}))
			for _, tt := range []struct{ what, want, asked string }{
				{"elicit", "elicit: accept Ada", "Your name, old__friend?"},
				{"sample", "sample: m1 sampled", "say old__hi"},
				{"roots", "roots: file:///projects/a", ""},
			} {
				if got := relayCall(t, cs, tt.what); got != tt.want {
					t.Errorf("%s: backend got %q, want %q", tt.what, got, tt.want)
				}
				if tt.asked == "" {
					continue
				}
				select {
				case a := <-asked:
					if a != tt.asked {
						t.Errorf("%s: the client was asked %q, want %q", tt.what, a, tt.asked)
					}
				default:
					t.Errorf("%s: the client's handler did not run", tt.what)
				}
			}
		})
	}
}

// TestLegacyRelayNoCapability: a 2025-11-25 client that declared none of elicitation, sampling
// or roots is asked nothing; the backend gets an error for each request at once, and the call
// ends with whatever the backend makes of it.
func TestLegacyRelayNoCapability(t *testing.T) {
	backend := startRelayBackend(t)
	url := relayGateway(t, backend, "2025-11-25", "")
	cs := mcptest.Connect(t, url, mcptest.WithProtocolVersion("2025-11-25"), mcptest.WithCapabilities(&mcp.ClientCapabilities{}))
	for _, what := range []string{"elicit", "sample", "roots"} {
		got := relayCall(t, cs, what)
		if !strings.HasPrefix(got, what+": error: ") || !strings.Contains(got, "did not declare") {
			t.Errorf("%s: backend got %q, want the gateway's error", what, got)
		}
	}
}

// TestLegacyRelayModernClient: a 2026-07-28 client cannot be asked anything mid-call (MRTR has
// no place for it), so the backend's request is refused as before, even from a client with an
// elicitation handler.
func TestLegacyRelayModernClient(t *testing.T) {
	backend := startRelayBackend(t)
	url := relayGateway(t, backend, "2025-11-25", "")
	var asked atomic.Bool
	cs := mcptest.Connect(t, url, mcptest.WithElicitation(func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked.Store(true)
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
	}))
	got := relayCall(t, cs, "elicit")
	if !strings.HasPrefix(got, "elicit: error: ") || !strings.Contains(got, "not supported through the gateway") || asked.Load() {
		t.Errorf("backend got %q (client asked: %v), want the refusal", got, asked.Load())
	}
}

// TestLegacyRelayCrossReplica: two replicas share a real Redis; the backend's elicitation goes
// on the call's stream from replica A, and the client POSTs its answer to replica B, which
// hands it to A through Redis: the backend gets it and the call ends on A with its result.
func TestLegacyRelayCrossReplica(t *testing.T) {
	redis := testredis.Start(t)
	backend := startRelayBackend(t)
	a := relayGateway(t, backend, "2025-11-25", redis.URL())
	b := relayGateway(t, backend, "2025-11-25", redis.URL())
	raw := &legacyclient.Raw{}
	sid := raw.Initialize(t, a)
	st := raw.Open(t, a, sid, raw.CallArgs("old__"+toolRelay, `{"what":"elicit"}`))
	req := st.NextRequest(t, "elicitation/create")
	if !strings.Contains(string(req.Params), `"message":"Your name, old__friend?"`) {
		t.Errorf("elicitation params %s", req.Params)
	}
	answer := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"action":"accept","content":{"name":"Grace"}}}`, req.ID)
	if r := raw.Post(t, b, sid, answer); r.Status != http.StatusAccepted {
		t.Fatalf("answer on replica B: %s", r)
	}
	res := st.NextResult(t)
	msg := json.RawMessage(`{"result":` + string(res.Result) + `}`)
	if got := legacyclient.ResultText([]json.RawMessage{msg}); got != "elicit: accept Grace" {
		t.Errorf("result %s error %s, want the backend to have got Grace", res.Result, res.Error)
	}
	// The answer was single-use: the same answer again is refused.
	if r := raw.Post(t, b, sid, answer); r.Status == http.StatusAccepted {
		t.Errorf("a replayed answer was accepted: %s", r)
	}
}

// TestLegacyRelayClientLeaves: a legacy client that gives up while it is being asked (it
// cancels its call) ends the wait, and the backend's call is cancelled: its elicitation
// returns an error rather than waiting for the bridge's timeout.
func TestLegacyRelayClientLeaves(t *testing.T) {
	elicitErr := make(chan error, 1)
	backend := mcptest.StartLegacyServer(t, "old", mcptest.WithoutDefaults(),
		mcptest.WithTool(&mcp.Tool{Name: "hold", Description: "Asks and waits.", InputSchema: &jsonschema.Schema{Type: "object"}},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				_, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "Wait?", RequestedSchema: &jsonschema.Schema{Type: "object"}})
				elicitErr <- err
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
			}))
	url := relayGateway(t, backend, "2025-11-25", "")
	entered, release := make(chan struct{}, 1), make(chan struct{})
	cs := mcptest.Connect(t, url, mcptest.WithProtocolVersion("2025-11-25"),
		mcptest.WithElicitation(func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			entered <- struct{}{}
			// The user never answers; the handler ends with the test, before the session closes.
			select {
			case <-ctx.Done():
			case <-release:
			}
			return &mcp.ElicitResult{Action: "cancel"}, nil
		}))
	defer close(release)
	ctx, cancel := context.WithCancel(t.Context())
	called := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "old__hold", Arguments: map[string]any{}})
		called <- err
	}()
	select {
	case <-entered:
	case <-time.After(30 * time.Second):
		t.Fatal("the client was not asked")
	}
	cancel()
	select {
	case err := <-elicitErr:
		if err == nil {
			t.Error("the backend's elicitation succeeded after the client left")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the backend still waits after the client left")
	}
	<-called
}

// TestLegacyBatchOfAnswers: a 2025-03-26 client may answer the gateway's requests (sampling,
// roots) in one batch (docs/legacy-2025-03-26.md). Each answer is delivered on its own: 202
// when every one was, and the calls waiting for them finish with what they were told; a batch
// with an answer nobody waits for gets that one's refusal, the others delivered all the same.
func TestLegacyBatchOfAnswers(t *testing.T) {
	url := relayGateway(t, startRelayBackend(t), "", "")
	c := &legacyclient.Raw{Protocol: legacyclient.Protocol20250326}
	init := c.Post(t, url, "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26",`+
		`"capabilities":{"sampling":{},"roots":{}},"clientInfo":{"name":"host-0326","version":"1.0.0"}}}`)
	sid := init.Header.Get("Mcp-Session-Id")
	if init.Status != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %s", init)
	}
	if n := c.Post(t, url, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); n.Status != http.StatusAccepted {
		t.Fatalf("notifications/initialized: %s", n)
	}
	relay := func(what string) *legacyclient.Stream {
		return c.Open(t, url, sid, c.CallArgs("old__"+toolRelay, `{"what":"`+what+`"}`))
	}
	sampled := `{"model":"m1","role":"assistant","content":{"type":"text","text":"sampled"}}`
	answer := func(id json.RawMessage, result string) string {
		return `{"jsonrpc":"2.0","id":` + string(id) + `,"result":` + result + `}`
	}
	resultText := func(s *legacyclient.Stream) string {
		m := s.NextResult(t)
		var res struct{ Content []struct{ Text string } }
		if err := json.Unmarshal(m.Result, &res); err != nil || len(res.Content) == 0 {
			t.Fatalf("result %s, error %s", m.Result, m.Error)
		}
		return res.Content[0].Text
	}

	sample, roots := relay("sample"), relay("roots")
	askS, askR := sample.NextRequest(t, "sampling/createMessage"), roots.NextRequest(t, "roots/list")
	r := c.Post(t, url, sid, "["+answer(askS.ID, sampled)+","+answer(askR.ID, `{"roots":[{"uri":"file:///projects/a"}]}`)+"]")
	if r.Status != http.StatusAccepted {
		t.Fatalf("a batch of two answers: %s, want 202", r)
	}
	if got := resultText(sample); got != "sample: m1 sampled" {
		t.Errorf("the sampling call: %q", got)
	}
	if got := resultText(roots); got != "roots: file:///projects/a" {
		t.Errorf("the roots call: %q", got)
	}

	sample = relay("sample")
	askS = sample.NextRequest(t, "sampling/createMessage")
	r = c.Post(t, url, sid, "["+answer(json.RawMessage(`"g1.nobody.waits"`), sampled)+","+answer(askS.ID, sampled)+"]")
	if r.Status != http.StatusBadRequest {
		t.Fatalf("a batch with an answer nobody waits for: %s, want its 400", r)
	}
	if got := resultText(sample); got != "sample: m1 sampled" {
		t.Errorf("the answer delivered beside the refused one: %q", got)
	}
}

// TestLegacyRelayAsksBounded: a pre-2026 backend that asks its client again and again in one
// call (elicitation, sampling and roots are relayed one at a time, each a new request to the
// user, each a sampling the client may pay for) is held to legacy.maxRounds requests per call,
// as the input rounds of a 2026-07-28 backend are; the next one is refused to the backend
// without reaching the client.
func TestLegacyRelayAsksBounded(t *testing.T) {
	backend := startRelayBackend(t)
	url := relayGateway(t, backend, "2025-11-25", "")
	var asked atomic.Int32
	cs := mcptest.Connect(t, url, mcptest.WithProtocolVersion("2025-11-25"),
		mcptest.WithElicitation(func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked.Add(1)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		}))
	got := relayCall(t, cs, "many")
	want := fmt.Sprintf("many: %d answered", pre2026.DefaultLegacyMaxRounds)
	if !strings.HasPrefix(got, want+"; error: ") || !strings.Contains(got, "more than") {
		t.Errorf("backend got %q, want %q and the gateway's refusal", got, want)
	}
	if n := asked.Load(); n != pre2026.DefaultLegacyMaxRounds {
		t.Errorf("the client was asked %d times, want %d", n, pre2026.DefaultLegacyMaxRounds)
	}
	// The bound is per call: the next call is asked again.
	if got := relayCall(t, cs, "elicit"); got != "elicit: accept Ada" {
		t.Errorf("next call: backend got %q", got)
	}
}
