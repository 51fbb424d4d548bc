package metrics

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Metric names of tool sets and tool search (docs/toolsets.md).
const (
	NameToolSearches       = "mcp_gateway_tool_searches_total"
	NameToolSearchHits     = "mcp_gateway_tool_search_hits"
	NameToolSearchCalls    = "mcp_gateway_tool_search_calls_total"
	NameToolListBytes      = "mcp_gateway_tool_list_bytes_total"
	labelSet               = "set"
	labelList              = "list"
	listFull, listSent     = "full", "sent"
	defaultToolsetLabel    = "default"
	maxSearchHitsBucketTop = 50
)

// ToolsetOptions configures a ToolsetRecorder.
type ToolsetOptions struct {
	// Sets are the configured tool set names, the only values the set label takes besides
	// "default" (the default endpoint in search mode) and Other.
	Sets []string
	// Upstreams and MaxToolsPerUpstream bound the tool label of call_tool's inner calls, as
	// Options does for tool calls.
	Upstreams           []string
	MaxToolsPerUpstream int
}

// ToolsetRecorder records tool search: searches and their hits per endpoint, the calls made
// through call_tool by the inner tool that ran, and the bytes of tools/list a search endpoint
// sent against those the full list would have been. Every label is a closed set. Methods are
// safe on a nil recorder, where they do nothing.
type ToolsetRecorder struct {
	sets, lists closedSet
	searches    *table[prometheus.Counter]  // set
	hits        *table[prometheus.Observer] // set
	bytes       *table[prometheus.Counter]  // set × list
	calls       *toolCalls                  // upstream × tool × outcome
}

// NewToolsets registers the tool search metrics on reg.
func NewToolsets(reg prometheus.Registerer, opts ToolsetOptions) (*ToolsetRecorder, error) {
	o := Options{Upstreams: opts.Upstreams, MaxToolsPerUpstream: opts.MaxToolsPerUpstream}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	for _, s := range opts.Sets {
		if !validLabelValue(s) || s == Other {
			return nil, fmt.Errorf("%w: tool set %q", ErrInvalidUpstream, s)
		}
	}
	r := &ToolsetRecorder{
		sets:  newClosedSet(append([]string{defaultToolsetLabel}, opts.Sets...)),
		lists: newClosedSet([]string{listFull, listSent}),
	}
	var cs []prometheus.Collector
	searches := prometheus.NewCounterVec(prometheus.CounterOpts{Name: NameToolSearches,
		Help: "find_tools calls by endpoint (tool set, or default)."}, []string{labelSet})
	hits := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: NameToolSearchHits,
		Help:    "Tools a find_tools call returned, by endpoint.",
		Buckets: []float64{0, 1, 2, 3, 5, 10, 20, maxSearchHitsBucketTop}}, []string{labelSet})
	bytes := prometheus.NewCounterVec(prometheus.CounterOpts{Name: NameToolListBytes,
		Help: "Bytes of tools/list on search endpoints: the full list the caller may see (full) and what it was sent (sent)."},
		[]string{labelSet, labelList})
	calls := prometheus.NewCounterVec(prometheus.CounterOpts{Name: NameToolSearchCalls,
		Help: "Tool calls made through call_tool, by upstream, the inner tool's upstream name (allowlisted) and outcome."},
		[]string{labelUpstream, labelTool, "outcome"})
	cs = append(cs, searches, hits, bytes, calls)
	r.searches = newTable(searches.WithLabelValues, r.sets)
	r.hits = newTable(func(lvs ...string) prometheus.Observer { return hits.WithLabelValues(lvs...) }, r.sets)
	r.bytes = newTable(bytes.WithLabelValues, r.sets, r.lists)
	r.calls = newToolCalls(calls, opts.Upstreams, newClosedSet(Outcomes()), o.maxTools())
	if err := registerAll(reg, cs); err != nil {
		return nil, err
	}
	return r, nil
}

// Search counts one find_tools call on endpoint set and the number of tools it returned.
func (r *ToolsetRecorder) Search(set string, hits int) {
	if r == nil {
		return
	}
	i := r.sets.of(set)
	r.searches.at1(i).Inc()
	r.hits.at1(i).Observe(float64(hits))
}

// ContextBytes adds one search-mode tools/list: full is the size of the list the caller would
// have received without search mode, sent the size of what it received.
func (r *ToolsetRecorder) ContextBytes(set string, full, sent int) {
	if r == nil {
		return
	}
	i := r.sets.of(set)
	r.bytes.at2(i, r.lists.of(listFull)).Add(float64(full))
	r.bytes.at2(i, r.lists.of(listSent)).Add(float64(sent))
}

// CallTool counts one call made through call_tool by the inner tool's upstream and upstream-side
// name, and its outcome.
func (r *ToolsetRecorder) CallTool(upstream, tool, outcome string) {
	if r == nil {
		return
	}
	r.calls.inc(upstream, tool, outcome)
}

// SetKnownTools replaces an upstream's tool allowlist, as Recorder.SetKnownTools.
func (r *ToolsetRecorder) SetKnownTools(upstream string, tools []string) {
	if r == nil {
		return
	}
	r.calls.setKnown(upstream, tools)
}
