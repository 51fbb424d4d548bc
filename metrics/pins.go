package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcp-gateway/gateway/internal/pins"
)

// NamePinDrift counts tool-definition drift the gateway detected, once per change of an item
// (not per request), per class (docs/pinning.md).
const NamePinDrift = "mcp_gateway_pin_drift_total"

// NamePinRestoreWaits counts the first contacts of a backend held back by pins.restoreWindow
// (a new shared store, or one that lost its data), once per backend and store memory on each
// replica: its items are withheld meanwhile, which is not drift (docs/pinning.md).
const NamePinRestoreWaits = "mcp_gateway_pin_restore_waits_total"

// PinClasses returns the closed set of the class label: the drift classifier's classes.
func PinClasses() []string {
	all := pins.AllClasses()
	out := make([]string, len(all))
	for i, c := range all {
		out[i] = string(c)
	}
	return out
}

// PinActions returns the closed set of the action label.
func PinActions() []string {
	return []string{string(pins.ActionBlock), string(pins.ActionConfirm), string(pins.ActionLog)}
}

// pinDrift is the drift counter over upstream × class × action, all closed sets, and the
// restore waits by upstream.
type pinDrift struct {
	classes, actions closedSet
	counts           *table[prometheus.Counter]
	waits            *table[prometheus.Counter]
}

func (r *Recorder) buildPins(cs *[]prometheus.Collector) {
	r.pins.classes, r.pins.actions = newClosedSet(PinClasses()), newClosedSet(PinActions())
	r.pins.counts = newTable(r.newCounterVec(cs, NamePinDrift,
		"Tool-definition drift detected, once per changed item and class, by upstream, class and the action taken on the item.",
		labelUpstream, "class", "action").WithLabelValues, r.upstreams, r.pins.classes, r.pins.actions)
	r.pins.waits = newTable(r.newCounterVec(cs, NamePinRestoreWaits,
		"First contacts of a backend held back by pins.restoreWindow (a new or emptied shared store), once per upstream and store memory.",
		labelUpstream).WithLabelValues, r.upstreams)
}

// PinDrift counts one class of one detected drift on backend (a configured upstream, the
// upstream label like every other per-backend series) with the action taken on the item (the
// strongest of its classes').
// Unknown values are counted as Other, so the label sets stay closed.
func (r *Recorder) PinDrift(backend string, class pins.Class, action pins.Action) {
	if r == nil {
		return
	}
	r.pins.counts.at3(r.upstreams.of(backend), r.pins.classes.of(string(class)), r.pins.actions.of(string(action))).Inc()
}

// PinRestoreWait counts on r one first contact of backend held back by the restore window (a
// function, not a method: Recorder has its share of them).
func PinRestoreWait(r *Recorder, backend string) {
	if r == nil {
		return
	}
	r.pins.waits.at1(r.upstreams.of(backend)).Inc()
}
