package listen

import (
	"context"
	"slices"
	"strings"

	"github.com/mcp-gateway/gateway/internal/bodyread"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
	"github.com/mcp-gateway/gateway/upstreams/names"
)

// Caller is what a listen knows of the client it serves.
type Caller struct {
	// Visible reports whether the caller may read a resource (KindResource, with the backend-side
	// URI), the same decision resources/read makes. It decides which resource subscriptions are
	// honoured and, for every resources/updated a backend sends, whether this client hears of it:
	// a client must not learn when a resource it may not read changes. It is called on the
	// backend stream's goroutine and must not block. nil allows every resource.
	Visible func(names.Kind, names.Target) bool
	// Reaches reports whether the caller's policy gives it anything of a backend
	// (authz.Policy.Reaches). A backend it is false for is one this caller must not learn of:
	// its list_changed notifications are neither subscribed to for this listen nor, should
	// the policy change while the listen lasts, relayed. It is called while the listen is set
	// up and on the backend stream's goroutine, and must not block. nil reaches every backend.
	Reaches func(upstream string) bool
	// Key is the caller (issuer and subject; the gateway gives a client address's key,
	// callerkey.Client, without authentication): the notifications waiting for its listens on a
	// replica are charged to one share of the replica's budget of result bytes (Listens). Every
	// caller without a key shares one.
	Key string
	// Dropped, when set, is called with one of the Drop constants and a count each time
	// notifications a backend sent are not relayed to this client. It is called on the backend
	// stream's goroutine and must not block.
	Dropped func(cause string, n int)
	// Spell returns the spelling the backend of t (a resource URI in its normal form) listed
	// for it, as resources/read of t is sent (catalog.Catalog.ResourceSpelling): a backend that
	// looks resources up by the exact string it listed subscribes nothing under another. It is
	// called while the listen is set up, on the caller's goroutine. nil, or an empty result,
	// sends t's URI form.
	Spell func(ctx context.Context, t names.Target) string
	// Subject is the caller's verified token, and SubjectKey its backend.SubjectKey ("" has it
	// computed here): a backend that exchanges tokens (RFC 8693) receives this caller's listen
	// with its exchanged token, on a stream of this token's (feedSpec.subject); no other
	// backend's request holds it. "" for a caller without one: such a backend's stream is
	// then refused.
	Subject, SubjectKey string
	// HoldIdle keeps a listen that joins no backend stream (no backend it reaches offers what it
	// asked for) open, hearing nothing, until ctx ends, instead of ending it at once after the
	// acknowledgement. A pre-2026 client's GET stream asks it: ended at once, its client would
	// open the stream again a second or two later, and again, for as long as it is connected.
	HoldIdle bool
}

// Why a notification a backend sent on a listen stream was not relayed to a client.
const (
	// DropUnsubscribed: the client did not subscribe to it (a list_changed kind it did not ask
	// for, or a resources/updated for a URI outside its resource subscriptions).
	DropUnsubscribed = "unsubscribed"
	// DropHidden: a resources/updated for a resource the caller's policy does not let it read,
	// or a list_changed of a backend its policy gives it nothing of.
	DropHidden = "hidden"
	// DropCoalesced: a resources/updated for a sub-resource, relayed as a resources/updated
	// for the subscribed URI that covers it because the client fell behind (see eventQueue).
	DropCoalesced = "coalesced"
	// DropOverflow: the client fell so far behind that even coalesced its notifications do not
	// fit its queue: they are lost and its listen ends with Overflow.
	DropOverflow = "overflow"
)

// DropCauses returns the Drop constants.
func DropCauses() []string {
	return []string{DropUnsubscribed, DropHidden, DropCoalesced, DropOverflow}
}

// CodeOverflow is the JSON-RPC error code that ends a listen whose client did not keep up
// (gateway-specific range, see jsonrpc).
const CodeOverflow = -32015

// Overflow is the error a listen ends with when its client let too many notifications
// wait: some were dropped, so the client cannot know what changed. It should listen again and
// then re-read the resources it subscribed to and re-list what it lists, as after any
// reconnection (2026-07-28 listens are not resumable).
var Overflow = jsonrpc.NewError(CodeOverflow,
	"listen ended: the client did not keep up and notifications were dropped; listen again and re-read what it subscribed to")

// OverBudget is the error a listen ends with when the notifications waiting for its client do
// not fit the bytes the gateway lets its caller's listens, or every listen, hold
// (server.maxResultBytesInFlight): some were dropped, as with Overflow, and the client should
// do the same once it reads what it is sent.
var OverBudget = jsonrpc.NewError(CodeOverflow,
	"listen ended: notifications waiting for this caller's listens reached the gateway's memory bound and were dropped; read faster or hold fewer listens, then listen again and re-read what it subscribed to")

// queueLimits bound the notifications waiting for one client.
type queueLimits struct {
	events int // distinct notifications
	bytes  int // their estimated memory (eventCost)
}

// defaultQueueLimits let a client fall behind by a thousand distinct notifications, or a
// quarter of a mebibyte of them, before its queue is coalesced (see eventQueue). Identical
// notifications are queued once, so once coalesced only as many can wait as there are list
// kinds and resource subscriptions: only a listen with more subscriptions than this ends. With
// the batch being written, a listen holds at most twice this.
var defaultQueueLimits = queueLimits{events: 1024, bytes: 256 << 10}

// eventOverhead estimates what a queued notification costs beyond its strings: the slice slot,
// the de-duplication map entry and the string headers.
const eventOverhead = 128

func eventCost(ev listenEvent) int {
	return eventOverhead + len(ev.method) + len(ev.uri) + len(ev.target) + len(ev.cover)
}

// coalesced is ev as a client that fell behind gets it: a resources/updated names the
// subscribed URI that covers the updated one. That is still true (a resource the client
// subscribed to, or one below it, changed) and tells it what to read again; every update below
// one subscription becomes the same notification, queued once.
func (ev listenEvent) coalesced() listenEvent {
	if ev.method != wire.NotifResourcesUpdated || ev.cover == "" {
		return ev
	}
	return listenEvent{method: ev.method, uri: ev.cover, cover: ev.cover}
}

// eventQueue is a bounded FIFO of distinct notifications: items in arrival order, and a set to
// find a duplicate without scanning them. Its zero value (with limits) is empty and holds no
// memory, which is what an idle listen keeps.
//
// When a notification does not fit, the queue is coalesced: each resources/updated becomes one
// for the subscription that covers it (ev.coalesced), and so does everything queued until the
// client takes the queue. Only a client with more subscriptions than the limits hold can then
// overflow it.
//
// What it holds (bytes) is also charged to budget, the caller's share of the replica's budget
// of result bytes (nil: none), until the items are written (take) or the queue is reset; a
// notification the budget cannot take does not fit either.
type eventQueue struct {
	limits     queueLimits
	budget     *bodyread.Budget
	items      []listenEvent
	seen       map[listenEvent]struct{}
	bytes      int
	coalescing bool
	// overBudget: an add did not fit the budget (rather than the limits).
	overBudget bool
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
	if !q.budget.Take(int64(cost)) {
		q.overBudget = true
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

// push queues ev as add does, coalescing the queue when ev does not fit. It returns how many
// notifications were coalesced (sub-resource updates now relayed as their subscription's), and
// false when even coalesced they do not fit: the queue must then be reset.
//
// overBudget then tells whether the budget, rather than the limits, refused some of it.
func (q *eventQueue) push(ev listenEvent) (coalesced int, ok bool) {
	q.overBudget = false
	if !q.coalescing {
		if q.add(ev) {
			return 0, true
		}
		old := q.items
		q.reset()
		q.coalescing = true
		for _, e := range old {
			coalesced += lossOf(e)
			if !q.add(e.coalesced()) {
				return coalesced, false
			}
		}
	}
	return coalesced + lossOf(ev), q.add(ev.coalesced())
}

// lossOf is 1 when coalescing ev loses which sub-resource changed.
func lossOf(ev listenEvent) int {
	if ev.method == wire.NotifResourcesUpdated && ev.cover != "" && ev.uri != ev.cover {
		return 1
	}
	return 0
}

func (q *eventQueue) len() int { return len(q.items) }

// reset empties the queue, leaves coalescing, lets go of its memory and gives its charge back.
func (q *eventQueue) reset() {
	q.budget.Return(int64(q.bytes))
	q.detach()
}

// detach empties the queue as reset does but keeps its charge, which passes to whoever took the
// items (subscriber.take) and is theirs to give back.
func (q *eventQueue) detach() {
	q.items, q.seen, q.bytes, q.coalescing = nil, nil, 0, false
}

// listenFilter is what one client subscribed to on one backend's stream: the list_changed kinds,
// and its resource subscriptions.
type listenFilter struct {
	tools, prompts, resources bool
	uris                      map[string]names.Namespaced // normal form of a backend URI → client URI
	lens                      []int                       // the distinct lengths of uris' keys, ascending
}

// newListenFilter returns the filter of sh, whose resource URIs are written as its backend was
// sent them; read gives each one's normal form, the form resources/updated is matched in
// (eventOf), and its client URI, the one the client was acknowledged with. A URI is one
// subscription however the backend was sent it.
func newListenFilter(sh *share, read uriReader) *listenFilter {
	f := &listenFilter{tools: sh.ToolsListChanged, prompts: sh.PromptsListChanged,
		resources: sh.ResourcesListChanged}
	if len(sh.ResourceSubscriptions) > 0 {
		f.uris = make(map[string]names.Namespaced, len(sh.ResourceSubscriptions))
	}
	for _, sent := range sh.ResourceSubscriptions {
		n, client, ok := read(sent)
		if _, dup := f.uris[n]; ok && !dup && n != "" {
			f.uris[n] = client
			f.lens = append(f.lens, len(n))
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
// For a resources/updated, cover is the client URI of the subscription that covers it.
func (f *listenFilter) covers(ev listenEvent) (cover names.Namespaced, ok bool) {
	switch ev.method {
	case wire.NotifToolsListChanged:
		return "", f.tools
	case wire.NotifPromptsListChanged:
		return "", f.prompts
	case wire.NotifResourcesListChanged:
		return "", f.resources
	case wire.NotifResourcesUpdated:
		return f.coverOf(ev.target)
	}
	return "", false
}

// coverOf looks up uri and each of its prefixes as long as a subscribed URI, so its cost grows
// with the number of distinct subscription lengths, not with the subscriptions. The longest
// covering subscription wins. A URI whose part below the prefix could climb out of it (a dot
// segment, an encoded dot, slash or backslash, a backslash or a NUL) is below nothing: it must
// name the subscription exactly.
func (f *listenFilter) coverOf(uri string) (names.Namespaced, bool) {
	if c, ok := f.uris[uri]; ok {
		return c, true
	}
	if len(f.lens) == 0 || !plainPath(uri) {
		return "", false
	}
	for i := len(f.lens) - 1; i >= 0; i-- {
		n := f.lens[i]
		if n >= len(uri) {
			continue
		}
		sub := uri[:n]
		if !strings.HasSuffix(sub, "/") && uri[n] != '/' {
			continue // not at a path boundary: mem://a does not cover mem://ab
		}
		if c, ok := f.uris[sub]; ok {
			return c, true
		}
	}
	return "", false
}

// plainPath reports whether uri has no path segment "." or "..", no percent-encoded dot, slash
// or backslash, and no backslash or NUL: nothing a backend's URI parser could resolve to a
// different place than the string says.
func plainPath(uri string) bool {
	if strings.ContainsAny(uri, "\\\x00") {
		return false
	}
	lower := strings.ToLower(uri)
	for _, enc := range []string{"%2e", "%2f", "%5c", "%00"} {
		if strings.Contains(lower, enc) {
			return false
		}
	}
	path, _, _ := strings.Cut(uri, "?")
	path, _, _ = strings.Cut(path, "#")
	for seg := range strings.SplitSeq(path, "/") {
		if seg == "." || seg == ".." {
			return false
		}
	}
	return true
}
