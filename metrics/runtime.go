package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// RegisterRuntime registers the Go runtime and process collectors on reg, the
// series every Go service is expected to expose next to its own.
func RegisterRuntime(reg prometheus.Registerer) error {
	return registerAll(reg, []prometheus.Collector{
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	})
}
