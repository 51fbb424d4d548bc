package gateway

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcp-gateway/gateway/internal/configerr"
	"github.com/mcp-gateway/gateway/internal/intercept"
	"github.com/mcp-gateway/gateway/metrics"
)

// InterceptorConfig is one interceptor as written in the file (docs/interceptors.md): every
// setting of intercept.Config, with the header values and the OAuth client secret given as
// secrets (file, env or value). The embedded Headers and Auth are filled only when the secrets
// are resolved (interceptorConfigs).
type InterceptorConfig struct {
	intercept.Config `yaml:",inline"`
	// Headers are static headers sent on every request to the interceptor, typically its own
	// Authorization; each value is a secret.
	Headers map[string]Secret `yaml:"headers"`
	// Auth makes the gateway get its own OAuth token for the interceptor (clientCredentials).
	Auth UpstreamAuth `yaml:"auth"`
}

// interceptorConfigs converts the file form to intercept.Config, each secret resolved by
// resolve (or replaced by a placeholder, for validation only). Errors name the setting, never
// the value.
func (c *Config) interceptorConfigs(resolve func(Secret) (string, error)) ([]intercept.Config, error) {
	out := make([]intercept.Config, 0, len(c.Interceptors))
	var errs []error
	for i, ic := range c.Interceptors {
		cfg := ic.Config
		cfg.Auth = ic.Auth.AuthConfig
		if !ic.Auth.ClientSecret.IsZero() {
			v, err := resolve(ic.Auth.ClientSecret)
			if err != nil {
				errs = append(errs, fmt.Errorf("interceptors[%d].auth.clientSecret: %w", i, err))
			}
			cfg.Auth.ClientSecret = v
		}
		if len(ic.Headers) > 0 {
			cfg.Headers = make(map[string]string, len(ic.Headers))
		}
		for _, h := range sortedKeys(ic.Headers) {
			v, err := resolve(ic.Headers[h])
			if err != nil {
				errs = append(errs, fmt.Errorf("interceptors[%d].headers.%s: %w", i, h, err))
			}
			cfg.Headers[h] = v
		}
		out = append(out, cfg)
	}
	return out, errors.Join(errs...)
}

// placeholderSecret stands in for a configured secret when the configuration is validated
// without reading secret files.
func placeholderSecret(Secret) (string, error) { return "placeholder", nil }

// validateInterceptors checks the interceptors: block as intercept validates it, and each rule
// against the backends it could govern.
func (c *Config) validateInterceptors() []error {
	cs, _ := c.interceptorConfigs(placeholderSecret)
	var errs []error
	if err := intercept.ValidateAnswerBudget(c.Server.MaxInterceptorAnswerBytesInFlight, cs); err != nil {
		errs = append(errs, fmt.Errorf("server.maxInterceptorAnswerBytesInFlight: %w", err))
	}
	if len(c.Interceptors) == 0 {
		return errs
	}
	errs = append(errs, configerr.List(intercept.Validate(cs))...)
	names := c.upstreamNames()
	for i, ic := range c.Interceptors {
		for j, r := range ic.Rules {
			errs = append(errs, unmatchedUpstream(names, fmt.Sprintf("interceptors[%d].rules[%d].upstream", i, j), r.Upstream)...)
		}
	}
	return errs
}

// interceptorSecretRefs lists the interceptors' secrets, for secretRefs.
func (c *Config) interceptorSecretRefs(add func(path string, s Secret, optional bool)) {
	for i, ic := range c.Interceptors {
		for _, h := range sortedKeys(ic.Headers) {
			add(fmt.Sprintf("interceptors[%d].headers.%s", i, h), ic.Headers[h], false)
		}
		add(fmt.Sprintf("interceptors[%d].auth.clientSecret", i), ic.Auth.ClientSecret, true)
	}
}

// checkInterceptorTLS loads each interceptor's TLS files, as building the gateway will.
func (c *Config) checkInterceptorTLS() []error {
	var errs []error
	for i, ic := range c.Interceptors {
		at := fmt.Sprintf("interceptors[%d].tls", i)
		errs = append(errs, fileErrors(at, tlsFiles(at, ic.TLS.CAFile, ic.TLS.CertFile, ic.TLS.KeyFile), ic.TLS.CheckFiles(ic.URL))...)
	}
	return errs
}

// interceptorNames lists the configured interceptors' names, in configuration order.
func (c *Config) interceptorNames() []string {
	out := make([]string, 0, len(c.Interceptors))
	for _, ic := range c.Interceptors {
		out = append(out, ic.Name)
	}
	return out
}

// newInterceptorRecorder registers the interceptor metrics, labelled by the interceptors of the
// configuration the process starts with; nil when it has none (and then a reload that adds some
// counts nothing until a restart, as newLabels says).
func newInterceptorRecorder(cfg *Config, reg prometheus.Registerer) (*metrics.Interceptors, error) {
	if len(cfg.Interceptors) == 0 {
		return nil, nil
	}
	return metrics.NewInterceptors(reg, cfg.interceptorNames())
}

// buildInterceptors compiles the interceptors of cfg with their secrets; nil when there are
// none, so the request path carries nothing.
func (g *gateway) buildInterceptors(cfg *Config) (*intercept.Set, error) {
	if len(cfg.Interceptors) == 0 {
		return nil, nil
	}
	cs, err := cfg.interceptorConfigs(func(s Secret) (string, error) { return s.resolve(g.getenv) })
	if err != nil {
		return nil, err
	}
	deps := intercept.Deps{Log: g.log, CaseInsensitive: caseInsensitiveUpstreams(cfg.Upstreams),
		CallerCircuit:          g.callerCircuits.hook(breakerInterceptor),
		MaxAnswerBytesInFlight: cfg.Server.MaxInterceptorAnswerBytesInFlight}
	if g.interceptRec != nil {
		deps.Metrics = interceptorMetrics{g.interceptRec}
	}
	return intercept.New(cs, deps)
}

// interceptorMetrics records the interceptors with their circuit states on the gauge scale of
// the upstreams' circuits (circuitGauge), so one dashboard reads both alike.
type interceptorMetrics struct{ *metrics.Interceptors }

// CircuitState maps the breaker's state before recording it.
func (m interceptorMetrics) CircuitState(interceptor string, state int) {
	m.Interceptors.CircuitState(interceptor, circuitGauge(state))
}
