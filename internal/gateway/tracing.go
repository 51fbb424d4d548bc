package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/mcp-gateway/gateway/internal/configerr"
	"github.com/mcp-gateway/gateway/internal/tracing"
)

// tracingShutdownTimeout bounds flushing the last spans when the gateway stops.
const tracingShutdownTimeout = 5 * time.Second

// TracingConfig is the tracing: block: OpenTelemetry span export over OTLP/HTTP, off unless
// an endpoint is set. It is tracing.Config, every setting as that package defines it, with
// header values given as secrets (file, env or value).
type TracingConfig struct {
	tracing.Config `yaml:",inline"`
	// Headers are sent with every export, e.g. a collector API key (file, env or value).
	Headers map[string]Secret `yaml:"headers"`
}

// config returns the block as tracing.Config with the given header values and the build's
// version.
func (c TracingConfig) config(version string, headers map[string]string) tracing.Config {
	out := c.Config
	out.ServiceVersion, out.Headers = version, headers
	return out
}

// validate checks the block without reading secrets: header values stand in as placeholders.
func (c TracingConfig) validate() []error {
	var errs []error
	placeholders := make(map[string]string, len(c.Headers))
	for h := range c.Headers {
		placeholders[h] = "placeholder"
	}
	if len(c.Headers) > 0 && c.Endpoint == "" {
		errs = append(errs, configerr.At("tracing.headers", "set without tracing.endpoint, where they would be sent"))
	}
	if err := c.config("", placeholders).Validate(); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// newTracer resolves the header secrets and builds the tracer; a no-op without an endpoint.
func (c TracingConfig) newTracer(version string, getenv func(string) string, log *slog.Logger) (*tracing.Tracer, error) {
	cfg, err := c.resolve(version, getenv)
	if err != nil {
		return nil, err
	}
	return tracing.New(cfg, log)
}

// resolve returns the block as tracing.Config with its header secrets read.
func (c TracingConfig) resolve(version string, getenv func(string) string) (tracing.Config, error) {
	headers := make(map[string]string, len(c.Headers))
	var errs []error
	for h, s := range c.Headers {
		v, err := s.resolve(getenv)
		if err != nil {
			errs = append(errs, fmt.Errorf("tracing.headers.%s: %w", h, err))
			continue
		}
		headers[h] = v
	}
	if err := errors.Join(errs...); err != nil {
		return tracing.Config{}, err
	}
	return c.config(version, headers), nil
}

// shutdownTracer flushes the spans still batched, within tracingShutdownTimeout.
func shutdownTracer(t *tracing.Tracer, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), tracingShutdownTimeout)
	defer cancel()
	if err := t.Shutdown(ctx); err != nil {
		log.Warn("flushing trace spans failed", "error", err)
	}
}
