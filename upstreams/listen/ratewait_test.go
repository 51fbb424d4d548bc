package listen

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams/backend"
	"github.com/mcp-gateway/gateway/upstreams/internal/upstreamstest"
	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
)

// rateLimitedListens serves lb, except that the first limited listen requests it receives are
// answered 429 with Retry-After: 1; it counts those it answered so.
func rateLimitedListens(t *testing.T, lb *upstreamstest.ListenBackend, url string, limited int64) (string, *atomic.Int64) {
	t.Helper()
	var refused, seen atomic.Int64
	proxy := upstreamstest.Loopback(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Method") == "subscriptions/listen" && seen.Add(1) <= limited {
			refused.Add(1)
			w.Header().Set("Retry-After", "1")
			http.Error(w, "slow down", http.StatusTooManyRequests)
			return
		}
		forward(t, url, w, r)
	}))
	return proxy + "/mcp", &refused
}

// forward relays r to url and copies the answer back as it comes (an event stream stays open).
func forward(t *testing.T, url string, w http.ResponseWriter, r *http.Request) {
	req, err := http.NewRequestWithContext(r.Context(), r.Method, url, r.Body)
	if err != nil {
		t.Error(err)
		return
	}
	req.Header = r.Header.Clone()
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, vs := range resp.Header {
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.StatusCode)
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			w.Write(buf[:n])
			w.(http.Flusher).Flush()
		}
		if err != nil {
			return
		}
	}
}

// TestListenWaitsOutARateLimit: a backend that answers a listen 429 is up and only asks for
// time. Its stream is opened again once the wait it named has passed, and the listen neither
// ends nor goes on without it: a listen of that backend alone stays open through the wait (a
// pre-2026 client's GET stream, which runs one, would otherwise end and meet the wait again
// each time it is opened), and one of two backends hears the first again. Once the stream
// starts, the listen is told of everything it asked of that backend (the notifications sent
// meanwhile were not heard), and the backend's own notifications follow. A second listen
// opened during the wait is held back unsent, not sent to be refused again, and opened with
// the first's stream.
func TestListenWaitsOutARateLimit(t *testing.T) {
	t.Run("alone", func(t *testing.T) {
		lb, url := upstreamstest.StartListenBackend(t)
		limitedURL, refused := rateLimitedListens(t, lb, url, 1)
		ls := New(singleSource(t, limitedURL))
		c := upstreamstest.ListenVia(ls, `"L"`, `{"toolsListChanged":true,"resourceSubscriptions":["fault+mem://docs/a"]}`, nil)
		c.Next(t) // the acknowledgement
		mcptest.WaitFor(t, "the backend's 429", func() bool { return refused.Load() == 1 })
		// Another listen, of another share (a stream of its own), opened during the wait.
		other := upstreamstest.ListenVia(ls, `"M"`, `{"toolsListChanged":true}`, nil)
		other.Next(t)
		var got []string
		for len(got) < 2 {
			got = append(got, upstreamstest.Relayed(t, c.Next(t)))
		}
		slices.Sort(got)
		want := []string{"notifications/resources/updated fault+mem://docs/a", "notifications/tools/list_changed"}
		if !slices.Equal(got, want) {
			t.Fatalf("once the wait passed the listen got %q, want %q (or its end)", got, want)
		}
		upstreamstest.WantChanged(t, other.Next(t), `"M"`)
		mcptest.WaitFor(t, "both streams open", func() bool { open, _ := lb.Counts(); return open == 2 })
		if n := refused.Load(); n != 1 {
			t.Errorf("the backend refused %d listens, want 1: the second was held back for the wait, unsent", n)
		}
		lb.Notify(upstreamstest.ToolsChanged)
		upstreamstest.WantChanged(t, c.Next(t), `"L"`)
		upstreamstest.WantChanged(t, other.Next(t), `"M"`)
		c.Stop(t)
		other.Stop(t)
	})
	t.Run("beside another", func(t *testing.T) {
		a, aURL := upstreamstest.StartListenBackend(t)
		limitedURL, refused := rateLimitedListens(t, a, aURL, 2) // the wait is met twice
		b, bURL := upstreamstest.StartListenBackend(t)
		ls := New(newTestSource(t, modernConfig("a", limitedURL), modernConfig("b", bURL)))
		c := upstreamstest.ListenVia(ls, `"L"`, `{"toolsListChanged":true}`, nil)
		c.Next(t)
		mcptest.WaitFor(t, "b's stream open", func() bool { ob, _ := b.Counts(); return ob == 1 })
		b.Notify(upstreamstest.ToolsChanged)
		upstreamstest.WantChanged(t, c.Next(t), `"L"`) // b's, during a's wait
		upstreamstest.WantChanged(t, c.Next(t), `"L"`) // a's stream started: what it may have missed
		if oa, _ := a.Counts(); oa != 1 || refused.Load() != 2 {
			t.Fatalf("a's stream open %d after %d refusals, want open after 2", oa, refused.Load())
		}
		a.Notify(upstreamstest.ToolsChanged)
		upstreamstest.WantChanged(t, c.Next(t), `"L"`)
		c.Stop(t)
		mcptest.WaitFor(t, "both streams closed with the listen", func() bool {
			oa, _ := a.Counts()
			ob, _ := b.Counts()
			return oa == 0 && ob == 0
		})
	})
	t.Run("left during the wait", func(t *testing.T) {
		lb, url := upstreamstest.StartListenBackend(t)
		limitedURL, refused := rateLimitedListens(t, lb, url, 1)
		ls := New(singleSource(t, limitedURL))
		c := upstreamstest.ListenVia(ls, `"L"`, `{"toolsListChanged":true}`, nil)
		c.Next(t)
		mcptest.WaitFor(t, "the backend's 429", func() bool { return refused.Load() == 1 })
		c.Stop(t) // returns once the held stream has ended: nothing waits on for nobody
		if feeds, _ := ls.subscribers(); feeds != 0 {
			t.Errorf("%d streams left after the only listen left during the wait", feeds)
		}
	})
}

// TestListenBacksOffARefusingBackend: a backend's 429 to a listen stream starts a wait that
// holds back every request of the backend, so a stream sent again the moment each wait passes,
// to a backend that refuses listens and only them, would keep its calls refused for as long as
// anyone listens. Each 429 the backend answers the stream itself doubles the time before the
// stream is sent again, up to wire.MaxRetryAfter; a stream held back unsent by another
// request's wait waits what is left of it, and counts for nothing; a stream that started is not
// held back at all.
func TestListenBacksOffARefusingBackend(t *testing.T) {
	answered := func(d time.Duration) error {
		return fmt.Errorf("%w: %w", wire.ErrRateLimited, &wire.RateLimitError{Backend: "fault", RetryAfter: d})
	}
	unsent := func(d time.Duration) error {
		return fmt.Errorf("%w: %w", backend.ErrRateLimitWait, &wire.RateLimitError{Backend: "fault", RetryAfter: d})
	}
	f := &feed{}
	steps := []struct {
		err  error
		want time.Duration
	}{
		{answered(time.Second), time.Second},
		{unsent(300 * time.Millisecond), 300 * time.Millisecond},
		{answered(time.Second), 2 * time.Second},
		{answered(time.Second), 4 * time.Second},
		{unsent(time.Second), time.Second},
		{answered(3 * time.Second), 24 * time.Second},
	}
	for i, s := range steps {
		got, held := f.heldBack(s.err)
		if !held || got != s.want {
			t.Fatalf("step %d: held back %v (%v), want %v", i, got, held, s.want)
		}
	}
	for range 10 {
		if got, _ := f.heldBack(answered(time.Second)); got > wire.MaxRetryAfter {
			t.Fatalf("held back %v, past the longest wait %v", got, wire.MaxRetryAfter)
		}
	}
	if got, _ := f.heldBack(answered(time.Second)); got != wire.MaxRetryAfter {
		t.Errorf("a backend refusing again and again holds the stream back %v, want %v", got, wire.MaxRetryAfter)
	}
	if _, held := f.heldBack(errors.New("reset")); held {
		t.Error("a stream that failed otherwise was held back")
	}
	f.started = true
	if _, held := f.heldBack(answered(time.Second)); held {
		t.Error("a stream that had started was held back")
	}
}
