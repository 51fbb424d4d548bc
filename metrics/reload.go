package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Values of the result label of mcp_gateway_config_reloads_total.
const (
	ReloadSuccess = "success"
	ReloadFailure = "failure"
)

// ReloadResults is the closed set of the result label of mcp_gateway_config_reloads_total.
func ReloadResults() []string { return []string{ReloadSuccess, ReloadFailure} }

// Reloads records configuration reloads (SIGHUP): how many were applied or refused, whether the
// last one was applied, when the running configuration was, and whether a restart is still
// needed for some of it.
type Reloads struct {
	total           *prometheus.CounterVec
	lastSuccess     prometheus.Gauge
	lastSuccessful  prometheus.Gauge
	restartRequired prometheus.Gauge
	waits           prometheus.Counter
	hash            prometheus.Gauge
}

// NewReloads registers the reload metrics on reg, as of a start-up at started: its
// configuration applied, no reload tried yet.
func NewReloads(reg prometheus.Registerer, started time.Time) (*Reloads, error) {
	r := &Reloads{
		total: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcp_gateway_config_reloads_total",
			Help: "Configuration reloads (SIGHUP) by result: success (applied) or failure (refused; the running configuration stays).",
		}, []string{"result"}),
		lastSuccess: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "mcp_gateway_config_last_reload_success_timestamp_seconds",
			Help: "When the running configuration was applied: the start-up or the last successful reload (Unix seconds).",
		}),
		lastSuccessful: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "mcp_gateway_config_last_reload_successful",
			Help: "1 when the last reload was applied (or none was tried), 0 when it was refused.",
		}),
		restartRequired: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "mcp_gateway_config_restart_required",
			Help: "1 when the last applied reload changed settings that take effect only on a restart (logged by name).",
		}),
		waits: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "mcp_gateway_config_reload_waits_total",
			Help: "Reloads that waited for the configuration replaced before to finish its requests, so that at most two are live, and reloads asked for again during such a wait (counted once per wait).",
		}),
		hash: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "mcp_gateway_config_hash",
			Help: "The first 48 bits of the SHA-256 of the configuration file the running configuration was read from, as a number (0 when none was read): replicas that applied the same file show the same value.",
		}),
	}
	for _, res := range ReloadResults() {
		r.total.WithLabelValues(res)
	}
	r.lastSuccess.Set(float64(started.UnixNano()) / 1e9)
	r.lastSuccessful.Set(1)
	for _, c := range []prometheus.Collector{r.total, r.lastSuccess, r.lastSuccessful, r.restartRequired, r.waits, r.hash} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Applied records a reload applied at now.
func (r *Reloads) Applied(now time.Time) {
	r.total.WithLabelValues(ReloadSuccess).Inc()
	r.lastSuccessful.Set(1)
	r.lastSuccess.Set(float64(now.UnixNano()) / 1e9)
}

// Refused records a reload refused: the running configuration stays.
func (r *Reloads) Refused() {
	r.total.WithLabelValues(ReloadFailure).Inc()
	r.lastSuccessful.Set(0)
}

// RestartRequired records whether the last applied reload left settings for a restart.
func (r *Reloads) RestartRequired(needed bool) {
	v := 0.0
	if needed {
		v = 1
	}
	r.restartRequired.Set(v)
}

// Waited records a reload that waited for an older configuration's requests to finish.
func (r *Reloads) Waited() { r.waits.Inc() }

// Serving records the SHA-256 of the configuration file the running configuration was read
// from, nil when it was read from none: its first 48 bits, which a float64 holds exactly.
func (r *Reloads) Serving(sum []byte) {
	var v uint64
	if len(sum) >= 6 {
		for _, b := range sum[:6] {
			v = v<<8 | uint64(b)
		}
	}
	r.hash.Set(float64(v))
}
