package gateway

import (
	"github.com/mcp-gateway/gateway/internal/embeddings"
	"github.com/mcp-gateway/gateway/metrics"
)

// SearchConfig is what tool search shares across every search endpoint (each endpoint's search
// mode is server.search or a tool set's search).
type SearchConfig struct {
	// Embeddings is an operator-configured embeddings endpoint whose ranking is fused with the
	// lexical one (docs/search.md § An embeddings endpoint). Off unless url is set: queries and
	// tool descriptions then leave the gateway for it.
	Embeddings EmbeddingsConfig `yaml:"embeddings"`
}

// EmbeddingsConfig is the endpoint as embeddings.Config defines it, with its API key.
type EmbeddingsConfig struct {
	embeddings.Config `yaml:",inline"`
	// APIKey is the endpoint's key (value, file or env); absent: none is sent (Ollama, TEI and
	// vLLM often need none).
	APIKey Secret `yaml:"apiKey"`
}

// validate reports every problem of the endpoint's settings.
func (c SearchConfig) validate() []error {
	if err := c.Embeddings.Validate("search.embeddings"); err != nil {
		return []error{err}
	}
	return nil
}

// buildEmbedder builds the embeddings endpoint's client, or nil when it is off; its metrics are
// registered with the first configuration that turns it on.
func (g *gateway) buildEmbedder(cfg *Config) (*embeddings.Embedder, error) {
	ec := cfg.Search.Embeddings
	if !ec.Enabled() {
		return nil, nil
	}
	key, err := ec.apiKey(g.getenv)
	if err != nil {
		return nil, err
	}
	if g.embedRec == nil {
		if g.embedRec, err = metrics.NewEmbeddings(g.registry); err != nil {
			return nil, err
		}
	}
	return embeddings.New(ec.Config, key, embeddings.Deps{Log: g.log, Observer: g.embedRec,
		CacheEvicted: g.rec.SearchVectorEviction}), nil
}

// apiKey is the endpoint's key, "" when none is configured; serving and check-config --online
// both read it here, so the probe sends what searches will.
func (c EmbeddingsConfig) apiKey(getenv func(string) string) (string, error) {
	if c.APIKey.IsZero() {
		return "", nil
	}
	return c.APIKey.resolve(getenv)
}
