package replicatest

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
)

// Load shape: bounded, paced, and mixed so that some calls are in flight whenever a replica
// starts draining.
const (
	// loadWorkers is the number of concurrent clients.
	loadWorkers = 8
	// loadMaxPerWorker bounds each client's requests, whatever happens to the test.
	loadMaxPerWorker = 1500
	// loadPause is each client's pause between two requests.
	loadPause = 10 * time.Millisecond
	// loadSlowArgs makes every other request a backend call that takes a while.
	loadSlowArgs = `{"ms":30}`
	// maxSamples bounds the failure descriptions kept for the report.
	maxSamples = 5
	// maxSampleBytes bounds one failure description.
	maxSampleBytes = 120
)

// tally counts the outcomes of one phase of load.
type tally struct {
	sent, ok, failed, lost int
	served                 map[string]int // by the replica the balancer named
	samples                []string       // the first few failures and losses
}

// load is a bounded background load through one URL, counted per phase.
type load struct {
	client *mcpClient
	url    string
	stop   chan struct{}
	once   sync.Once
	wg     sync.WaitGroup

	mu     sync.Mutex
	phase  string
	phases map[string]*tally
	order  []string
}

// startLoad starts loadWorkers clients sending to url until finish is called or each has sent
// loadMaxPerWorker requests.
func startLoad(client *mcpClient, url, phase string) *load {
	l := &load{client: client, url: url, stop: make(chan struct{}), phases: map[string]*tally{}}
	l.setPhase(phase)
	for w := range loadWorkers {
		l.wg.Add(1)
		go l.work(w)
	}
	return l
}

func (l *load) work(w int) {
	defer l.wg.Done()
	for i := range loadMaxPerWorker {
		select {
		case <-l.stop:
			return
		default:
		}
		phase := l.currentPhase()
		var r reply
		var err error
		if (w+i)%2 == 0 {
			r, err = l.client.call(l.url, "alpha__slow", loadSlowArgs, "", "")
		} else {
			r, err = l.client.listTools(l.url)
		}
		l.record(phase, r, err)
		time.Sleep(loadPause)
	}
}

// record classifies one request: lost when no HTTP response came back, failed when the response
// is not a successful JSON-RPC result.
func (l *load) record(phase string, r reply, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := l.phases[phase]
	t.sent++
	switch {
	case err != nil:
		t.lost++
		t.sample(fmt.Sprintf("lost: %v", err))
	case !r.ok() || r.Result.IsError:
		t.failed++
		t.sample(fmt.Sprintf("failed via %q: %s", r.servedBy(), r))
	default:
		t.ok++
		t.served[r.servedBy()]++
	}
}

func (t *tally) sample(s string) {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > maxSampleBytes {
		s = s[:maxSampleBytes] + "…"
	}
	if len(t.samples) < maxSamples {
		t.samples = append(t.samples, s)
	}
}

// setPhase makes later requests count under phase.
func (l *load) setPhase(phase string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.phases[phase] == nil {
		l.phases[phase] = &tally{served: map[string]int{}}
		l.order = append(l.order, phase)
	}
	l.phase = phase
}

func (l *load) currentPhase() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.phase
}

// snapshot copies a phase's counts.
func (l *load) snapshot(phase string) tally {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := *l.phases[phase]
	t.served = make(map[string]int, len(l.phases[phase].served))
	for k, v := range l.phases[phase].served {
		t.served[k] = v
	}
	t.samples = append([]string(nil), t.samples...)
	return t
}

// waitServed waits until phase has n more successful requests answered by replica (any replica
// when replica is "") than it had when called.
func (l *load) waitServed(phase, replica string, n int) error {
	count := func() int {
		t := l.snapshot(phase)
		if replica == "" {
			return t.ok
		}
		return t.served[replica]
	}
	start := count()
	return waitFor(readyTimeout, func() error {
		if got := count() - start; got < n {
			return fmt.Errorf("%d of %d requests in phase %q served by %q", got, n, phase, replica)
		}
		return nil
	})
}

// waitSent waits until phase has sent at least n requests in all.
func (l *load) waitSent(phase string, n int) error {
	return waitFor(readyTimeout, func() error {
		if got := l.snapshot(phase).sent; got < n {
			return fmt.Errorf("%d of %d requests sent in phase %q", got, n, phase)
		}
		return nil
	})
}

// finish stops the clients and waits for their last requests. It may be called again.
func (l *load) finish() {
	l.once.Do(func() { close(l.stop) })
	l.wg.Wait()
}

// String is the figures of every phase, for t.Logf.
func (t tally) String() string {
	names := make([]string, 0, len(t.served))
	for k := range t.served {
		names = append(names, k)
	}
	sort.Strings(names)
	var by []string
	for _, k := range names {
		by = append(by, fmt.Sprintf("%s=%d", k, t.served[k]))
	}
	s := fmt.Sprintf("sent %d, ok %d, failed %d, lost %d (served by %s)", t.sent, t.ok, t.failed, t.lost, strings.Join(by, " "))
	if len(t.samples) > 0 {
		s += "; first failures: " + strings.Join(t.samples, " | ")
	}
	return s
}

// loadTransport keeps one idle connection per client to the balancer instead of the default
// two in total, so the load reuses connections as a real client pool does.
func loadTransport() http.RoundTripper {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = loadWorkers
	return tr
}
