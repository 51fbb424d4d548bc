package upstreams

import (
	"slices"
	"strings"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

// ListenCaller is what a listen knows of the client it serves.
type ListenCaller struct {
	// Visible reports whether the caller may read a resource (KindResource, with the backend-side
	// URI), the same decision resources/read makes. It decides which resource subscriptions are
	// honoured and, for every resources/updated a backend sends, whether this client hears of it:
	// a client must not learn when a resource it may not read changes. It is called on the
	// backend stream's goroutine and must not block. nil allows every resource.
	Visible func(Kind, Target) bool
	// Dropped, when set, is called with one of the Drop constants and a count each time
	// notifications a backend sent are not relayed to this client. It is called on the backend
	// stream's goroutine and must not block.
	Dropped func(cause string, n int)
}

// Why a notification a backend sent on a listen stream was not relayed to a client.
const (
	// DropUnsubscribed: the client did not subscribe to it (a list_changed kind it did not ask
	// for, or a resources/updated for a URI outside its resource subscriptions).
	DropUnsubscribed = "unsubscribed"
	// DropHidden: a resources/updated for a resource the caller's policy does not let it read.
	DropHidden = "hidden"
	// DropOverflow: the client did not keep up and its queue overflowed; its listen ends with
	// ListenOverflow.
	DropOverflow = "overflow"
)

// DropCauses returns the Drop constants.
func DropCauses() []string { return []string{DropUnsubscribed, DropHidden, DropOverflow} }

// CodeListenOverflow is the JSON-RPC error code that ends a listen whose client did not keep
// up (gateway-specific range, see jsonrpc).
const CodeListenOverflow = -32015

// ListenOverflow is the error a listen ends with when its client let too many notifications
// wait: some were dropped, so the client cannot know what changed. It should listen again and
// then re-read the resources it subscribed to and re-list what it lists, as after any
// reconnection (2026-07-28 listens are not resumable).
var ListenOverflow = jsonrpc.NewError(CodeListenOverflow,
	"listen ended: the client did not keep up and notifications were dropped; listen again and re-read what it subscribed to")

// queueLimits bound the notifications waiting for one client.
type queueLimits struct {
	events int // distinct notifications
	bytes  int // their estimated memory (eventCost)
}

// defaultQueueLimits let a client fall behind by a thousand distinct notifications, or a
// quarter of a mebibyte of them, before its listen ends. A client that keeps up never comes
// close: identical notifications are queued once, so only as many can wait as there are
// list kinds and resource URIs it subscribed to that changed while it was busy. With the batch
// being written, a listen holds at most twice this.
var defaultQueueLimits = queueLimits{events: 1024, bytes: 256 << 10}

// eventOverhead estimates what a queued notification costs beyond its strings: the slice slot,
// the de-duplication map entry and the string headers.
const eventOverhead = 128

func eventCost(ev listenEvent) int {
	return eventOverhead + len(ev.method) + len(ev.uri) + len(ev.target)
}

// eventQueue is a bounded FIFO of distinct notifications: items in arrival order, and a set to
// find a duplicate without scanning them. Its zero value (with limits) is empty and holds no
// memory, which is what an idle listen keeps.
type eventQueue struct {
	limits queueLimits
	items  []listenEvent
	seen   map[listenEvent]struct{}
	bytes  int
}

// add queues ev unless an identical one is waiting. It reports false, and leaves the queue
// unchanged, when ev does not fit the limits.
func (q *eventQueue) add(ev listenEvent) bool {
	if _, dup := q.seen[ev]; dup {
		return true
	}
	cost := eventCost(ev)
	if len(q.items) >= q.limits.events || q.bytes+cost > q.limits.bytes {
		return false
	}
	if q.seen == nil {
		q.seen = make(map[listenEvent]struct{})
	}
	q.seen[ev] = struct{}{}
	q.items = append(q.items, ev)
	q.bytes += cost
	return true
}

func (q *eventQueue) len() int { return len(q.items) }

// reset empties the queue and lets go of its memory.
func (q *eventQueue) reset() {
	q.items, q.seen, q.bytes = nil, nil, 0
}

// listenFilter is what one client subscribed to on one backend's stream: the list_changed kinds,
// and the backend-side URIs of its resource subscriptions.
type listenFilter struct {
	tools, prompts, resources bool
	uris                      map[string]struct{}
	lens                      []int // the distinct lengths of uris, ascending
}

func newListenFilter(share *subscriptions) *listenFilter {
	f := &listenFilter{tools: share.ToolsListChanged, prompts: share.PromptsListChanged,
		resources: share.ResourcesListChanged}
	if len(share.ResourceSubscriptions) > 0 {
		f.uris = make(map[string]struct{}, len(share.ResourceSubscriptions))
	}
	for _, u := range share.ResourceSubscriptions {
		if _, ok := f.uris[u]; !ok && u != "" {
			f.uris[u] = struct{}{}
			f.lens = append(f.lens, len(u))
		}
	}
	slices.Sort(f.lens)
	f.lens = slices.Compact(f.lens)
	return f
}

// covers reports whether the client subscribed to ev: a list_changed of a kind it asked for,
// or a resources/updated for a URI it subscribed to or a sub-resource of one. The
// resources/updated notification "might be a sub-resource of the one that the client actually
// subscribed to" (https://modelcontextprotocol.io/specification/2026-07-28/server/resources):
// a URI below a subscribed one, at a "/" boundary, is covered. Every other notification is not.
func (f *listenFilter) covers(ev listenEvent) bool {
	switch ev.method {
	case notifToolsListChanged:
		return f.tools
	case notifPromptsListChanged:
		return f.prompts
	case notifResourcesListChanged:
		return f.resources
	case notifResourcesUpdated:
		return f.coversURI(ev.target)
	}
	return false
}

// coversURI looks up uri and each of its prefixes as long as a subscribed URI, so its cost
// grows with the number of distinct subscription lengths, not with the subscriptions.
func (f *listenFilter) coversURI(uri string) bool {
	if _, ok := f.uris[uri]; ok {
		return true
	}
	for _, n := range f.lens {
		if n >= len(uri) {
			break
		}
		sub := uri[:n]
		if !strings.HasSuffix(sub, "/") && uri[n] != '/' {
			continue // not at a path boundary: mem://a does not cover mem://ab
		}
		if _, ok := f.uris[sub]; ok {
			return true
		}
	}
	return false
}
