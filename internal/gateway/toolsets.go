package gateway

import (
	"fmt"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcp-gateway/gateway/internal/configerr"
	"github.com/mcp-gateway/gateway/mcphttp"
	"github.com/mcp-gateway/gateway/metrics"
)

// newToolsetRecorder registers the tool search metrics (docs/toolsets.md) on reg, labelled by
// the configured tool sets and backends only.
func newToolsetRecorder(cfg *Config, reg *prometheus.Registry) (*metrics.ToolsetRecorder, error) {
	sets := make([]string, 0, len(cfg.Toolsets))
	for _, ts := range cfg.Toolsets {
		sets = append(sets, ts.Name)
	}
	names := make([]string, 0, len(cfg.Upstreams))
	for _, u := range cfg.Upstreams {
		names = append(names, u.Name)
	}
	return metrics.NewToolsets(reg, metrics.ToolsetOptions{Sets: sets, Upstreams: names})
}

// onTools is the registry's OnTools hook: each backend's published tool names become the
// allowlist of the tool label of the tool-call metrics and of call_tool's inner calls.
func (g *gateway) onTools(rec *metrics.Recorder) func(upstream string, tools []string) {
	return func(upstream string, tools []string) {
		rec.SetKnownTools(upstream, tools)
		g.searchRec.SetKnownTools(upstream, tools)
	}
}

// validateToolsetUpstreams refuses a tool set rule whose upstream glob names no configured
// backend: it could never select anything, and is most likely a misspelt name.
func (c *Config) validateToolsetUpstreams() []error {
	names := make([]string, 0, len(c.Upstreams))
	for _, u := range c.Upstreams {
		names = append(names, u.Name)
	}
	var errs []error
	for i, ts := range c.Toolsets {
		for _, g := range ts.UnmatchedUpstreams(names) {
			errs = append(errs, configerr.At(fmt.Sprintf("toolsets[%d].include", i), "upstream %q matches no configured backend", g))
		}
	}
	return errs
}

// validateMetaToolNames refuses a backend whose name, joined by the namespace separator to a
// tool name, can spell a meta-tool's name (backend "find" with separator "_": its tool "tools"
// would be find_tools) while search mode is on anywhere: on a search endpoint that name always
// reaches the meta-tool. Backend names are known now; backend tool names are not, so a tool
// named like a meta-tool under namespace.noPrefix is hidden at run time instead (mcphttp).
func (c *Config) validateMetaToolNames() []error {
	if c.Namespace.NoPrefix || !c.searchEnabled() {
		return nil
	}
	sep := c.Namespace.SeparatorOrDefault()
	var errs []error
	for i, u := range c.Upstreams {
		for _, m := range mcphttp.MetaToolNames() {
			if p := u.Name + sep; len(m) > len(p) && strings.HasPrefix(m, p) {
				errs = append(errs, configerr.At(fmt.Sprintf("upstreams[%d].name", i), "%q: with namespace.separator %q its tool %q would be named %q, "+
					"the name of a search meta-tool; rename the backend or choose another separator", u.Name, sep, m[len(p):], m))
			}
		}
	}
	return errs
}

// searchEnabled reports whether any endpoint serves search mode.
func (c *Config) searchEnabled() bool {
	if c.Server.Search.Enabled {
		return true
	}
	for _, ts := range c.Toolsets {
		if ts.Search.Enabled {
			return true
		}
	}
	return false
}
