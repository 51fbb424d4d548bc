package mcptest

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Names of the default tools, prompt and resources.
const (
	ToolEcho     = "echo"
	ToolAdd      = "add"
	ToolProgress = "progress"
	ToolSlow     = "slow"
	ToolAskName  = "ask_name"
	ToolFail     = "fail"
	ToolWhoAmI   = "whoami"

	PromptGreet      = "greet"
	ResourceReadme   = "mem://readme"
	TemplateItems    = "mem://items/{id}"
	AskNameInputKey  = "name"
	AskNameState     = "ask_name/v1"
	FailText         = "failed on purpose"
	ReadmeText       = "This is the mcptest backend."
	maxProgressSteps = 1000
	maxSlowDuration  = 10 * time.Minute
	itemsURIPrefix   = "mem://items/"
)

type echoIn struct {
	Text string `json:"text" jsonschema:"the text to return"`
}

type addIn struct {
	A int `json:"a" jsonschema:"first addend"`
	B int `json:"b" jsonschema:"second addend"`
}

type addOut struct {
	Sum int `json:"sum"`
}

type progressIn struct {
	Steps int `json:"steps" jsonschema:"number of progress notifications to send"`
}

type slowIn struct {
	Ms int `json:"ms" jsonschema:"milliseconds to sleep"`
}

type askNameIn struct{}

// WhoAmI is the structuredContent of the whoami tool: the request headers a
// gateway test cares about, as the backend saw them. Credentials appear only
// as presence and scheme, never as values.
type WhoAmI struct {
	// Authorization reports whether an Authorization header arrived.
	Authorization bool `json:"authorization"`
	// AuthScheme is the scheme word of the Authorization header ("Bearer").
	AuthScheme string `json:"authScheme,omitempty"`
	// Cookie reports whether a Cookie header arrived.
	Cookie bool `json:"cookie"`
	// Headers holds, by canonical name, the values of these headers when
	// present: Mcp-Protocol-Version, Mcp-Method, Mcp-Name, Mcp-Session-Id,
	// Traceparent, Tracestate, Baggage, X-Forwarded-For, X-Request-Id and
	// User-Agent.
	Headers map[string]string `json:"headers"`
}

func whoAmIHeaders() []string {
	return []string{
		"Mcp-Protocol-Version", "Mcp-Method", "Mcp-Name", "Mcp-Session-Id",
		"Traceparent", "Tracestate", "Baggage", "X-Forwarded-For", "X-Request-Id", "User-Agent",
	}
}

func (s *Server) addDefaults() {
	mcp.AddTool(s.mcp, &mcp.Tool{Name: ToolEcho, Description: "Returns text unchanged."}, echoTool)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: ToolAdd, Description: "Adds two integers."}, addTool)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: ToolProgress, Description: "Sends steps progress notifications, then returns."}, progressTool)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: ToolSlow, Description: "Sleeps ms milliseconds or until cancelled."}, s.slowTool)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: ToolAskName, Description: "Asks for a name through MRTR, then greets."}, askNameTool)
	s.mcp.AddTool(&mcp.Tool{Name: ToolFail, Description: "Always fails with isError.", InputSchema: emptySchema()}, failTool)
	s.mcp.AddTool(&mcp.Tool{Name: ToolWhoAmI, Description: "Reports the request headers that reached the backend.", InputSchema: emptySchema()}, whoAmITool)
	s.addDefaultFeatures()
}

func emptySchema() *jsonschema.Schema { return &jsonschema.Schema{Type: "object"} }

func text(s string) []mcp.Content { return []mcp.Content{&mcp.TextContent{Text: s}} }

func echoTool(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
	return &mcp.CallToolResult{Content: text(in.Text)}, nil, nil
}

func addTool(_ context.Context, _ *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, addOut, error) {
	sum := in.A + in.B
	return &mcp.CallToolResult{Content: text(fmt.Sprint(sum))}, addOut{Sum: sum}, nil
}

func progressTool(ctx context.Context, req *mcp.CallToolRequest, in progressIn) (*mcp.CallToolResult, any, error) {
	if in.Steps < 0 || in.Steps > maxProgressSteps {
		return nil, nil, fmt.Errorf("steps must be within 0..%d", maxProgressSteps)
	}
	token := req.Params.GetProgressToken()
	for i := 1; i <= in.Steps && token != nil; i++ {
		err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
			ProgressToken: token,
			Progress:      float64(i),
			Total:         float64(in.Steps),
			Message:       fmt.Sprintf("step %d of %d", i, in.Steps),
		})
		if err != nil {
			// A JSON-response stateless server has nowhere to deliver
			// notifications; the call itself still succeeds.
			break
		}
	}
	return &mcp.CallToolResult{Content: text(fmt.Sprintf("done %d", in.Steps))}, nil, nil
}

func (s *Server) slowTool(ctx context.Context, _ *mcp.CallToolRequest, in slowIn) (*mcp.CallToolResult, any, error) {
	d := time.Duration(in.Ms) * time.Millisecond
	if d < 0 || d > maxSlowDuration {
		return nil, nil, fmt.Errorf("ms must be within 0..%d", maxSlowDuration.Milliseconds())
	}
	s.slow.update(func(st *SlowStats) { st.Started++ })
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		s.slow.update(func(st *SlowStats) { st.Completed++ })
		return &mcp.CallToolResult{Content: text(fmt.Sprintf("slept %dms", in.Ms))}, nil, nil
	case <-ctx.Done():
		s.slow.update(func(st *SlowStats) { st.Cancelled++ })
		return nil, nil, ctx.Err()
	}
}

// askNameTool is a backend-originated MRTR round trip (spec §3): without an
// accepted answer it returns input_required with a form elicitation; the
// go-sdk sets resultType because InputRequests is non-nil.
func askNameTool(_ context.Context, req *mcp.CallToolRequest, _ askNameIn) (*mcp.CallToolResult, any, error) {
	if r, ok := req.Params.InputResponses[AskNameInputKey].(*mcp.ElicitResult); ok && req.Params.RequestState == AskNameState {
		if r.Action != "accept" {
			return &mcp.CallToolResult{IsError: true, Content: text("ask_name: " + r.Action)}, nil, nil
		}
		if name, _ := r.Content["name"].(string); name != "" {
			return &mcp.CallToolResult{Content: text("Hello, " + name)}, nil, nil
		}
	}
	return &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{
			AskNameInputKey: &mcp.ElicitParams{
				Mode:    "form",
				Message: "What is your name?",
				RequestedSchema: &jsonschema.Schema{
					Type:       "object",
					Properties: map[string]*jsonschema.Schema{"name": {Type: "string"}},
					Required:   []string{"name"},
				},
			},
		},
		RequestState: AskNameState,
	}, nil, nil
}

func failTool(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{IsError: true, Content: text(FailText)}, nil
}

func whoAmITool(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	w := whoAmIFrom(req.Extra)
	return &mcp.CallToolResult{
		Content:           text(fmt.Sprintf("authorization=%t cookie=%t", w.Authorization, w.Cookie)),
		StructuredContent: w,
	}, nil
}

func whoAmIFrom(extra *mcp.RequestExtra) WhoAmI {
	w := WhoAmI{Headers: map[string]string{}}
	var h http.Header
	if extra != nil {
		h = extra.Header
	}
	if auth := h.Get("Authorization"); auth != "" {
		w.Authorization = true
		w.AuthScheme, _, _ = strings.Cut(auth, " ")
	}
	w.Cookie = h.Get("Cookie") != ""
	for _, name := range whoAmIHeaders() {
		if v := h.Get(name); v != "" {
			w.Headers[name] = v
		}
	}
	return w
}

// SlowStats counts the slow tool's calls on one server.
type SlowStats struct {
	// Started counts calls that began sleeping.
	Started int
	// Completed counts calls that slept their full duration.
	Completed int
	// Cancelled counts calls whose context ended first, for example because
	// the response stream was closed (spec §2.1: closing is cancellation).
	Cancelled int
}

// SlowStats returns the slow tool's counters.
func (s *Server) SlowStats() SlowStats {
	s.slow.mu.Lock()
	defer s.slow.mu.Unlock()
	return s.slow.stats
}

// WaitSlow blocks until cond holds for the slow tool's counters or ctx ends,
// whose error it then returns. Use it to wait for a call to start before
// cancelling it, and for the backend to notice the cancellation.
func (s *Server) WaitSlow(ctx context.Context, cond func(SlowStats) bool) error {
	for {
		s.slow.mu.Lock()
		st, changed := s.slow.stats, s.slow.changed
		s.slow.mu.Unlock()
		if cond(st) {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("waiting for slow stats (now %+v): %w", st, ctx.Err())
		}
	}
}

func (t *slowTracker) update(f func(*SlowStats)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	f(&t.stats)
	close(t.changed)
	t.changed = make(chan struct{})
}

// WithRegionTool adds "region", a tool that mirrors its region and count arguments into
// Mcp-Param-Region and Mcp-Param-Count and reports the headers it received.
func WithRegionTool() Option {
	tool := &mcp.Tool{Name: "region", InputSchema: map[string]any{"type": "object", "properties": map[string]any{
		"region": map[string]any{"type": "string", "x-mcp-header": "Region"},
		"count":  map[string]any{"type": "integer", "x-mcp-header": "Count"},
	}}}
	return WithTool(tool, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		h := req.Extra.Header
		text := "region=" + strings.Join(h.Values("Mcp-Param-Region"), ",") + " count=" + strings.Join(h.Values("Mcp-Param-Count"), ",")
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
	})
}
