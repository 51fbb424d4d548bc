// Package appsbackend runs an MCP Apps backend built on the official ext-apps server helpers
// (@modelcontextprotocol/ext-apps registerAppTool and registerAppResource, over the TypeScript
// SDK v2 server, which serves 2026-07-28 and falls back to stateless 2025 serving), for the
// gateway's MCP Apps tests. node/server.mjs is the backend; node/package-lock.json pins what
// .ci/setup installs into the cache (apps-backend).
package appsbackend

import (
	_ "embed"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/nodecache"
)

// The pinned releases node/package-lock.json installs.
const (
	// ExtAppsVersion is the @modelcontextprotocol/ext-apps release.
	ExtAppsVersion = "2.0.4"
	// ServerVersion is the @modelcontextprotocol/server (TypeScript SDK v2) release.
	ServerVersion = "2.4.0"
)

// MIMEType is the UI resources' mimeType (RESOURCE_MIME_TYPE of the helpers).
const MIMEType = "text/html;profile=mcp-app"

// The CSP domains the UI resource declares.
const (
	ConnectDomain  = "https://api.weather.example"
	ResourceDomain = "https://cdn.weather.example"
)

//go:embed node/server.mjs
var script []byte

// Backend is one running backend.
type Backend struct {
	// URL is its MCP endpoint.
	URL string
	// Name is the server name it answers with, View the name of its app: its UI resource is
	// ViewURI, its tools Show, Refresh (app-only) and Explain (model-only).
	Name, View string
}

// ViewURI is the app's UI resource as the backend names it.
func (b *Backend) ViewURI() string { return "ui://" + b.View + "/view.html" }

// Show is the tool that renders the app (visibility left to its default, ["model","app"]).
func (b *Backend) Show() string { return "show_" + b.View }

// Refresh is the app-only tool (visibility ["app"]).
func (b *Backend) Refresh() string { return "refresh_" + b.View }

// Explain is the model-only tool (visibility ["model"]).
func (b *Backend) Explain() string { return "explain_" + b.View }

// Answer is what tool answers for city (the tools' text).
func (b *Backend) Answer(tool, city string) string { return tool + " " + city + " from " + b.Name }

// Start runs the backend named name serving the app view until the test ends; it fails the test
// when .ci/setup has not installed Node and the packages.
func Start(tb testing.TB, name, view string) *Backend {
	tb.Helper()
	node, modules := nodeAndModules(tb)
	dir := tb.TempDir()
	// The script resolves its packages from its own directory: it runs next to a link to the
	// installed node_modules, so the repository holds the script and the cache the packages.
	if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "server.mjs"), script, 0o600); err != nil {
		tb.Fatal(err)
	}
	url := nodecache.StartServer(tb, "apps backend "+name, node, filepath.Join(dir, "server.mjs"), name, view)
	return &Backend{URL: url, Name: name, View: view}
}

// nodeAndModules returns Node 22 and the installed node_modules, failing when .ci/setup has not
// installed them.
func nodeAndModules(tb testing.TB) (node, modules string) {
	tb.Helper()
	node, dir := nodecache.Require(tb, "the MCP Apps backend", "apps-backend", "node_modules/@modelcontextprotocol/ext-apps/package.json")
	return node, filepath.Join(dir, "node_modules")
}
