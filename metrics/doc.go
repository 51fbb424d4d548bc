// Package metrics is the gateway's typed Prometheus recorder.
//
// Every metric is registered on a registry the caller injects; nothing is
// global. Label values come only from closed sets: the MCP methods of
// revision 2026-07-28, the gateway's one outcome set (internal/outcome), the
// reason and event constants of this package, the configured upstream names,
// and per-upstream tool allowlists. Any other
// value folds into Other, so request data can never mint a series. The hot
// path resolves each series once and then increments it through an atomic
// load, without allocating.
package metrics
