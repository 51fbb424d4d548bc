package upstreams

import (
	"sync"
	"time"
)

// noticeWindow is how often at most a list_changed of one backend and kind is passed on to the
// other replicas (Options.OnListChanged).
const noticeWindow = time.Second

// changeNotices passes the list_changed notifications this replica's listen streams hear on to
// the other replicas: at once for the first of a backend and kind, then at most once a
// noticeWindow, at the window's end when more came in it. Every listen stream of a backend on a
// replica (one per distinct listen) hears the same notification, and a backend may send them in
// a loop: passed on each time, one list change made one shared-store message per stream, and a
// looping backend as many as the store took, each acted on by every replica. The replica's own
// cached lists are dropped on every one (Registry's listen source); a notice held back in a
// window is passed on at its end, so another replica drops what it cached meanwhile within a
// noticeWindow. The keys are the configured backends and the three list kinds, so the map is
// bounded by the configuration.
type changeNotices struct {
	pass func(upstream, method string)
	// after runs f once d has passed (time.AfterFunc); tests replace it to end a window when
	// they choose.
	after func(d time.Duration, f func()) *time.Timer

	mu     sync.Mutex
	open   map[changeKey]*changeWindow
	closed bool // Registry.Close: nothing more is passed on
}

type changeKey struct{ upstream, method string }

// changeWindow is one open window: more says notices came after the one passed on.
type changeWindow struct {
	more  bool
	timer *time.Timer
}

func newChangeNotices(pass func(upstream, method string)) *changeNotices {
	return &changeNotices{pass: pass, after: time.AfterFunc, open: map[changeKey]*changeWindow{}}
}

// notify passes a list_changed of upstream on, or holds it for the end of the open window.
func (c *changeNotices) notify(upstream, method string) {
	k := changeKey{upstream, method}
	c.mu.Lock()
	if w, ok := c.open[k]; ok || c.closed {
		if ok {
			w.more = true
		}
		c.mu.Unlock()
		return
	}
	w := &changeWindow{}
	c.open[k] = w
	c.mu.Unlock()
	c.pass(upstream, method)
	c.schedule(k, w)
}

// schedule ends w's window after noticeWindow.
func (c *changeNotices) schedule(k changeKey, w *changeWindow) {
	t := c.after(noticeWindow, func() { c.end(k, w) })
	c.mu.Lock()
	w.timer = t
	c.mu.Unlock()
}

// end ends k's window w: the notices held in it are passed on as one, which opens the next.
func (c *changeNotices) end(k changeKey, w *changeWindow) {
	c.mu.Lock()
	if c.open[k] != w || c.closed {
		c.mu.Unlock()
		return
	}
	if !w.more {
		delete(c.open, k)
		c.mu.Unlock()
		return
	}
	w.more = false
	c.mu.Unlock()
	c.pass(k.upstream, k.method)
	c.schedule(k, w)
}

// close stops the windows: nothing held is passed on after it.
func (c *changeNotices) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for k, w := range c.open {
		if w.timer != nil {
			w.timer.Stop()
		}
		delete(c.open, k)
	}
}
