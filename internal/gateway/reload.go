package gateway

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"reflect"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/configerr"
	"github.com/mcp-gateway/gateway/metrics"
)

// Reloading the configuration without a restart (docs/deploy.md, "Changing the configuration").
//
// On SIGHUP the configuration is loaded again from the same file, environment and flags and
// validated completely: everything `serve` checks before it binds a port, and then a whole new
// component set is built from it (backends, policy and authentication, tool sets, pins, rate
// limits, the approval page, the endpoint and the admin routes), with every secret and the pins
// lock file read again. Only when all of that succeeded, and the keys of every issuer are in
// hand, does the new set replace the running one, in one atomic step (swap.go); requests in
// flight finish on the set they started on. Anything that fails refuses the reload: the running
// configuration stays, the errors are logged, and mcp_gateway_config_reloads_total{result=
// "failure"} counts it.
//
// Some settings shape what lives as long as the process (restartOnly): a reload keeps their
// running values, applies everything else, and reports them, in the log and in
// mcp_gateway_config_restart_required, as waiting for a restart.

// reloadSource is where a reload's configuration comes from and what asks for one.
type reloadSource struct {
	// load reads the configuration again, as at start-up.
	load func() (*Config, error)
	// trigger asks for a reload (SIGHUP).
	trigger <-chan os.Signal
	// results, when set, receives each reload's outcome (tests).
	results chan<- error
}

func (s *reloadSource) signals() <-chan os.Signal {
	if s == nil {
		return nil
	}
	return s.trigger
}

func (s *reloadSource) report(err error) {
	if s != nil && s.results != nil {
		s.results <- err
	}
}

// serveReloading is `gateway serve`: cfg is served, and load gives the configuration again on
// every SIGHUP (which would otherwise end the process).
func serveReloading(ctx context.Context, cfg *Config, load func() (*Config, error), getenv func(string) string, stderr io.Writer) error {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	return run(ctx, cfg, runOptions{getenv: getenv, stderr: stderr, reload: &reloadSource{load: load, trigger: hup}})
}

// ignoreReloads says, once for each, that a reload asked for during the drain is ignored:
// serve's loop no longer reads the signal, and a SIGHUP (a config-reloader sidecar during a
// rollout) would otherwise vanish without a word. The returned func stops it once the drain
// is over.
func ignoreReloads(log *slog.Logger, reload *reloadSource) (stop func()) {
	asked := reload.signals()
	if asked == nil {
		return func() {}
	}
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		for {
			select {
			case <-asked:
				log.Info("reload ignored: the gateway is draining")
			case <-done:
				return
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

// errDraining refuses a reload that arrives once the gateway is stopping.
var errDraining = errors.New("the gateway is draining: a reload would serve nobody")

// reloadState is what the process keeps about reloads. Reloads, start-up and the drain all run
// on serve's goroutine; mu also covers the retiring sets' reads.
type reloadState struct {
	mu       sync.Mutex
	running  *Config // the configuration being served, restart-only settings as started
	draining bool
	runCtx   context.Context // the process's background context: each set's derives from it
	// metricUpstreams, metricToolsets and metricInterceptors are the label values the
	// recorders were built with: fixed for the life of the process (bounded labels).
	metricUpstreams, metricToolsets, metricInterceptors []string
	// contentKey and content are what the restart-only settings read at start-up, digested
	// (restartcontent.go): the process keeps it until a restart, whatever the files hold now.
	contentKey []byte
	content    contentDigests

	// metrics records the reloads (mcp_gateway_config_*).
	metrics *metrics.Reloads
}

// register exports the reload metrics, as of a start-up at now.
func (r *reloadState) register(reg prometheus.Registerer, now time.Time) error {
	r.metricUpstreams = r.running.upstreamNames()
	r.metricInterceptors = r.running.interceptorNames()
	for _, ts := range r.running.Toolsets {
		r.metricToolsets = append(r.metricToolsets, ts.Name)
	}
	var err error
	if r.metrics, err = metrics.NewReloads(reg, now); err != nil {
		return err
	}
	r.metrics.Serving(r.running.src.sum)
	return nil
}

// reloadFrom reloads the configuration src loads, logs and counts the outcome. ctx is the
// process's: once it is done (SIGTERM) a reload still fetching issuer keys gives up.
func (g *gateway) reloadFrom(ctx context.Context, src *reloadSource) error {
	g.log.Info("reloading the configuration")
	// redacted as check-config's errors are: a refused file's errors quote its URLs, and an
	// issuer's keys not fetched quote the client's error, URL and all.
	err := redacted(g.reload(ctx, src))
	r := &g.reloads
	if err != nil {
		r.metrics.Refused()
		g.log.Error("configuration reload refused; the running configuration stays", "error", err.Error())
		return err
	}
	r.metrics.Applied(time.Now())
	r.metrics.Serving(r.running.src.sum)
	return nil
}

// nextSet is a configuration loaded, validated and built, with its issuers' keys in hand, not
// yet serving: what a reload applies once there is room for it.
type nextSet struct {
	cfg     *Config
	c       *components
	prev    *components // the set it replaces
	restart []string    // the settings that wait for a restart
}

// reload validates and builds the configuration src loads and, when all went well, makes it
// the one new requests are served with. The previous set retires in the background. A reload
// asked for again while this one waits for room (awaitRoom), or while it built the set (the
// fetch of an issuer's keys takes up to twice auth.fetchTimeout), is the operator's latest
// word: the set built from the file as it was is dropped unused and the file is read again, so
// the latest configuration is the one applied, or refused with the running one kept. Applying
// the superseded set first would serve it for nothing and make the latest wait, in awaitRoom,
// for the requests of the set it replaced, up to their server.shutdownTimeout. The file is read
// again at most once for a reload asked for while building (a SIGHUP arriving during each build
// would otherwise keep any from being applied): one arriving during the second build is the
// next reload.
func (g *gateway) reload(ctx context.Context, src *reloadSource) error {
	r := &g.reloads
	r.mu.Lock()
	defer r.mu.Unlock()
	asked := src.signals()
	for first := true; ; first = false {
		if r.draining {
			return errDraining
		}
		n, err := g.buildNext(ctx, src.load)
		if err != nil {
			return err
		}
		again, err := g.awaitRoom(ctx, n.prev, asked)
		if err != nil {
			n.c.close()
			return err
		}
		switch {
		case again:
			g.log.Info("reloading the configuration again: it was asked for while the reload waited")
		case first && askedMeanwhile(asked):
			g.log.Info("reloading the configuration again: it was asked for while the reload built the configuration and fetched its issuers' keys")
		default:
			g.apply(ctx, n)
			return nil
		}
		n.c.close()
	}
}

// readUntil runs read, which reads files, until ctx is done (SIGTERM): the configuration file
// and every file it names (secrets, certificates, the pins lock file), and those the settings
// only a restart changes read. A file that does not answer (a named pipe nobody writes to, a
// hung network mount) would otherwise hold serve's goroutine, where SIGTERM starts the drain,
// in the read: the replica would go on reporting ready to its load balancer and never drain,
// until killed. The read left behind ends with the process; what it returns, if anything, is
// dropped.
func readUntil[T any](ctx context.Context, read func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := read()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, errDraining
	}
}

// askedMeanwhile reports whether a reload was asked for on asked and not yet taken, taking it.
func askedMeanwhile(asked <-chan os.Signal) bool {
	select {
	case <-asked:
		return true
	default:
		return false
	}
}

// buildNext loads the configuration, completes it with the running values of the settings only a
// restart changes, validates it, builds its components on the running set and fetches its
// issuers' keys. Nothing it builds serves until apply.
func (g *gateway) buildNext(ctx context.Context, load func() (*Config, error)) (*nextSet, error) {
	r := &g.reloads
	running, key := r.running, r.contentKey
	type read struct {
		next    *Config
		content contentDigests // what running's restart-only settings read now
	}
	got, err := readUntil(ctx, func() (read, error) {
		next, err := load()
		if err != nil {
			return read{}, err
		}
		return read{next, restartOnlyContent(running, g.getenv, key)}, nil
	})
	if err != nil {
		return nil, err
	}
	next := got.next
	restart := keepRestartOnly(next, running)
	restart = append(restart, contentChanged(r.content, got.content, restart)...)
	restart = append(restart, r.newLabels(next)...)
	// Complete validated next as loaded; with the restart-only settings put back the whole
	// must still hold together (auth.disabled and the listener, for example).
	if err := next.validate(); err != nil {
		return nil, fmt.Errorf("invalid configuration with the running values of the settings that need a restart:\n%w", err)
	}
	prev := g.current.Load()
	c, err := g.buildComponents(next, prev)
	if err != nil {
		return nil, err
	}
	if err := fetchIssuerKeys(ctx, c, next); err != nil {
		c.close()
		if ctx.Err() != nil {
			return nil, errDraining
		}
		return nil, err
	}
	return &nextSet{cfg: next, c: c, prev: prev, restart: restart}, nil
}

// apply makes n's set the one new requests are served by and retires the one it replaces. ctx
// is the process's: judging the streams of the replaced set ends with it.
func (g *gateway) apply(ctx context.Context, n *nextSet) {
	c, prev := n.c, n.prev
	c.admin.SetReady(true)
	g.activate(c, prev)
	if c.auth != nil && prev.auth != nil {
		// The streams prev's issuers verified and that run on (a pre-2026 client's GET
		// stream) follow the issuers' keys as c fetches them, not prev's sets, which nothing
		// fetches any more; those of an issuer c no longer trusts end now.
		c.auth.Authenticator().Replaces(prev.auth.Authenticator())
	}
	// Those whose caller c would refuse end now and are opened again under c.
	g.endRefusedStreams(ctx, prev, c)
	// Calls in flight finish on prev; its listens end now and their clients listen again
	// under c, rather than receive notifications filtered by the replaced policy until
	// server.shutdownTimeout.
	prev.mcpServer.EndListens()
	g.startComponents(c)
	g.reloads.running = n.cfg
	g.sets.retiring.Add(1)
	// prev's requests keep the time prev promised them, its own server.shutdownTimeout: a
	// reload that lowers it must not cut calls already running sooner than that.
	go g.retire(prev, prev.cfg.Server.ShutdownTimeout)
	g.logReload(prev, c, n.restart)
}

// awaitRoom waits until current is the only live set, so that activating the next one leaves
// at most two: each set has its own request and concurrency budgets (server.maxConcurrent,
// server.maxBodyBytesInFlight, server.maxResultBytesInFlight), and docs/deploy.md promises a
// replica at most twice them during a reload. Reloads in quick succession would otherwise keep
// a set live for each one still within its server.shutdownTimeout. The set being replaced still
// finishing its requests is waited for, which is bounded by its own shutdown timeout (after
// which retire ends them), rather than hurried: its calls keep the time they were promised.
// The wait ends when ctx does (SIGTERM), and the reload is then refused as draining.
//
// A reload asked for on asked meanwhile (an operator's corrected file) is not left for later:
// again reports it, however many arrived, and the first is logged and counted as a wait.
func (g *gateway) awaitRoom(ctx context.Context, current *components, asked <-chan os.Signal) (again bool, err error) {
	older, running := g.olderSets(current)
	if len(older) == 0 {
		return false, nil
	}
	g.reloads.metrics.Waited()
	g.log.Warn("reload waits for the configuration replaced by the last reload to finish its requests: a replica runs at most two configurations at once",
		"requests", running)
	for _, c := range older {
		for waiting := true; waiting; {
			select {
			case <-c.retired:
				waiting = false
			case <-asked:
				if !again {
					again = true
					g.reloads.metrics.Waited()
					g.log.Info("reload asked for again while one waits: once the wait is over the configuration file is read again and the latest one applied")
				}
			case <-ctx.Done():
				return false, errDraining
			}
		}
	}
	return again, nil
}

// olderSets are the live sets other than current, and the requests they have in flight.
func (g *gateway) olderSets(current *components) (older []*components, running int64) {
	g.sets.each(func(c *components) {
		if c != current {
			older = append(older, c)
			running += c.gate.inFlight()
		}
	})
	return older, running
}

// fetchIssuerKeys fetches the keys of every issuer of c not taken over from the running set.
// A reload is applied only once every issuer's keys are in hand: a typo'd issuer would
// otherwise take every replica out of the load balancer at once, since all of them reload the
// same file. The fetch ends when ctx does: a SIGTERM arriving meanwhile must start the drain at
// once, not after up to twice auth.fetchTimeout, which terminationGracePeriodSeconds does not
// allow for.
func fetchIssuerKeys(ctx context.Context, c *components, cfg *Config) error {
	if c.auth == nil {
		return nil
	}
	timeout := cmp.Or(cfg.Auth.FetchTimeout, authz.DefaultFetchTimeout)
	// Discovery, then the key set: two requests, each bounded by the fetch timeout.
	ctx, cancel := context.WithTimeout(ctx, 2*timeout+time.Second)
	defer cancel()
	return issuerKeyPaths(c.auth.Authenticator().FetchKeys(ctx), cfg.Auth.Issuers)
}

// issuerKeyPaths names each issuer whose keys could not be fetched by its key path
// (auth.issuers[i]), as every other problem that refuses a configuration is named.
func issuerKeyPaths(err error, issuers []authz.IssuerConfig) error {
	var pending authz.PendingKeysError
	if !errors.As(err, &pending) {
		return err
	}
	errs := make([]error, 0, len(pending))
	for _, ie := range pending {
		i := slices.IndexFunc(issuers, func(is authz.IssuerConfig) bool { return is.Issuer == ie.Issuer })
		if i < 0 {
			errs = append(errs, ie)
			continue
		}
		errs = append(errs, configerr.At(fmt.Sprintf("auth.issuers[%d]", i), "%w", ie))
	}
	return errors.Join(errs...)
}

// logReload says what the reload changed in the backends and what waits for a restart.
func (g *gateway) logReload(prev, c *components, restart []string) {
	was, now := prev.backends.Upstreams(), c.backends.Upstreams()
	var added, removed []string
	for _, n := range now {
		if !slices.Contains(was, n) {
			added = append(added, n)
		}
	}
	for _, n := range was {
		if !slices.Contains(now, n) {
			removed = append(removed, n)
		}
	}
	g.log.Info("configuration reloaded", "upstreams", len(now), "added", added, "removed", removed,
		"previous_requests_in_flight", prev.gate.inFlight())
	warnServing(c.cfg, g.log)
	if len(restart) > 0 {
		g.reloads.metrics.RestartRequired(true)
		g.log.Warn("settings that take effect only on a restart changed; they keep their running values", "settings", restart)
	} else {
		g.reloads.metrics.RestartRequired(false)
	}
}

// stopReloads refuses every later reload, reports the gateway not ready, and returns the
// running configuration for the drain.
func (g *gateway) stopReloads() *Config {
	r := &g.reloads
	r.mu.Lock()
	defer r.mu.Unlock()
	r.draining = true
	g.current.Load().admin.SetReady(false)
	return r.running
}

// keepRestartOnly gives next the running values of the settings only a restart can change, and
// returns the names of those next had changed. They belong to what lives as long as the
// process: the listeners and their TLS mode, the log, the sealing keys (every requestState,
// cursor, session id and approval record in flight was sealed with them), the shared store's
// connection, and the tracer.
func keepRestartOnly(next, running *Config) []string {
	var changed []string
	for _, s := range []struct {
		name    string
		changed bool
	}{
		{"server.listen", keep(&next.Server.Listen, running.Server.Listen)},
		{"server.tls", keep(&next.Server.TLS, running.Server.TLS)},
		{"server.readHeaderTimeout", keep(&next.Server.ReadHeaderTimeout, running.Server.ReadHeaderTimeout)},
		{"server.idleTimeout", keep(&next.Server.IdleTimeout, running.Server.IdleTimeout)},
		{"server.maxHeaderBytes", keep(&next.Server.MaxHeaderBytes, running.Server.MaxHeaderBytes)},
		{"admin.listen", keep(&next.Admin.Listen, running.Admin.Listen)},
		{"log", keep(&next.Log, running.Log)},
		{"mrtr", keep(&next.MRTR, running.MRTR)},
		{"redis", keep(&next.Redis, running.Redis)},
		{"tracing", keep(&next.Tracing, running.Tracing)},
	} {
		if s.changed {
			changed = append(changed, s.name)
		}
	}
	return changed
}

// keep sets *dst to running and reports whether it differed.
func keep[T any](dst *T, running T) bool {
	differs := !reflect.DeepEqual(*dst, running)
	*dst = running
	return differs
}

// newLabels names the backends and tool sets of next the metrics were not built with: their
// series are counted under "_other" until a restart (metric labels are a closed set).
func (r *reloadState) newLabels(next *Config) []string {
	var out []string
	for _, n := range next.upstreamNames() {
		if !slices.Contains(r.metricUpstreams, n) {
			out = append(out, "metric labels of upstream "+n)
		}
	}
	for _, ts := range next.Toolsets {
		if !slices.Contains(r.metricToolsets, ts.Name) {
			out = append(out, "metric labels of tool set "+ts.Name)
		}
	}
	for _, n := range next.interceptorNames() {
		if !slices.Contains(r.metricInterceptors, n) {
			out = append(out, "metric labels of interceptor "+n)
		}
	}
	return out
}
