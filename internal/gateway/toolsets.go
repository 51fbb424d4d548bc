package gateway

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcp-gateway/gateway/internal/configerr"
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
