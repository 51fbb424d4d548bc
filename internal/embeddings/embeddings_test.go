package embeddings

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/embedtest"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

const testKey = "sk-test-secret-key-0123456789"

// observed counts what the embedder reports.
type observed struct {
	mu        sync.Mutex
	failures  map[string]int
	fallbacks map[string]int
	ok        int
	cache     int64
}

func (o *observed) Request(_ string, _ time.Duration, _ int, reason string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if reason == "" {
		o.ok++
		return
	}
	o.failures[reason]++
}

func (o *observed) Fallback(reason string) {
	o.mu.Lock()
	o.fallbacks[reason]++
	o.mu.Unlock()
}

func (o *observed) CacheBytes(n int64) {
	o.mu.Lock()
	o.cache = n
	o.mu.Unlock()
}

func (o *observed) counts() (failures, fallbacks map[string]int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	f, b := map[string]int{}, map[string]int{}
	for k, v := range o.failures {
		f[k] = v
	}
	for k, v := range o.fallbacks {
		b[k] = v
	}
	return f, b
}

// fixtureStart is the time of a fixture's clock when it starts.
var fixtureStart = time.Date(2026, 12, 6, 8, 0, 0, 0, time.UTC)

// fixture is an embedder in front of a stand-in server, on a manual clock.
type fixture struct {
	srv   *embedtest.Server
	e     *Embedder
	obs   *observed
	clock *mcptest.Clock
	logs  *mcptest.LogBuffer
}

func newFixture(t *testing.T, edit func(*Config)) *fixture {
	t.Helper()
	f := &fixture{srv: embedtest.Start(t, testKey), obs: &observed{failures: map[string]int{}, fallbacks: map[string]int{}},
		clock: mcptest.NewClock(fixtureStart), logs: &mcptest.LogBuffer{}}
	cfg := Config{URL: f.srv.URL, Model: "stand-in", Timeout: 500 * time.Millisecond, BatchSize: 4}
	if edit != nil {
		edit(&cfg)
	}
	if err := cfg.Validate("search.embeddings"); err != nil {
		t.Fatal(err)
	}
	f.e = New(cfg, testKey, Deps{Log: slog.New(slog.NewTextHandler(f.logs, nil)), Observer: f.obs, Now: f.clock.Now})
	t.Cleanup(f.e.Close)
	return f
}

var toolTexts = []string{"gh create issue. Open a new issue", "fs read file. Read a file", "web take screenshot. Capture the page",
	"kube scale. Scale a deployment", "db query. Run a read-only SQL query", ""}

// ready embeds the tool texts and waits for them.
func (f *fixture) ready(t *testing.T, texts []string) *Vectors {
	t.Helper()
	v := f.e.Catalog(texts, "")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if !v.Wait(ctx) {
		t.Fatal("tool vectors not ready")
	}
	return v
}

func TestDenseAnswers(t *testing.T) {
	f := newFixture(t, nil)
	v := f.ready(t, toolTexts)
	q, tools, ok := f.e.Dense(context.Background(), v, "caller", "take a screenshot")
	if !ok || len(q) != embedtest.DefaultDims || len(tools) != len(toolTexts) || tools[5] != nil {
		t.Fatalf("Dense: ok %v, %d dims, %d tools", ok, len(q), len(tools))
	}
	for i, want := range toolTexts[:5] {
		if got := tools[i]; len(got) != embedtest.DefaultDims || got[0] != embedtest.Vector(want, embedtest.DefaultDims)[0] {
			t.Errorf("tool %d's vector is not its text's", i)
		}
	}
	// Five texts in batches of four: two requests; the empty text (a tool never ranked) is not sent.
	if req, texts := f.srv.Counts(); req != 3 || texts != 6 {
		t.Errorf("server saw %d requests, %d texts; want 3 and 6 (two batches of tools, one query)", req, texts)
	}
}

// TestNoToolRankedSendsNoQuery: over a catalog version with no tool to rank (empty, or every
// tool hidden from search) a search has nothing to fuse: it sends no query out and counts no
// fallback (the endpoint did nothing wrong).
func TestNoToolRankedSendsNoQuery(t *testing.T) {
	f := newFixture(t, nil)
	for _, texts := range [][]string{nil, {"", ""}} {
		v := f.ready(t, texts)
		if _, _, ok := f.e.Dense(context.Background(), v, "caller", "secret query words"); ok {
			t.Errorf("%d tools, none ranked: Dense fused", len(texts))
		}
	}
	failures, fallbacks := f.obs.counts()
	if req, _ := f.srv.Counts(); req != 0 || len(failures) != 0 || len(fallbacks) != 0 {
		t.Errorf("%d requests, failures %v, fallbacks %v; want none", req, failures, fallbacks)
	}
}

// TestCacheReembedsOnlyChanged: a new catalog version sends only the texts that changed.
func TestCacheReembedsOnlyChanged(t *testing.T) {
	f := newFixture(t, nil)
	f.ready(t, toolTexts)
	_, before := f.srv.Counts()
	next := append([]string(nil), toolTexts...)
	next[1] = "fs read text file. Read a whole file as text"
	f.ready(t, next)
	_, after := f.srv.Counts()
	if after-before != 1 {
		t.Errorf("a version with one changed tool sent %d texts, want 1", after-before)
	}
	if in := f.srv.Inputs(); in[len(in)-1] != next[1] {
		t.Errorf("sent %q, want the changed text", in[len(in)-1])
	}
}

// TestCacheBounded: the cache never holds more than maxCacheBytes.
func TestCacheBounded(t *testing.T) {
	c := newCache(3*(4*8+entryOverhead), nil)
	for i := range 10 {
		size := c.put(digest(strings.Repeat("x", i)), make([]float32, 8), "")
		if size > c.maxBytes {
			t.Fatalf("cache holds %d bytes, bound %d", size, c.maxBytes)
		}
	}
	if c.lru.Len() != 3 || c.get(digest(strings.Repeat("x", 9)), "") == nil || c.get(digest(""), "") != nil {
		t.Errorf("cache keeps %d entries; want the 3 most recent", c.lru.Len())
	}
}

// TestFaultsFallBack: each way the endpoint can fail makes a search fall back at once, with the
// reason counted, and a backoff: the next search does not reach the endpoint. The slow endpoint
// hangs for longer than the test may run, so a search that waited for it rather than for its
// timeout would never return: no wall-clock time is compared.
func TestFaultsFallBack(t *testing.T) {
	for _, tt := range []struct {
		name   string
		fault  embedtest.Fault
		key    string
		reason string
		wait   time.Duration // the backoff the failure starts
	}{
		{"slow", embedtest.Fault{Hang: time.Hour}, testKey, ReasonTimeout, minBackoff},
		{"wrong dimensions", embedtest.Fault{Dims: 8}, testKey, ReasonDimensions, minBackoff},
		{"garbage", embedtest.Fault{Body: `{"data":"not vectors"}`}, testKey, ReasonMalformed, minBackoff},
		{"not json", embedtest.Fault{Body: `<html>oops</html>`}, testKey, ReasonMalformed, minBackoff},
		{"too few vectors", embedtest.Fault{Body: `{"object":"list","data":[]}`}, testKey, ReasonMalformed, minBackoff},
		{"padded past its vectors", embedtest.Fault{Body: paddedAnswer(embedtest.DefaultDims, 64<<10)}, testKey, ReasonMalformed, minBackoff},
		{"rate limited", embedtest.Fault{Status: 429, RetryAfter: "120"}, testKey, ReasonRateLimited, 120 * time.Second},
		{"server error", embedtest.Fault{Status: 500}, testKey, ReasonStatus, minBackoff},
		{"unavailable", embedtest.Fault{Status: 503, RetryAfter: "30"}, testKey, ReasonStatus, 30 * time.Second},
		// A date is read against the embedder's clock (the fixture's starts at 08:00:00).
		{"unavailable until a date", embedtest.Fault{Status: 503, RetryAfter: fixtureStart.Add(90 * time.Second).Format(http.TimeFormat)},
			testKey, ReasonStatus, 90 * time.Second},
		{"refused key", embedtest.Fault{}, "sk-wrong-key", ReasonRefusedKey, minBackoff},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, nil)
			v := f.ready(t, toolTexts)
			f.e.client.setKey(tt.key)
			f.srv.SetFault(tt.fault)
			if _, _, ok := f.e.Dense(context.Background(), v, "caller", "secret query words"); ok {
				t.Fatal("Dense succeeded against a failing endpoint")
			}
			failures, fallbacks := f.obs.counts()
			if failures[tt.reason] != 1 || fallbacks[tt.reason] != 1 {
				t.Errorf("failures %v, fallbacks %v; want one %s each", failures, fallbacks, tt.reason)
			}
			// Backing off: the next searches fall back without a request, until the wait ends.
			req, _ := f.srv.Counts()
			f.clock.Advance(tt.wait - time.Millisecond)
			if _, _, ok := f.e.Dense(context.Background(), v, "caller", "again"); ok {
				t.Fatal("Dense succeeded while backing off")
			}
			if again, _ := f.srv.Counts(); again != req {
				t.Errorf("a search while backing off reached the endpoint")
			}
			if _, fallbacks = f.obs.counts(); fallbacks[ReasonBackoff] != 1 {
				t.Errorf("fallbacks %v, want one backoff", fallbacks)
			}
			// The endpoint answers again: after the wait, search is fused again.
			f.srv.SetFault(embedtest.Fault{})
			f.e.client.setKey(testKey)
			f.clock.Advance(time.Millisecond)
			if _, _, ok := f.e.Dense(context.Background(), v, "caller", "again"); !ok {
				t.Error("Dense still falls back once the endpoint answers and the backoff ended")
			}
			checkLogs(t, f.logs.String(), tt.key, tt.reason)
		})
	}
}

// paddedAnswer is a well-formed answer of one vector of dims numbers followed by pad spaces.
func paddedAnswer(dims, pad int) string {
	nums := make([]string, dims)
	for i := range nums {
		nums[i] = "0"
	}
	nums[0] = "1"
	return `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[` + strings.Join(nums, ",") + `]}]}` +
		strings.Repeat(" ", pad)
}

// TestAnswerLimitFitsRealAnswers: the bound on an answer's size holds the protocol's longest
// answer of short vectors (every number written at full float64 precision, the envelope named in
// full), so bounding by the vectors' length refuses no answer a real endpoint gives.
func TestAnswerLimitFitsRealAnswers(t *testing.T) {
	for _, dims := range []int{1, 8, 256} {
		const n = MaxBatchSize
		type item struct {
			Object    string    `json:"object"`
			Index     int       `json:"index"`
			Embedding []float64 `json:"embedding"`
		}
		data := make([]item, n)
		for i := range data {
			vec := make([]float64, dims)
			for j := range vec {
				vec[j] = -1.2345678901234567e-300
			}
			data[i] = item{Object: "embedding", Index: i, Embedding: vec}
		}
		raw, err := json.Marshal(map[string]any{"object": "list", "data": data, "model": strings.Repeat("m", 200),
			"usage": map[string]int{"prompt_tokens": 1 << 30, "total_tokens": 1 << 30}})
		if err != nil {
			t.Fatal(err)
		}
		if limit := answerLimit(n, dims); int64(len(raw)) > limit {
			t.Errorf("%d vectors of %d dimensions: an answer of %d bytes, past the limit %d", n, dims, len(raw), limit)
		}
	}
}

// TestFailureLogLimited: failures are logged at most once per logEvery, the next line saying how
// many were held back.
func TestFailureLogLimited(t *testing.T) {
	f := newFixture(t, nil)
	v := f.ready(t, toolTexts)
	f.srv.SetFault(embedtest.Fault{Status: 500})
	fail := func(backoff time.Duration) {
		t.Helper()
		if _, _, ok := f.e.Dense(context.Background(), v, "caller", "q"); ok {
			t.Fatal("Dense succeeded against a failing endpoint")
		}
		f.clock.Advance(backoff) // the backoff this failure started: the next search asks again
	}
	fail(minBackoff)
	fail(2 * minBackoff)
	fail(4 * minBackoff) // 7 s since the first line
	if failures, _ := f.obs.counts(); failures[ReasonStatus] != 3 {
		t.Fatalf("failures %v, want three status", failures)
	}
	if n := strings.Count(f.logs.String(), "embeddings endpoint failed"); n != 1 {
		t.Errorf("%d failure lines within %v, want 1", n, logEvery)
	}
	f.clock.Advance(logEvery)
	fail(0)
	logs := f.logs.String()
	if n := strings.Count(logs, "embeddings endpoint failed"); n != 2 || !strings.Contains(logs, "suppressed=2") {
		t.Errorf("after %v: %d failure lines, want 2, the second saying suppressed=2: %s", logEvery, n, logs)
	}
}

// checkLogs: one failure line, naming the reason and none of the key, the query or a tool text.
func checkLogs(t *testing.T, logs, key, reason string) {
	t.Helper()
	if !strings.Contains(logs, "embeddings endpoint failed") || !strings.Contains(logs, "reason="+reason) {
		t.Errorf("no failure line naming %s: %s", reason, logs)
	}
	for _, secret := range append([]string{key, testKey, "secret query words", "screenshot"}, toolTexts[:5]...) {
		if strings.Contains(logs, secret) {
			t.Errorf("the log names %q: %s", secret, logs)
		}
	}
}

// TestUnreachable: an endpoint that is not there fails at once, as unreachable, and a search
// then falls back without waiting for the tools' vectors, which are not being asked for.
func TestUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	f := newFixture(t, func(c *Config) { c.URL = "http://" + addr + "/v1/embeddings" })
	v := f.e.Catalog(toolTexts, "")
	if _, _, ok := f.e.Dense(context.Background(), v, "caller", "anything"); ok {
		t.Fatal("Dense succeeded with no endpoint")
	}
	// The tools' batch failed and the next is not tried while backing off: the search does not
	// wait, and sends no query.
	failures, fallbacks := f.obs.counts()
	if failures[ReasonUnreachable] == 0 || fallbacks[ReasonNotReady] != 1 {
		t.Errorf("failures %v, fallbacks %v; want unreachable batches, one not_ready", failures, fallbacks)
	}
}

// TestBackoffGrows: failures double the wait up to maxBackoff; a success resets it.
func TestBackoffGrows(t *testing.T) {
	clock := mcptest.NewClock(time.Unix(0, 0))
	g := newGuard(Config{MaxTextsPerMinute: 100, MaxConcurrent: 1}, clock.Now)
	var waits []time.Duration
	for range 12 {
		waits = append(waits, g.failed(0))
	}
	if waits[0] != minBackoff || waits[1] != 2*minBackoff || waits[11] != maxBackoff {
		t.Errorf("waits %v", waits)
	}
	if g.failed(2*time.Hour) != 2*time.Hour {
		t.Error("a Retry-After longer than the backoff is not honoured")
	}
	g.succeeded()
	if g.failed(0) != minBackoff {
		t.Error("a success does not reset the backoff")
	}
}

// TestBudget: past maxTextsPerMinute, and past maxConcurrent, a search falls back without a
// request; the budget refills with time.
func TestBudget(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.MaxTextsPerMinute = 7 })
	v := f.ready(t, toolTexts) // 5 texts of the 7
	// Three callers, each within its share (one text: an eighth of 7, at least one).
	for i, want := range []bool{true, true, false} {
		if _, _, ok := f.e.Dense(context.Background(), v, fmt.Sprint("caller-", i), "q"); ok != want {
			t.Errorf("search %d: fused %v, want %v", i, ok, want)
		}
	}
	if _, fallbacks := f.obs.counts(); fallbacks[ReasonBudget] != 1 {
		t.Errorf("fallbacks %v, want one budget", fallbacks)
	}
	f.clock.Advance(time.Minute)
	if _, _, ok := f.e.Dense(context.Background(), v, "caller-2", "q"); !ok {
		t.Error("the budget did not refill")
	}
	g := newGuard(Config{MaxTextsPerMinute: 100, MaxConcurrent: 1}, f.clock.Now)
	if g.admit(1) != nil || g.admit(1) == nil {
		t.Error("a second request in flight past maxConcurrent was admitted")
	}
}

// TestNotReady: while the tools' vectors are not there, a search waits at most the timeout and
// falls back. The tool batches hang for longer than the test may run, so a search that waited
// for them rather than for its timeout would never return: no wall-clock time is compared.
func TestNotReady(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.BatchTimeout = time.Hour })
	f.srv.SetFault(embedtest.Fault{Hang: time.Hour, MinInputs: 2}) // tool batches hang, queries are answered
	v := f.e.Catalog(toolTexts, "")
	if _, _, ok := f.e.Dense(context.Background(), v, "caller", "q"); ok {
		t.Fatal("Dense succeeded before the tools' vectors were there")
	}
	if _, fallbacks := f.obs.counts(); fallbacks[ReasonNotReady] != 1 {
		t.Errorf("fallbacks %v, want one not_ready", fallbacks)
	}
}

func TestConfigValidate(t *testing.T) {
	for _, tt := range []struct {
		cfg  Config
		want []string // each a substring of the error; none: valid
	}{
		{Config{}, nil},
		{Config{URL: "https://api.openai.com/v1/embeddings", Model: "text-embedding-3-small"}, nil},
		{Config{URL: "http://127.0.0.1:11434/v1/embeddings", Model: "nomic-embed-text"}, nil},
		{Config{URL: "http://localhost:8080/v1/embeddings", Model: "m"}, nil},
		{Config{URL: "http://embed.internal/v1/embeddings", Model: "m"}, []string{"search.embeddings.url", "want https"}},
		{Config{URL: "https://user:pw@x/v1/embeddings", Model: "m"}, []string{"user info"}},
		{Config{Model: "m"}, []string{"search.embeddings.url", "required with model"}},
		{Config{URL: "https://x/v1/embeddings"}, []string{"search.embeddings.model"}},
		{Config{URL: "https://x/e", Model: "m", Fusion: "max", Weight: -1, BatchSize: 5000, Dimensions: -1, Timeout: -1, MaxCacheBytes: -1,
			APIKeyHeader: "api key:", MaxQueriesPerCallerPerMinute: -1},
			[]string{"fusion", "weight", "batchSize", "dimensions", "timeout", "maxCacheBytes", "apiKeyHeader", "maxQueriesPerCallerPerMinute"}},
	} {
		err := tt.cfg.Validate("search.embeddings")
		if (err == nil) != (tt.want == nil) {
			t.Errorf("%+v: %v", tt.cfg, err)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%+v: %v; want it to say %q", tt.cfg, err, w)
			}
		}
	}
}

// TestWireProtocol: the request is the OpenAI protocol's, with the key as a bearer token, or in
// the header apiKeyHeader names; redirects are not followed.
func TestWireProtocol(t *testing.T) {
	var got *http.Request
	var body string
	srv := http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := make([]byte, 1024)
		n, _ := r.Body.Read(b)
		got, body = r, string(b[:n])
		http.Redirect(w, r, "http://127.0.0.1:1/elsewhere", http.StatusFound)
	})}
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	e := New(Config{URL: "http://" + l.Addr().String() + "/v1/embeddings", Model: "m", Dimensions: 64, APIKeyHeader: "api-key"}, "k1", Deps{Log: slog.New(slog.DiscardHandler)})
	defer e.Close()
	_, err := e.Query(context.Background(), "", "hello")
	if reasonOf(err) != ReasonStatus {
		t.Errorf("a redirect: %v, want a status failure", err)
	}
	if got == nil || got.Header.Get("api-key") != "k1" || got.Header.Get("Authorization") != "" ||
		body != `{"model":"m","input":["hello"],"encoding_format":"float","dimensions":64}` {
		t.Errorf("request: %v %q", got.Header, body)
	}
}

// TestCallerShare: past its share of queries a minute, a caller's searches rank lexically
// (without a request) while another caller's are still fused; the share comes back with the
// next minute; the callers counted are bounded.
func TestCallerShare(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.MaxQueriesPerCallerPerMinute = 2 })
	v := f.ready(t, toolTexts)
	for i, tt := range []struct {
		caller string
		want   bool
	}{{"alice", true}, {"alice", true}, {"alice", false}, {"bob", true}} {
		if _, _, ok := f.e.Dense(context.Background(), v, tt.caller, "q"); ok != tt.want {
			t.Errorf("search %d by %s: fused %v, want %v", i, tt.caller, ok, tt.want)
		}
	}
	if _, fallbacks := f.obs.counts(); fallbacks[ReasonCaller] != 1 {
		t.Errorf("fallbacks %v, want one caller_budget", fallbacks)
	}
	f.clock.Advance(time.Minute)
	if _, _, ok := f.e.Dense(context.Background(), v, "alice", "q"); !ok {
		t.Error("alice's share did not come back with the next minute")
	}
	w := callerWindow{per: 1}
	now := time.Unix(0, 0)
	for i := range maxTrackedCallers {
		w.take(strconv.Itoa(i), 1, now)
	}
	if w.take("one more", 1, now) || len(w.counts) != maxTrackedCallers {
		t.Errorf("a caller past maxTrackedCallers was counted: %d tracked", len(w.counts))
	}
}

// TestCallerWindowBytes: a caller counted is kept in a fixed size, however long its name (an
// issuer and a subject, as long as a token can carry): maxTrackedCallers callers of 4 KiB names
// hold far less than their names.
func TestCallerWindowBytes(t *testing.T) {
	const nameBytes = 4 << 10
	w := callerWindow{per: 1}
	now := time.Unix(0, 0)
	pad := strings.Repeat("s", nameBytes)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range maxTrackedCallers {
		if !w.take("https://issuer.example#"+strconv.Itoa(i)+pad, 1, now) {
			t.Fatalf("caller %d not counted", i)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	names := int64(maxTrackedCallers * nameBytes)
	t.Logf("%d callers of %d-byte names hold %d bytes", maxTrackedCallers, nameBytes, held)
	if len(w.counts) != maxTrackedCallers || held > names/8 {
		t.Errorf("%d callers hold %d bytes; their names are %d bytes, want at most an eighth", len(w.counts), held, names)
	}
}

// TestCallerGoneIsNoFailure: a search whose caller goes away while its query is being embedded
// is not the endpoint's failure: no failure is counted and no backoff starts. The endpoint and
// the timeout outlast the test, so only the caller's going away ends the search, however late
// the cancellation comes on a loaded machine.
func TestCallerGoneIsNoFailure(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.Timeout = time.Hour })
	v := f.ready(t, toolTexts)
	f.srv.SetFault(embedtest.Fault{Hang: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	if _, _, ok := f.e.Dense(ctx, v, "caller", "q"); ok {
		t.Fatal("Dense succeeded for a caller gone")
	}
	failures, fallbacks := f.obs.counts()
	if len(failures) != 0 || fallbacks[ReasonCanceled] != 1 {
		t.Errorf("failures %v, fallbacks %v; want none, one canceled", failures, fallbacks)
	}
	f.srv.SetFault(embedtest.Fault{})
	if _, _, ok := f.e.Dense(context.Background(), v, "caller", "q"); !ok {
		t.Error("the next search backs off after a caller went away")
	}
}

// TestCacheShareOneCallerCannotEvictOthers: a caller whose private catalog keeps changing has
// many new tool texts embedded, more than the whole cache holds; its vectors push out only its
// own, so bob's private catalog and a public one are found whole in the cache again: no text is
// sent to the endpoint for them.
func TestCacheShareOneCallerCannotEvictOthers(t *testing.T) {
	const vecBytes = 4*embedtest.DefaultDims + entryOverhead
	f := newFixture(t, func(c *Config) { c.MaxCacheBytes = 32 * vecBytes })
	var own, total int // counted with the cache locked
	f.e.cache.onEvict = func(o bool) {
		if o {
			own++
		} else {
			total++
		}
	}
	ready := func(texts []string, owner string) {
		t.Helper()
		v := f.e.Catalog(texts, owner)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if !v.Wait(ctx) {
			t.Fatal("tool vectors not ready")
		}
	}
	bobs, public := toolTexts[:2], toolTexts[2:4]
	ready(bobs, "https://idp#bob")
	ready(public, "")
	for i := range 10 {
		texts := make([]string, 4)
		for j := range texts {
			texts[j] = fmt.Sprintf("alice tool %d-%d. Reads the records of scope %d", i, j, i)
		}
		ready(texts, "https://idp#alice")
	}
	_, before := f.srv.Counts()
	ready(bobs, "https://idp#bob")
	ready(public, "")
	if _, after := f.srv.Counts(); after != before {
		t.Fatalf("alice's vectors pushed out bob's or the public ones: %d texts embedded again", after-before)
	}
	c := f.e.cache
	c.mu.Lock()
	defer c.mu.Unlock()
	if n, b := c.lru.Usage("https://idp#alice"); n == 0 || b > c.maxBytes/ShareDivisor || c.lru.Callers() != 2 {
		t.Fatalf("alice's share holds %d bytes of %d; %d owners indexed, want 2", b, c.maxBytes/ShareDivisor, c.lru.Callers())
	}
	if share := int(c.maxBytes / ShareDivisor / vecBytes); own != 40-share || total != 0 {
		t.Fatalf("evictions %d own, %d total; want %d, 0", own, total, 40-share)
	}
}

// TestCacheShareUse: a vector a public catalog uses leaves the caller's share it was first
// embedded for, so that caller's churn cannot drop it; a vector its caller uses again, by get
// or by put, is that caller's most recent and its least recent goes first.
func TestCacheShareUse(t *testing.T) {
	const vecBytes = 4*8 + entryOverhead
	c := newCache(ShareDivisor*2*vecBytes, nil) // each caller's share: two vectors
	vec := func() []float32 { return make([]float32, 8) }
	key := func(s string) [sha256.Size]byte { return digest(s) }
	const alice = "https://idp#alice"

	c.put(key("shared"), vec(), alice)
	if c.get(key("shared"), "") == nil {
		t.Fatal("the shared vector is not cached")
	}
	c.put(key("a1"), vec(), alice)
	c.put(key("a2"), vec(), alice)
	c.put(key("a3"), vec(), alice)
	if c.get(key("shared"), "") == nil {
		t.Error("alice's churn dropped a vector a public catalog uses")
	}
	if n, b := c.lru.Usage(alice); b != 2*vecBytes || n != 2 {
		t.Errorf("alice's share holds %d vectors of %d bytes, want two", n, b)
	}

	c.put(key("a2"), vec(), alice) // a2 used again: a3 is now alice's least recent
	c.put(key("a4"), vec(), alice)
	if c.get(key("a2"), alice) == nil || c.get(key("a3"), alice) != nil {
		t.Error("alice's share dropped the vector she used last rather than her least recent")
	}
	c.get(key("a4"), alice) // a4 used by get: a2 is now alice's least recent
	c.put(key("a5"), vec(), alice)
	if c.get(key("a4"), alice) == nil || c.get(key("a2"), alice) != nil {
		t.Error("alice's share dropped the vector she read last rather than her least recent")
	}
}

// TestTextShareOneCallerCannotStarveOthers: a caller whose private catalog has more new tool
// texts than the replica's whole budget a minute has at most its share of them sent (an eighth
// of maxTextsPerMinute); then its searches rank lexically (caller_budget), its queries included,
// while another caller's queries and its private catalog's texts still go out and its searches
// are fused. Her share comes back with the next minute.
func TestTextShareOneCallerCannotStarveOthers(t *testing.T) {
	const budget, alice, bob = 80, "https://idp#alice", "https://idp#bob"
	share := budget / ShareDivisor
	f := newFixture(t, func(c *Config) { c.MaxTextsPerMinute = budget })
	public := f.ready(t, toolTexts) // a public catalog: its texts count against no caller
	_, before := f.srv.Counts()
	texts := make([]string, budget+20)
	for i := range texts {
		texts[i] = fmt.Sprintf("alice tool %d. Reads the records of scope %d", i, i)
	}
	v := f.e.Catalog(texts, alice)
	<-v.start(alice) // her fill, until it stops
	// Batches of 4: as many as fit in her share.
	_, after := f.srv.Counts()
	sent := after - before
	if sent == 0 || sent > share {
		t.Fatalf("alice's private catalog had %d texts sent in a minute, want some, at most her share, %d", sent, share)
	}
	if _, _, ok := f.e.Dense(context.Background(), v, alice, "q"); ok {
		t.Error("alice's search over her catalog was fused past her share")
	}
	fused := 0
	for range share { // her queries: what is left of her share
		if _, _, ok := f.e.Dense(context.Background(), public, alice, "q"); ok {
			fused++
		}
	}
	if fused != share-sent {
		t.Errorf("alice had %d queries sent after %d texts of her catalog, want the rest of her share, %d", fused, sent, share-sent)
	}
	if _, fallbacks := f.obs.counts(); fallbacks[ReasonCaller] != 1+sent {
		t.Errorf("fallbacks %v, want %d caller_budget", fallbacks, 1+sent)
	}
	if _, _, ok := f.e.Dense(context.Background(), public, bob, "q"); !ok {
		t.Error("alice's texts starved bob's query")
	}
	bobs := f.e.Catalog([]string{"bob tool 1. Reads", "bob tool 2. Writes", "bob tool 3. Lists", "bob tool 4. Drops"}, bob)
	if _, _, ok := f.e.Dense(context.Background(), bobs, bob, "q"); !ok {
		t.Error("alice's texts starved bob's private catalog")
	}
	f.clock.Advance(time.Minute)
	_, before = f.srv.Counts()
	<-v.start(alice)
	if _, after := f.srv.Counts(); after-before == 0 || after-before > share {
		t.Errorf("the next minute alice's catalog had %d texts sent, want some, at most her share, %d", after-before, share)
	}
}

// TestTextSharePublicUse: once a public catalog uses a private catalog's vectors (Public), the
// texts still to embed count against no caller's share: they go out within the replica's budget
// although their first caller's share is spent, and are cached as public.
func TestTextSharePublicUse(t *testing.T) {
	const budget, alice = 80, "https://idp#alice"
	f := newFixture(t, func(c *Config) { c.MaxTextsPerMinute = budget })
	texts := make([]string, 2*budget/ShareDivisor)
	for i := range texts {
		texts[i] = fmt.Sprintf("shared tool %d. Reads the records of scope %d", i, i)
	}
	v := f.e.Catalog(texts, alice)
	<-v.start(alice) // stops at alice's share
	v.Public()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if !v.Wait(ctx) {
		t.Fatal("a catalog a public one uses was not embedded past its first caller's share")
	}
	c := f.e.cache
	c.mu.Lock()
	defer c.mu.Unlock()
	if n, _ := c.lru.Usage(alice); n == 0 || n > budget/ShareDivisor || n == len(texts) {
		t.Errorf("alice's share holds %d vectors; want only the vectors embedded for her", n)
	}
}

// TestRefusedQueryNotCounted: a search whose query the replica's budget refused sent nothing,
// so it does not count against the caller's queries of the minute: once the budget has
// refilled, within the same minute, that caller's next search is fused, not refused as if its
// refused searches had been sent.
func TestRefusedQueryNotCounted(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.MaxTextsPerMinute = 6; c.MaxQueriesPerCallerPerMinute = 2 })
	v := f.ready(t, toolTexts) // 5 texts of the 6
	if _, _, ok := f.e.Dense(context.Background(), v, "alice", "q"); !ok {
		t.Fatal("the first search was not fused")
	}
	// The budget is spent: bob's two searches are refused without being sent.
	for i := range 2 {
		if _, _, ok := f.e.Dense(context.Background(), v, "bob", "q"); ok {
			t.Fatalf("search %d fused past the budget", i)
		}
	}
	f.clock.Advance(20 * time.Second) // two texts of budget back, the same minute for bob
	if _, _, ok := f.e.Dense(context.Background(), v, "bob", "q"); !ok {
		_, fallbacks := f.obs.counts()
		t.Errorf("bob's search refused after the budget refilled: his refused queries were counted (fallbacks %v)", fallbacks)
	}
}

// TestTextSharePrivateCatalogOfTwoCallers: two callers can list the same private catalog (a
// per-user backend that lists alike for both), which then has one set of vectors. What is left
// to embed of it when a caller's search starts its fill again is charged to that caller, not
// to the caller it was first built for: bob's search is not refused because alice's share is
// spent, and the texts it sends count against bob's share and cache, never alice's.
func TestTextSharePrivateCatalogOfTwoCallers(t *testing.T) {
	const budget, alice, bob = 80, "https://idp#alice", "https://idp#bob"
	share := budget / ShareDivisor
	f := newFixture(t, func(c *Config) { c.MaxTextsPerMinute = budget })
	texts := make([]string, share+share/2)
	for i := range texts {
		texts[i] = fmt.Sprintf("shared tool %d. Reads the records of scope %d", i, i)
	}
	v := f.e.Catalog(texts, alice)
	<-v.start(alice) // stops at alice's share
	if v.Of() != nil {
		t.Fatal("alice's share embedded the whole catalog; the test needs it to stop short")
	}
	usage := func(who string) int {
		f.e.cache.mu.Lock()
		defer f.e.cache.mu.Unlock()
		n, _ := f.e.cache.lru.Usage(who)
		return n
	}
	aliceHeld := usage(alice)
	if _, _, ok := f.e.Dense(context.Background(), v, bob, "q"); !ok {
		_, fallbacks := f.obs.counts()
		t.Fatalf("bob's search over the catalog he lists was refused on alice's share (fallbacks %v)", fallbacks)
	}
	if n := usage(bob); n == 0 || n > share {
		t.Errorf("bob's share holds %d vectors, want those his search embedded (at most %d)", n, share)
	}
	if n := usage(alice); n != aliceHeld {
		t.Errorf("bob's search changed alice's share from %d vectors to %d", aliceHeld, n)
	}
}
