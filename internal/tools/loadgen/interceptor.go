package loadgen

import (
	"context"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// InterceptorExtension is the extension identifier an Interceptor Server declares (SEP-2624).
const InterceptorExtension = "io.modelcontextprotocol/interceptors"

// invokeParams are the members of interceptor/invoke the allowing interceptor reads; the others
// (event, payload, config, timeoutMs, context) are taken and ignored.
type invokeParams struct {
	mcp.ParamsBase
	Name  string `json:"name"`
	Phase string `json:"phase"`
}

// validationResult is SEP-2624's ValidationResult.
type validationResult struct {
	mcp.ResultBase
	Interceptor string `json:"interceptor"`
	Type        string `json:"type"`
	Phase       string `json:"phase"`
	Valid       bool   `json:"valid"`
}

// NewInterceptor returns an Interceptor Server, on the official Go SDK's stateless Streamable
// HTTP transport, that allows every invocation: each interceptor/invoke is answered with a valid
// ValidationResult naming the interceptor and phase it was asked about, whatever the payload.
// It is the interceptor of .ci/bench's interceptors scenario, where what is measured is what
// asking one costs the gateway (the invocation's encoding, the round trip, the checks of the
// answer), not a policy. It keeps no state per invocation.
func NewInterceptor() (http.Handler, error) {
	caps := &mcp.ServerCapabilities{}
	caps.AddExtension(InterceptorExtension, map[string]any{"supportedEvents": []string{"tools/call", "prompts/get", "resources/read"}})
	srv := mcp.NewServer(&mcp.Implementation{Name: "mcpload-interceptor", Version: "1.0.0"}, &mcp.ServerOptions{Capabilities: caps})
	err := mcp.AddReceivingCustomMethod(srv, "interceptor/invoke",
		func(_ context.Context, _ *mcp.ServerSession, p *invokeParams) (*validationResult, error) {
			return &validationResult{Interceptor: p.Name, Type: "validation", Phase: p.Phase, Valid: true}, nil
		})
	if err != nil {
		return nil, err
	}
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: true}), nil
}
