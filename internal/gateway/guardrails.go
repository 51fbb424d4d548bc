package gateway

import (
	"github.com/mcp-gateway/gateway/internal/guardrails"
	"github.com/mcp-gateway/gateway/metrics"
)

// buildGuardrails compiles a configuration's guardrails (docs/guardrails.md): nil without rules,
// so the endpoint runs none. Their metrics are registered with the first configuration that has
// rules and kept across reloads (their labels do not name rules).
func (g *gateway) buildGuardrails(cfg *Config) (*guardrails.Engine, error) {
	e, err := guardrails.New(&cfg.Guardrails)
	if err != nil || e == nil {
		return nil, err
	}
	e.SetCaseInsensitive(caseInsensitiveUpstreams(cfg.Upstreams))
	if g.railRec == nil {
		if g.railRec, err = metrics.NewGuardrails(g.registry); err != nil {
			return nil, err
		}
	}
	return e, nil
}
