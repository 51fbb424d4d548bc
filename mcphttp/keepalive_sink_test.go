package mcphttp

import (
	"bytes"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"
)

// commentWriter is a ResponseWriter that signals each keep-alive comment written to it.
type commentWriter struct {
	mu       sync.Mutex
	header   http.Header
	body     bytes.Buffer
	comments chan struct{}
}

func newCommentWriter() *commentWriter {
	return &commentWriter{header: http.Header{}, comments: make(chan struct{}, 1024)}
}

func (w *commentWriter) Header() http.Header { return w.header }
func (w *commentWriter) WriteHeader(int)     {}
func (w *commentWriter) Flush()              {}

func (w *commentWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if bytes.Equal(b, keepAliveComment) {
		w.comments <- struct{}{}
	}
	return w.body.Write(b)
}

// count is the number of keep-alive comments written so far.
func (w *commentWriter) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return bytes.Count(w.body.Bytes(), keepAliveComment)
}

func keepAliveSink(w http.ResponseWriter, every time.Duration) *ClientSink {
	s := &Server{cfg: Config{SSEKeepAlive: every}, log: slog.New(slog.DiscardHandler)}
	return &ClientSink{w: w, srv: s, sent: time.Now()}
}

// TestKeepAliveCountsSilenceNotArming: a wait that pauses the keep-alives and arms them again
// more often than the interval (a paced wait's pauses, each with a backend retry between) still
// gets a comment for each interval of silence: the silence is counted from the last byte sent,
// not from the last arming. (It used to restart at every arming, and such a wait never got one.)
// The toggling goes on, twenty times an interval, until three comments came; it gives up after
// a hundred intervals' worth, by which one that counted from the arming had still none.
func TestKeepAliveCountsSilenceNotArming(t *testing.T) {
	const every = 20 * time.Millisecond
	w := newCommentWriter()
	c := keepAliveSink(w, every)
	defer c.finish()
	seen := 0
	for i := 0; seen < 3; i++ {
		if i == 2000 {
			t.Fatalf("%d keep-alive comments after 100 intervals of arming and pausing, want 3", seen)
		}
		c.KeepAlive(true)
		select {
		case <-w.comments:
			seen++
		case <-time.After(every / 20):
		}
		c.KeepAlive(false)
	}
}

// TestKeepAliveArmedAfterSilence: keep-alives armed on a response that has been silent for
// the interval already write a comment at once, not an interval later.
func TestKeepAliveArmedAfterSilence(t *testing.T) {
	w := newCommentWriter()
	c := keepAliveSink(w, time.Hour)
	defer c.finish()
	c.sent = time.Now().Add(-2 * time.Hour)
	c.KeepAlive(true)
	select {
	case <-w.comments:
	case <-time.After(time.Minute):
		t.Fatal("no keep-alive comment on a response silent for twice the interval")
	}
}

// TestKeepAliveOffMeansOff: a tick of the keep-alive timer that was already under way when the
// keep-alives were paused (it waited for the sink's lock) writes nothing and does not arm the
// timer again; before, it wrote a comment and re-armed itself, and comments went on while the
// keep-alives were off.
func TestKeepAliveOffMeansOff(t *testing.T) {
	w := newCommentWriter()
	c := keepAliveSink(w, time.Hour)
	defer c.finish()
	c.KeepAlive(true)
	c.KeepAlive(false)
	// The tick that lost the race to the pause.
	c.keepAliveTick()
	c.mu.Lock()
	rearmed := c.ka.Stop()
	c.mu.Unlock()
	if rearmed {
		t.Error("the keep-alive timer was armed again after the keep-alives were paused")
	}
	if n := w.count(); n != 0 {
		t.Errorf("%d keep-alive comments while the keep-alives were off, want none", n)
	}
}
