package tracing

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
)

// Probe sends the collector one export request that carries no span, as serve's exporter would
// send a batch: to the same URL, with the same headers, compression, timeout and HTTP client.
// A collector that is there but would refuse every batch (a wrong path, a refused or missing
// credential header, something that is not an OTLP/HTTP receiver) fails it, where a connection
// alone would pass and serve would then lose its spans with only a log line to show for it. It
// does not retry: the answer to this one request is the result. An empty export is a request
// the OTLP specification defines and a collector acknowledges without storing anything.
func Probe(ctx context.Context, cfg Config) error {
	if !cfg.Enabled() {
		return errors.New("no endpoint configured")
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	cfg = cfg.WithDefaults()
	client := exportClient(cfg)
	defer client.CloseIdleConnections()
	opts := append(exporterOptions(cfg, client), otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}))
	c := otlptracehttp.NewClient(opts...)
	if err := c.Start(ctx); err != nil {
		return err
	}
	defer func() { _ = c.Stop(context.Background()) }()
	return c.UploadTraces(ctx, nil)
}
