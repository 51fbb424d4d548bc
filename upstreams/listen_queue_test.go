package upstreams

import (
	"fmt"
	"strings"
	"testing"
)

func TestListenFilterCovers(t *testing.T) {
	f := newListenFilter(&subscriptions{ToolsListChanged: true,
		ResourceSubscriptions: []string{"mem://docs/", "file:///srv/a", "mem://x", "mem://x"}})
	for _, c := range []struct {
		ev   listenEvent
		want bool
	}{
		{listenEvent{method: notifToolsListChanged}, true},
		{listenEvent{method: notifPromptsListChanged}, false},
		{listenEvent{method: notifResourcesListChanged}, false},
		{listenEvent{method: "notifications/tasks"}, false},
		{listenEvent{method: notifResourcesUpdated, target: "mem://x"}, true},
		{listenEvent{method: notifResourcesUpdated, target: "mem://x/y"}, true}, // a sub-resource
		{listenEvent{method: notifResourcesUpdated, target: "mem://xy"}, false},
		{listenEvent{method: notifResourcesUpdated, target: "mem://docs/"}, true},
		{listenEvent{method: notifResourcesUpdated, target: "mem://docs/hr/ceo"}, true},
		{listenEvent{method: notifResourcesUpdated, target: "mem://docs"}, false},
		{listenEvent{method: notifResourcesUpdated, target: "file:///srv/a/b"}, true},
		{listenEvent{method: notifResourcesUpdated, target: "file:///srv/ab"}, false},
		{listenEvent{method: notifResourcesUpdated, target: "file:///srv"}, false},
		{listenEvent{method: notifResourcesUpdated, target: ""}, false},
	} {
		if got := f.covers(c.ev); got != c.want {
			t.Errorf("covers(%s %q) = %v, want %v", c.ev.method, c.ev.target, got, c.want)
		}
	}
	if none := newListenFilter(&subscriptions{}); none.covers(listenEvent{method: notifResourcesUpdated, target: "mem://x"}) {
		t.Error("a listen without resource subscriptions covers a resources/updated")
	}
}

// TestSubscriberQueueBounds: a subscriber that is not read keeps at most limits.events
// distinct notifications of at most limits.bytes; the one that does not fit empties the queue,
// marks the listen to end, and every drop is reported, with nothing queued after.
func TestSubscriberQueueBounds(t *testing.T) {
	for _, lim := range []queueLimits{{events: 100, bytes: 1 << 20}, {events: 1 << 20, bytes: 64 << 10}} {
		t.Run(fmt.Sprintf("%d events %d bytes", lim.events, lim.bytes), func(t *testing.T) {
			dropped := map[string]int{}
			s := newSubscriber(lim, ListenCaller{Dropped: func(cause string, n int) { dropped[cause] += n }})
			pad := strings.Repeat("x", 1024)
			maxLen, maxBytes, accepted := 0, 0, 0
			for i := range 20000 {
				s.push(listenEvent{method: notifResourcesUpdated, uri: fmt.Sprintf("a+mem://%d/%s", i, pad), target: fmt.Sprint(i)})
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
			if len(q) != 0 || !over {
				t.Errorf("take after the overflow = %d notifications, over %v; want none, and the listen to end", len(q), over)
			}
		})
	}
}

// TestSubscriberFiltersBeforeQueueing: what a subscriber did not subscribe to, or may not see,
// is reported and never queued.
func TestSubscriberFiltersBeforeQueueing(t *testing.T) {
	dropped := map[string]int{}
	s := newSubscriber(defaultQueueLimits, ListenCaller{
		Visible: func(k Kind, tg Target) bool {
			return k == KindResource && tg.Upstream == "a" && tg.Name != "mem://hr/ceo"
		},
		Dropped: func(cause string, n int) { dropped[cause] += n },
	})
	flt := newListenFilter(&subscriptions{ResourceSubscriptions: []string{"mem://hr/"}})
	s.offer("a", flt, listenEvent{method: notifToolsListChanged})
	s.offer("a", flt, listenEvent{method: notifResourcesUpdated, uri: "a+mem://other", target: "mem://other"})
	s.offer("a", flt, listenEvent{method: notifResourcesUpdated, uri: "a+mem://hr/ceo", target: "mem://hr/ceo"})
	s.offer("a", flt, listenEvent{method: notifResourcesUpdated, uri: "a+mem://hr/dev", target: "mem://hr/dev"})
	q, _, over := s.take()
	if len(q) != 1 || q[0].target != "mem://hr/dev" || over {
		t.Errorf("queued %v, want mem://hr/dev only", q)
	}
	if dropped[DropUnsubscribed] != 2 || dropped[DropHidden] != 1 {
		t.Errorf("dropped %v, want 2 unsubscribed and 1 hidden", dropped)
	}
}
