package replicatest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcp-gateway/gateway/internal/eventstream"
)

// Protocol constants of MCP 2026-07-28 the raw client needs (spec §1, §2.2, §3).
const (
	protocolVersion = "2026-07-28"
	// confirmKey is the inputRequests key of the gateway's own confirmation.
	confirmKey = "io.mcp-gateway/confirm"
	// requestTimeout bounds one request, so a hung replica fails a test instead of stalling it.
	requestTimeout = 15 * time.Second
)

// JSON-RPC error codes the tests expect (spec quick reference; gateway codes in internal/jsonrpc).
const (
	codeInvalidParams = -32602
	codeRateLimited   = -32012
	codeUnavailable   = -32014
)

// mcpClient sends raw MCP 2026-07-28 requests with a bearer token, so each test controls
// exactly which replica gets which leg and sees the exact status, headers and codes.
type mcpClient struct {
	http  *http.Client
	token string
	ids   atomic.Int64
}

func newClient(token string) *mcpClient {
	return &mcpClient{http: &http.Client{Timeout: requestTimeout}, token: token}
}

// reply is one response: status, headers and the final JSON-RPC message.
type reply struct {
	Status int
	Header http.Header
	Body   string
	Result struct {
		ResultType    string                     `json:"resultType"`
		RequestState  string                     `json:"requestState"`
		InputRequests map[string]json.RawMessage `json:"inputRequests"`
		IsError       bool                       `json:"isError"`
		Content       []struct{ Text string }    `json:"content"`
		Tools         []struct{ Name string }    `json:"tools"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// text is the concatenated text content of a result.
func (r reply) text() string {
	var b strings.Builder
	for _, c := range r.Result.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

// servedBy names the replica that answered a request sent through the balancer.
func (r reply) servedBy() string { return r.Header.Get(servedByHeader) }

// ok reports a successful JSON-RPC answer on 200.
func (r reply) ok() bool { return r.Status == http.StatusOK && r.Error == nil }

// code is the JSON-RPC error code, 0 without an error.
func (r reply) code() int {
	if r.Error == nil {
		return 0
	}
	return r.Error.Code
}

func (r reply) String() string {
	return fmt.Sprintf("HTTP %d %s", r.Status, strings.TrimSpace(r.Body))
}

// callParams are tools/call params, with the retry fields of spec §3 when answering.
type callParams struct {
	Meta           map[string]any  `json:"_meta"`
	Name           string          `json:"name"`
	Arguments      json.RawMessage `json:"arguments"`
	InputResponses json.RawMessage `json:"inputResponses,omitempty"`
	RequestState   string          `json:"requestState,omitempty"`
}

// meta declares form elicitation, so the gateway may ask for confirmation (spec §3).
func meta() map[string]any {
	return map[string]any{
		"io.modelcontextprotocol/protocolVersion":    protocolVersion,
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"elicitation": map[string]any{}},
	}
}

// call sends tools/call name(args) to url. responses and state, when set, make it a retry.
// The error is for transport failures only: an HTTP error status is a reply.
func (c *mcpClient) call(url, name, args, responses, state string) (reply, error) {
	p := callParams{Meta: meta(), Name: name, Arguments: json.RawMessage(args), RequestState: state}
	if responses != "" {
		p.InputResponses = json.RawMessage(responses)
	}
	return c.send(url, "tools/call", name, p)
}

// listTools sends tools/list to url.
func (c *mcpClient) listTools(url string) (reply, error) {
	return c.send(url, "tools/list", "", map[string]any{"_meta": meta()})
}

func (c *mcpClient) send(url, method, name string, params any) (reply, error) {
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.ids.Add(1), "method": method, "params": params})
	if err != nil {
		return reply{}, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return reply{}, err
	}
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	h.Set("MCP-Protocol-Version", protocolVersion)
	h.Set("Mcp-Method", method)
	if name != "" {
		h.Set("Mcp-Name", name)
	}
	h.Set("Authorization", "Bearer "+c.token)
	res, err := c.http.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return reply{}, err
	}
	return decodeReply(res, b)
}

// decodeReply decodes a JSON body, or the last event of an SSE stream (the response to the
// request; earlier events are notifications). Bodies of other types, such as the balancer's own
// 503 page, are kept as text.
func decodeReply(res *http.Response, b []byte) (reply, error) {
	r := reply{Status: res.StatusCode, Header: res.Header, Body: string(b)}
	msg := b
	switch ct := res.Header.Get("Content-Type"); {
	case strings.HasPrefix(ct, "text/event-stream"):
		msg = lastEventData(b)
	case !strings.HasPrefix(ct, "application/json"):
		return r, nil
	}
	if err := json.Unmarshal(msg, &r); err != nil {
		return r, fmt.Errorf("decoding %s: %w", r, err)
	}
	return r, nil
}

// lastEventData is the data of the last event of an SSE body that has data, read by the
// event-stream standard's line ends.
func lastEventData(b []byte) []byte {
	var last []byte
	evs, _ := eventstream.Parse(b, 16<<20)
	for _, ev := range evs {
		if len(ev.Data) > 0 {
			last = ev.Data
		}
	}
	return last
}

// approve is the inputResponses that approves the gateway's confirmation.
func approve() string {
	return `{"` + confirmKey + `":{"action":"accept","content":{"approve":true}}}`
}
