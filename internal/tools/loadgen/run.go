package loadgen

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Runner runs load against one endpoint. It owns its HTTP transport: connections are reused
// across operations and across Run calls until Close.
type Runner struct {
	cfg       Config
	resolver  Resolver
	transport *http.Transport
	client    *http.Client
	plan      *plan
	auth      string
	ids       atomic.Int64
	// sessions holds each worker's pre-2026 session id between phases (legacy-call), indexed
	// by worker number; each worker touches only its own entry, and phases do not overlap.
	sessions []string
}

// New validates cfg and builds a runner. resolver checks the target's host (nil: the standard
// library's resolver).
func New(cfg Config, resolver Resolver) (*Runner, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	t := newTransport(cfg.Concurrency)
	r := &Runner{
		cfg:       cfg,
		resolver:  resolverOrDefault(resolver),
		transport: t,
		client:    &http.Client{Transport: t, Timeout: cfg.Timeout},
		plan:      newPlan(&cfg),
		sessions:  make([]string, cfg.Concurrency),
	}
	r.auth = bearer(cfg.Token)
	return r, nil
}

// newTransport keeps one idle connection per worker so a closed loop never dials after warm-up,
// and never consults proxy environment variables: traffic must stay on loopback.
func newTransport(conc int) *http.Transport {
	d := newDialer()
	return &http.Transport{
		Proxy:               nil,
		DialContext:         d.DialContext,
		MaxIdleConns:        2 * conc,
		MaxIdleConnsPerHost: conc + conc/4 + 1,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
		WriteBufferSize:     16 << 10,
		ReadBufferSize:      32 << 10,
	}
}

// Close drops the runner's idle connections.
func (r *Runner) Close() { r.transport.CloseIdleConnections() }

// Run checks that the target is loopback, runs the warm-up (discarded) and the measured phase,
// and reports the measured phase. It returns early, with what was measured, when ctx ends.
func (r *Runner) Run(ctx context.Context) (*Report, error) {
	if err := CheckLoopback(ctx, r.resolver, r.cfg.URL); err != nil {
		return nil, err
	}
	if r.cfg.Warmup > 0 {
		r.phase(ctx, r.cfg.Warmup, 0)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("run cancelled during warm-up: %w", err)
	}
	cpu, err := startCPU(r.cfg.CPU)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	stats := r.phase(ctx, r.cfg.Duration, r.cfg.Requests)
	rep := newReport(&r.cfg, stats, time.Since(start))
	if rep.CPU, err = cpu.perRequest(rep.Total.HTTPRequests); err != nil {
		return nil, err
	}
	return rep, nil
}

// phase runs the closed loop until dur passes (0: no time bound) or limit operations were
// started (0: no count bound), and returns every worker's figures merged.
func (r *Runner) phase(ctx context.Context, dur time.Duration, limit int64) *stats {
	var stop atomic.Bool
	if dur > 0 {
		t := time.AfterFunc(dur, func() { stop.Store(true) })
		defer t.Stop()
	}
	var started atomic.Int64
	next := func() bool {
		if stop.Load() || ctx.Err() != nil {
			return false
		}
		return limit == 0 || started.Add(1) <= limit
	}
	all := make([]*stats, r.cfg.Concurrency)
	var wg sync.WaitGroup
	for i := range all {
		all[i] = newStats()
		wg.Go(func() { r.worker(ctx, i, all[i], next) })
	}
	wg.Wait()
	for _, s := range all[1:] {
		all[0].merge(s)
	}
	return all[0]
}

// worker is one closed-loop client: it sends the next operation only when the last completed.
func (r *Runner) worker(ctx context.Context, n int, s *stats, next func() bool) {
	w := &wire{http: r.client, url: r.cfg.URL, auth: r.auth, ids: func() int64 { return r.ids.Add(1) },
		session: r.sessions[n]}
	defer func() { r.sessions[n] = w.session }()
	rng := rand.New(rand.NewPCG(uint64(n), 0x6d63706c6f6164))
	total := 0
	for _, m := range r.cfg.Mix {
		total += m.Weight
	}
	prefix := "p" + strconv.Itoa(n) + "-"
	for seq := 0; next(); seq++ {
		op := pick(r.cfg.Mix, rng.IntN(total))
		if op == OpLegacyCall && w.session == "" {
			t0 := time.Now()
			reqs, err := w.legacyHandshake(ctx)
			s.record(OpLegacyInit, time.Since(t0), reqs, err)
			if err != nil {
				continue
			}
		}
		t0 := time.Now()
		reqs, err := r.plan.run(ctx, w, op, prefix+strconv.Itoa(seq))
		s.record(op, time.Since(t0), reqs, err)
	}
}

// pick returns the operation whose cumulative weight range holds x in [0, total).
func pick(m Mix, x int) Op {
	for _, w := range m {
		if x < w.Weight {
			return w.Op
		}
		x -= w.Weight
	}
	return m[len(m)-1].Op
}
