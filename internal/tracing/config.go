// Package tracing exports OpenTelemetry spans over OTLP/HTTP: one server span per client
// request and one client span per backend call. It is off by default; a Tracer built from a
// Config without an endpoint is a no-op that costs nothing per request.
package tracing

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/mcp-gateway/gateway/internal/configerr"
)

// Defaults for Config when an endpoint is set.
const (
	// DefaultServiceName is the service.name resource attribute.
	DefaultServiceName = "mcp-gateway"
	// DefaultSampleRatio samples every trace the gateway starts.
	DefaultSampleRatio = 1.0
	// DefaultTimeout bounds one export request to the collector.
	DefaultTimeout = 10 * time.Second
	// tracesPath is appended to the endpoint, as OTEL_EXPORTER_OTLP_ENDPOINT does for the
	// traces signal (OTLP specification, "OTLP/HTTP").
	tracesPath = "/v1/traces"
)

// ErrInvalidConfig is wrapped by every error Validate reports.
var ErrInvalidConfig = errors.New("tracing: invalid configuration")

// Config selects where spans go. The zero value disables tracing. The YAML keys are those of
// the gateway's tracing: block.
type Config struct {
	// Endpoint is the collector's OTLP/HTTP base URL, e.g. http://collector:4318; spans are
	// posted to its path plus /v1/traces. Empty (the default) disables tracing.
	Endpoint string `yaml:"endpoint"`
	// ServiceName is the service.name resource attribute. Default DefaultServiceName.
	ServiceName string `yaml:"serviceName"`
	// ServiceVersion is the service.version resource attribute: the build version, set by the
	// caller rather than by the operator, so never read from YAML. Optional.
	ServiceVersion string `yaml:"-"`
	// SampleRatio is the fraction, in (0, 1], of traces the gateway starts itself (the caller
	// sent no traceparent) that are exported. A caller's trace is exported exactly when the
	// caller sampled it (parent-based sampling). Zero selects DefaultSampleRatio.
	SampleRatio float64 `yaml:"sampleRatio"`
	// Headers are sent with every export request, e.g. an API key for a hosted collector.
	// Values are resolved secrets; they are never logged, and not read from YAML, where the
	// caller's file form gives them as secrets.
	Headers map[string]string `yaml:"-"`
	// Insecure allows an http:// endpoint, over which spans and Headers travel unencrypted.
	// Without it the endpoint must be https://. Default false.
	Insecure bool `yaml:"insecure"`
	// Timeout bounds one export request. Default DefaultTimeout.
	Timeout time.Duration `yaml:"timeout"`
}

// Enabled reports whether c exports spans.
func (c Config) Enabled() bool { return c.Endpoint != "" }

// WithDefaults returns c with zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.ServiceName == "" {
		c.ServiceName = DefaultServiceName
	}
	if c.SampleRatio == 0 {
		c.SampleRatio = DefaultSampleRatio
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	return c
}

// Validate reports every problem in c, each a *configerr.Error naming the setting's key path
// in the gateway's configuration file (tracing.endpoint) and matching ErrInvalidConfig. Errors
// name headers, never their values.
func (c Config) Validate() error {
	if !c.Enabled() {
		return nil
	}
	var errs []error
	add := func(path, format string, args ...any) {
		errs = append(errs, configerr.Of(ErrInvalidConfig, path, format, args...))
	}
	if err := c.validateEndpoint(); err != nil {
		add("tracing.endpoint", "%v", err)
	}
	if c.SampleRatio < 0 || c.SampleRatio > 1 {
		add("tracing.sampleRatio", "%v: want a fraction in (0, 1]", c.SampleRatio)
	}
	if c.Timeout < 0 {
		add("tracing.timeout", "must not be negative")
	}
	names := make([]string, 0, len(c.Headers))
	for name := range c.Headers {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if !httpguts.ValidHeaderFieldName(name) {
			add("tracing.headers."+name, "%q is not a header name", name)
		} else if v := c.Headers[name]; !httpguts.ValidHeaderFieldValue(v) || v == "" {
			add("tracing.headers."+name, "the value is empty or not a valid header value")
		}
	}
	return errors.Join(errs...)
}

func (c Config) validateEndpoint() error {
	u, err := url.Parse(c.Endpoint)
	switch {
	case err != nil:
		return errors.New("does not parse as a URL") // url.Parse would quote it, credentials included
	case u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "":
		return errors.New("want scheme://host[:port][/path] without credentials, query or fragment")
	case u.Scheme == "http" && !c.Insecure:
		return errors.New("plain http: set tracing.insecure to send spans unencrypted")
	case u.Scheme == "https" && c.Insecure:
		return errors.New("https, but tracing.insecure (for http:// endpoints) is set")
	case u.Scheme != "http" && u.Scheme != "https":
		return errors.New("want an http or https URL")
	case strings.HasSuffix(trimSlash(u.Path), tracesPath):
		// The URL OTEL_EXPORTER_OTLP_TRACES_ENDPOINT takes, not the base: every export would
		// go to .../v1/traces/v1/traces and be refused.
		return fmt.Errorf("its path ends in %s, which the gateway adds: want the collector's base URL, such as http://collector:4318",
			tracesPath)
	}
	return nil
}

// exportURL is the URL spans are posted to: the endpoint's path plus /v1/traces.
func (c Config) exportURL() string {
	u, _ := url.Parse(c.Endpoint) // validated
	u.Path = trimSlash(u.Path) + tracesPath
	return u.String()
}

func trimSlash(p string) string {
	for len(p) > 0 && p[len(p)-1] == '/' {
		p = p[:len(p)-1]
	}
	return p
}
