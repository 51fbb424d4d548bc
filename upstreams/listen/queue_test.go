package listen

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/bodyread"
	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
	"github.com/mcp-gateway/gateway/upstreams/names"
)

func ns(uri string) names.Namespaced { return names.Namespaced("a+" + uri) }

// read is a uriReader whose normal forms are the URIs as they are.
func read(uri string) (string, names.Namespaced, bool) { return uri, ns(uri), true }

func TestListenFilterCovers(t *testing.T) {
	f := newListenFilter(&share{ToolsListChanged: true,
		ResourceSubscriptions: []string{"mem://docs/", "file:///srv/a", "mem://x", "mem://x", "mem://docs/hr"}}, read)
	for _, c := range []struct {
		ev    listenEvent
		cover names.Namespaced // "-": not covered
	}{
		{listenEvent{method: wire.NotifToolsListChanged}, ""},
		{listenEvent{method: wire.NotifPromptsListChanged}, "-"},
		{listenEvent{method: wire.NotifResourcesListChanged}, "-"},
		{listenEvent{method: "notifications/tasks"}, "-"},
		{listenEvent{method: wire.NotifResourcesUpdated, target: "mem://x"}, "a+mem://x"},
		{listenEvent{method: wire.NotifResourcesUpdated, target: "mem://x/y"}, "a+mem://x"}, // a sub-resource
		{listenEvent{method: wire.NotifResourcesUpdated, target: "mem://xy"}, "-"},
		{listenEvent{method: wire.NotifResourcesUpdated, target: "mem://docs/"}, "a+mem://docs/"},
		{listenEvent{method: wire.NotifResourcesUpdated, target: "mem://docs/a"}, "a+mem://docs/"},
		{listenEvent{method: wire.NotifResourcesUpdated, target: "mem://docs/hr/ceo"}, "a+mem://docs/hr"}, // the longest
		{listenEvent{method: wire.NotifResourcesUpdated, target: "mem://docs/hrx"}, "a+mem://docs/"},
		{listenEvent{method: wire.NotifResourcesUpdated, target: "mem://docs"}, "-"},
		{listenEvent{method: wire.NotifResourcesUpdated, target: "file:///srv/a/b"}, "a+file:///srv/a"},
		{listenEvent{method: wire.NotifResourcesUpdated, target: "file:///srv/ab"}, "-"},
		{listenEvent{method: wire.NotifResourcesUpdated, target: "file:///srv"}, "-"},
		{listenEvent{method: wire.NotifResourcesUpdated, target: ""}, "-"},
		// Below a subscription only what cannot climb out of it.
		{listenEvent{method: wire.NotifResourcesUpdated, target: "mem://docs/a..b"}, "a+mem://docs/"},
		{listenEvent{method: wire.NotifResourcesUpdated, target: "mem://docs/a?q=.."}, "a+mem://docs/"},
		{listenEvent{method: wire.NotifResourcesUpdated, target: "mem://docs/../hr/ceo"}, "-"},
		{listenEvent{method: wire.NotifResourcesUpdated, target: "mem://docs/./a"}, "-"},
		{listenEvent{method: wire.NotifResourcesUpdated, target: "mem://x/.."}, "-"},
		{listenEvent{method: wire.NotifResourcesUpdated, target: "mem://docs/%2E%2e/hr"}, "-"},
		{listenEvent{method: wire.NotifResourcesUpdated, target: "mem://docs/a%2fb"}, "-"},
		{listenEvent{method: wire.NotifResourcesUpdated, target: `mem://docs/a\b`}, "-"},
		{listenEvent{method: wire.NotifResourcesUpdated, target: "mem://docs/a\x00"}, "-"},
	} {
		cover, ok := f.covers(c.ev)
		if !ok {
			cover = "-"
		}
		if cover != c.cover {
			t.Errorf("covers(%s %q) = %q, want %q", c.ev.method, c.ev.target, cover, c.cover)
		}
	}
	if _, ok := newListenFilter(&share{}, read).covers(listenEvent{method: wire.NotifResourcesUpdated, target: "mem://x"}); ok {
		t.Error("a listen without resource subscriptions covers a resources/updated")
	}
}

// TestSubscriberQueueBounds: a subscriber that is not read keeps at most limits.events
// distinct notifications of at most limits.bytes; when even coalesced (here every update is its
// own subscription) one does not fit, the queue is emptied, the listen is marked to end, and
// every drop is reported, with nothing queued after.
func TestSubscriberQueueBounds(t *testing.T) {
	for _, lim := range []queueLimits{{events: 100, bytes: 1 << 20}, {events: 1 << 20, bytes: 64 << 10}} {
		t.Run(fmt.Sprintf("%d events %d bytes", lim.events, lim.bytes), func(t *testing.T) {
			dropped := map[string]int{}
			s := newSubscriber(nil, lim, Caller{Dropped: func(cause string, n int) { dropped[cause] += n }})
			pad := strings.Repeat("x", 1024)
			maxLen, maxBytes, accepted := 0, 0, 0
			for i := range 20000 {
				uri := fmt.Sprintf("mem://%d/%s", i, pad)
				s.push(listenEvent{method: wire.NotifResourcesUpdated, uri: ns(uri), target: uri, cover: ns(uri)})
				s.mu.Lock()
				maxLen, maxBytes = max(maxLen, s.queue.len()), max(maxBytes, s.queue.bytes)
				if !s.over {
					accepted = s.queue.len()
				}
				s.mu.Unlock()
			}
			if maxLen > lim.events || maxBytes > lim.bytes {
				t.Errorf("the queue held %d notifications of %d bytes, over %+v", maxLen, maxBytes, lim)
			}
			if accepted == 0 || dropped[DropOverflow] != 20000 || len(dropped) != 1 {
				t.Errorf("accepted %d, dropped %v; want every notification dropped once the queue overflowed", accepted, dropped)
			}
			q, _, over := s.take()
			if len(q) != 0 || over != Overflow {
				t.Errorf("take after the overflow = %d notifications, over %v; want none, and the listen to end", len(q), over)
			}
		})
	}
}

// TestSubscriberFiltersBeforeQueueing: what a subscriber did not subscribe to, or may not see,
// is reported and never queued.
func TestSubscriberFiltersBeforeQueueing(t *testing.T) {
	dropped := map[string]int{}
	s := newSubscriber(nil, defaultQueueLimits, Caller{
		Visible: func(k names.Kind, tg names.Target) bool {
			return k == names.KindResource && tg.Upstream == "a" && tg.Name != "mem://hr/ceo"
		},
		Dropped: func(cause string, n int) { dropped[cause] += n },
	})
	flt := newListenFilter(&share{ResourceSubscriptions: []string{"mem://hr/"}}, read)
	s.offer("a", flt, listenEvent{method: wire.NotifToolsListChanged})
	s.offer("a", flt, listenEvent{method: wire.NotifResourcesUpdated, uri: "a+mem://other", target: "mem://other"})
	s.offer("a", flt, listenEvent{method: wire.NotifResourcesUpdated, uri: "a+mem://hr/ceo", target: "mem://hr/ceo"})
	s.offer("a", flt, listenEvent{method: wire.NotifResourcesUpdated, uri: "a+mem://hr/dev", target: "mem://hr/dev"})
	q, _, over := s.take()
	if len(q) != 1 || q[0].target != "mem://hr/dev" || over != nil {
		t.Errorf("queued %v, want mem://hr/dev only", q)
	}
	if dropped[DropUnsubscribed] != 2 || dropped[DropHidden] != 1 {
		t.Errorf("dropped %v, want 2 unsubscribed and 1 hidden", dropped)
	}
}

// TestSubscriberQueueCoalesces: updates of sub-resources that do not fit are relayed as updates
// of the subscriptions covering them, in the order they first arrived; the listen goes on, and
// once the client has taken the queue, updates are relayed one by one again.
func TestSubscriberQueueCoalescesSubResources(t *testing.T) {
	dropped := map[string]int{}
	s := newSubscriber(nil, queueLimits{events: 10, bytes: 1 << 20}, Caller{Dropped: func(cause string, n int) { dropped[cause] += n }})
	flt := newListenFilter(&share{ToolsListChanged: true, ResourceSubscriptions: []string{"mem://a/", "mem://b/"}}, read)
	s.offer("a", flt, listenEvent{method: wire.NotifResourcesUpdated, uri: "a+mem://b/1", target: "mem://b/1"})
	s.offer("a", flt, listenEvent{method: wire.NotifToolsListChanged})
	for i := range 20000 {
		uri := fmt.Sprintf("mem://a/%d", i)
		s.offer("a", flt, listenEvent{method: wire.NotifResourcesUpdated, uri: ns(uri), target: uri})
		if n := s.queue.len(); n > 10 {
			t.Fatalf("the queue holds %d notifications", n)
		}
	}
	q, _, over := s.take()
	var got []string
	for _, ev := range q {
		got = append(got, strings.TrimSpace(ev.method+" "+string(ev.uri)))
	}
	want := []string{"notifications/resources/updated a+mem://b/", "notifications/tools/list_changed", "notifications/resources/updated a+mem://a/"}
	if over != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("queued %q (over %v), want %q", got, over, want)
	}
	if dropped[DropCoalesced] != 20001 || dropped[DropOverflow] != 0 {
		t.Errorf("dropped %v, want 20001 coalesced", dropped)
	}
	s.offer("a", flt, listenEvent{method: wire.NotifResourcesUpdated, uri: "a+mem://a/x", target: "mem://a/x"})
	if q, _, _ := s.take(); len(q) != 1 || q[0].uri != "a+mem://a/x" {
		t.Errorf("after the client caught up, queued %v, want the update itself", q)
	}
}

// TestSubscribersChargedToTheirCallersShare: the queues of one caller's listens are charged to
// one share of the listens' budget, the callers without a key to one between them (Caller.Key),
// and each caller's share is given back when its last listen leaves.
func TestSubscribersChargedToTheirCallersShare(t *testing.T) {
	hub := New(&Source{Results: bodyread.NewBudget(1 << 20)})
	lim := queueLimits{events: 100, bytes: 1 << 20}
	a1, a2 := newSubscriber(hub, lim, Caller{Key: "idp#a"}), newSubscriber(hub, lim, Caller{Key: "idp#a"})
	k1, k2 := newSubscriber(hub, lim, Caller{}), newSubscriber(hub, lim, Caller{})
	if a1.queue.budget != a2.queue.budget || k1.queue.budget != k2.queue.budget || a1.queue.budget == k1.queue.budget {
		t.Fatal("one caller's listens are charged to different shares, or two callers' to one")
	}
	if k1.queue.budget == hub.queued || k1.queue.budget.Max() != 1<<20/callerShareDivisor {
		t.Fatalf("the callers without a key are charged to %d bytes, want one caller's share", k1.queue.budget.Max())
	}
	uri := "mem://r"
	k1.push(listenEvent{method: wire.NotifResourcesUpdated, uri: ns(uri), target: uri, cover: ns(uri)})
	if hub.Held("") == 0 || hub.Held("") != hub.queued.InUse() || hub.Held("idp#a") != 0 {
		t.Fatalf("held: keyless %d, idp#a %d, all listens %d", hub.Held(""), hub.Held("idp#a"), hub.queued.InUse())
	}
	for _, s := range []*subscriber{a1, a2, k1, k2} {
		s.leave()
	}
	if hub.callers.Held() != 0 || hub.queued.InUse() != 0 {
		t.Fatalf("%d shares held, %d bytes, after every listen left", hub.callers.Held(), hub.queued.InUse())
	}
}
