package mcptest

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCP Apps (SEP-1865) shapes exactly as the ext-apps specification (stable 2026-01-26) documents
// them, for a backend that serves an app: the UI resource, a tool that renders it, and the tools
// its app calls.

// Names and values of the app WithApp serves.
const (
	// AppMIMEType is the UI resource's mimeType (RESOURCE_MIME_TYPE of the ext-apps helpers).
	AppMIMEType = "text/html;profile=mcp-app"
	// AppShowTool renders the app: _meta.ui.resourceUri (and the deprecated flat
	// ui/resourceUri), visibility left to its default (["model","app"]).
	AppShowTool = "show_dashboard"
	// AppRefreshTool is app-only: visibility ["app"].
	AppRefreshTool = "refresh_dashboard"
	// AppModelTool is model-only: visibility ["model"], an app must not call it.
	AppModelTool = "explain_dashboard"
	// AppConnectDomain and AppResourceDomain are the UI resource's CSP domains.
	AppConnectDomain  = "https://api.weather.example"
	AppResourceDomain = "https://cdn.weather.example"
	// AppHTML is the UI resource's text.
	AppHTML = "<!DOCTYPE html><html><body>dashboard</body></html>"
)

// AppViewURI is the UI resource of the app WithApp(view) serves, as its backend names it.
func AppViewURI(view string) string { return "ui://" + view + "/dashboard.html" }

// AppUIMeta is the _meta of the UI resource WithApp serves, on its resources/list entry and on
// its read content item: _meta.ui with the CSP domains, a permission, a sandbox domain and
// prefersBorder.
func AppUIMeta() mcp.Meta {
	return mcp.Meta{"ui": map[string]any{
		"csp":           map[string]any{"connectDomains": []any{AppConnectDomain}, "resourceDomains": []any{AppResourceDomain}},
		"permissions":   map[string]any{"clipboardWrite": map[string]any{}},
		"domain":        "a904794854a047f6.example.com",
		"prefersBorder": true,
	}}
}

// WithApp makes the server serve an MCP App whose UI resource is AppViewURI(view): the resource
// (listed with _meta.ui.csp, read with the same _meta.ui on its content item) and the three
// tools AppShowTool, AppRefreshTool and AppModelTool, each answering "<tool> of <view>".
func WithApp(view string) Option {
	uri := AppViewURI(view)
	uiMeta := AppUIMeta()
	tool := func(name string, visibility []any) *mcp.Tool {
		ui := map[string]any{"resourceUri": uri}
		if visibility != nil {
			ui["visibility"] = visibility
		}
		meta := mcp.Meta{"ui": ui}
		if name == AppShowTool {
			meta["ui/resourceUri"] = uri // what the ext-apps helpers write next to ui.resourceUri
		}
		return &mcp.Tool{Name: name, Description: name + " of the " + view + " app",
			InputSchema: map[string]any{"type": "object"}, Meta: meta}
	}
	answer := func(name string) mcp.ToolHandler {
		return func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name + " of " + view}},
				Meta: mcp.Meta{"ui": map[string]any{"resourceUri": uri}}}, nil
		}
	}
	read := func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: AppMIMEType, Text: AppHTML, Meta: uiMeta}}}, nil
	}
	return func(c *serverConfig) {
		WithTool(tool(AppShowTool, nil), answer(AppShowTool))(c)
		WithTool(tool(AppRefreshTool, []any{"app"}), answer(AppRefreshTool))(c)
		WithTool(tool(AppModelTool, []any{"model"}), answer(AppModelTool))(c)
		WithResource(&mcp.Resource{URI: uri, Name: view + " dashboard", MIMEType: AppMIMEType, Meta: uiMeta}, read)(c)
	}
}
