// Package embeddings is the optional operator-configured embeddings endpoint behind tool search
// (docs/search.md § An embeddings endpoint): a client of the OpenAI-compatible
// POST /v1/embeddings protocol (OpenAI, Azure OpenAI, Ollama, vLLM, Hugging Face TEI, LocalAI),
// the per-replica cache of tool vectors keyed by the digest of each tool's text, the background
// embedding of each catalog version, and the guards that make a search fall back to the lexical
// ranking at once when the endpoint is down, slow, refuses, limits or answers garbage.
package embeddings

import (
	"errors"
	"net/url"
	"regexp"
	"time"

	"github.com/mcp-gateway/gateway/internal/configerr"
	"github.com/mcp-gateway/gateway/internal/loopback"
)

// Config is the embeddings endpoint (search.embeddings). Zero URL: off, and nothing is contacted.
type Config struct {
	// URL is the endpoint's full address, e.g. https://api.openai.com/v1/embeddings or
	// http://127.0.0.1:11434/v1/embeddings (Ollama). https is required except on a loopback host:
	// queries, tool descriptions and the API key travel to it. Empty: embeddings are off.
	URL string `yaml:"url"`
	// Model is the model the endpoint embeds with (the request's "model"). Required with URL.
	Model string `yaml:"model"`
	// APIKeyHeader is the header the API key is sent in: "Authorization" (the default) sends
	// "Bearer <key>"; another name (Azure OpenAI's "api-key") sends the key alone.
	APIKeyHeader string `yaml:"apiKeyHeader"`
	// Dimensions, if set, is sent as the request's "dimensions" (models that can shorten their
	// vectors) and every vector must have that many; 0: the model's own, which must not change.
	Dimensions int `yaml:"dimensions"`
	// Timeout bounds embedding one query, the part a search waits for. Default DefaultTimeout.
	Timeout time.Duration `yaml:"timeout"`
	// BatchTimeout bounds one request of tool texts, made in the background. Default
	// DefaultBatchTimeout.
	BatchTimeout time.Duration `yaml:"batchTimeout"`
	// BatchSize is how many tool texts one request carries. Default DefaultBatchSize.
	BatchSize int `yaml:"batchSize"`
	// MaxTextsPerMinute bounds what this replica sends (queries and tool texts), the cost bound:
	// past it a search ranks lexically and tool texts wait. One caller's texts, its queries and
	// its private catalogs' tool texts together, hold at most an eighth of it: past that, that
	// caller's searches rank lexically. Default DefaultMaxTextsPerMinute.
	MaxTextsPerMinute int `yaml:"maxTextsPerMinute"`
	// MaxQueriesPerCallerPerMinute bounds one caller's share of MaxTextsPerMinute on this
	// replica: past it that caller's searches rank lexically, so no caller spends everyone's
	// budget. Default DefaultMaxQueriesPerCallerPerMinute.
	MaxQueriesPerCallerPerMinute int `yaml:"maxQueriesPerCallerPerMinute"`
	// MaxConcurrent bounds this replica's requests in flight to the endpoint; a search finding
	// none free ranks lexically. Default DefaultMaxConcurrent.
	MaxConcurrent int `yaml:"maxConcurrent"`
	// MaxCacheBytes bounds the memory of this replica's cache of tool vectors (4 bytes per
	// dimension per tool text), least recently used dropped first; the vectors first embedded
	// for one caller's private catalog hold at most an eighth of it. Default
	// DefaultMaxCacheBytes.
	MaxCacheBytes int64 `yaml:"maxCacheBytes"`
	// Fusion is how the dense ranking joins the lexical one: "rrf" (reciprocal-rank fusion, the
	// default) or "blend" (scores added). See docs/search.md.
	Fusion string `yaml:"fusion"`
	// Weight is the dense ranking's weight against the lexical one's (1: equal). Default 1.
	Weight float64 `yaml:"weight"`
	// RRFK is reciprocal-rank fusion's K. Default 60.
	RRFK float64 `yaml:"rrfK"`
}

// Defaults.
const (
	DefaultTimeout           = 2 * time.Second
	DefaultBatchTimeout      = 30 * time.Second
	DefaultBatchSize         = 64
	DefaultMaxTextsPerMinute = 1200
	DefaultMaxConcurrent     = 4
	// DefaultMaxQueriesPerCallerPerMinute is a caller's share: a search every second.
	DefaultMaxQueriesPerCallerPerMinute = 60
	DefaultMaxCacheBytes                = 64 << 20
	DefaultFusion                       = FusionRRF
	DefaultWeight                       = 1.0
	DefaultRRFK                         = 60.0
	// MaxBatchSize is the largest BatchSize accepted (OpenAI takes at most 2048 inputs).
	MaxBatchSize = 2048
	// MaxDimensions is the most dimensions a vector may have.
	MaxDimensions = 16384
)

// Values of Config.Fusion.
const (
	// FusionRRF is reciprocal-rank fusion (the default).
	FusionRRF = "rrf"
	// FusionBlend adds the scaled cosine to the scaled lexical score.
	FusionBlend = "blend"
)

// Enabled reports whether an endpoint is configured.
func (c Config) Enabled() bool { return c.URL != "" }

// WithDefaults returns c with zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.APIKeyHeader == "" {
		c.APIKeyHeader = "Authorization"
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.BatchTimeout == 0 {
		c.BatchTimeout = DefaultBatchTimeout
	}
	if c.BatchSize == 0 {
		c.BatchSize = DefaultBatchSize
	}
	if c.MaxTextsPerMinute == 0 {
		c.MaxTextsPerMinute = DefaultMaxTextsPerMinute
	}
	if c.MaxConcurrent == 0 {
		c.MaxConcurrent = DefaultMaxConcurrent
	}
	if c.MaxQueriesPerCallerPerMinute == 0 {
		c.MaxQueriesPerCallerPerMinute = DefaultMaxQueriesPerCallerPerMinute
	}
	if c.MaxCacheBytes == 0 {
		c.MaxCacheBytes = DefaultMaxCacheBytes
	}
	if c.Fusion == "" {
		c.Fusion = DefaultFusion
	}
	if c.Weight == 0 {
		c.Weight = DefaultWeight
	}
	if c.RRFK == 0 {
		c.RRFK = DefaultRRFK
	}
	return c
}

// Validate reports every problem of c at once, each at its key under at (search.embeddings).
func (c Config) Validate(at string) error {
	if !c.Enabled() {
		if c.Model != "" {
			return configerr.At(at+".url", "required with model (embeddings are off without an endpoint)")
		}
		return nil
	}
	var errs []error
	add := func(key, format string, args ...any) { errs = append(errs, configerr.At(at+"."+key, format, args...)) }
	if err := checkURL(c.URL); err != nil {
		add("url", "%v", err)
	}
	if c.Model == "" {
		add("model", "required: the model the endpoint embeds with")
	}
	if c.APIKeyHeader != "" && !headerName.MatchString(c.APIKeyHeader) {
		add("apiKeyHeader", "%q: want a header name (letters, digits and '-')", c.APIKeyHeader)
	}
	if c.Dimensions < 0 || c.Dimensions > MaxDimensions {
		add("dimensions", "%d: want 0 (the model's own) to %d", c.Dimensions, MaxDimensions)
	}
	if c.Timeout < 0 {
		add("timeout", "%v: want a positive duration (0: the default)", c.Timeout)
	}
	if c.BatchTimeout < 0 {
		add("batchTimeout", "%v: want a positive duration (0: the default)", c.BatchTimeout)
	}
	if c.BatchSize < 0 || c.BatchSize > MaxBatchSize {
		add("batchSize", "%d: want 0 (the default, %d) to %d", c.BatchSize, DefaultBatchSize, MaxBatchSize)
	}
	if c.MaxTextsPerMinute < 0 {
		add("maxTextsPerMinute", "%d: want a positive number (0: the default)", c.MaxTextsPerMinute)
	}
	if c.MaxQueriesPerCallerPerMinute < 0 {
		add("maxQueriesPerCallerPerMinute", "%d: want a positive number (0: the default)", c.MaxQueriesPerCallerPerMinute)
	}
	if c.MaxConcurrent < 0 {
		add("maxConcurrent", "%d: want a positive number (0: the default)", c.MaxConcurrent)
	}
	if c.MaxCacheBytes < 0 {
		add("maxCacheBytes", "%d: want a positive number of bytes (0: the default)", c.MaxCacheBytes)
	}
	if c.Fusion != "" && c.Fusion != FusionRRF && c.Fusion != FusionBlend {
		add("fusion", "%q: want %s or %s", c.Fusion, FusionRRF, FusionBlend)
	}
	if c.Weight < 0 || c.Weight > 100 {
		add("weight", "%v: want 0 (the default, 1) to 100", c.Weight)
	}
	if c.RRFK < 0 || c.RRFK > 10000 {
		add("rrfK", "%v: want 0 (the default, 60) to 10000", c.RRFK)
	}
	return errors.Join(errs...)
}

// headerName is what apiKeyHeader may be.
var headerName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]*$`)

// checkURL refuses to send queries, tool text and a key in clear text except on loopback. Its
// errors never quote the URL, whose query or user information may hold a credential.
func checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Fragment != "" || u.User != nil {
		return errors.New("want an absolute URL without user info or fragment")
	}
	if u.Scheme == "https" {
		return nil
	}
	if u.Scheme == "http" && loopback.Host(u.Hostname()) {
		return nil
	}
	return errors.New("want https (http only on a loopback host): queries, tool descriptions and the API key travel to it")
}
