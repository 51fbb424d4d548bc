package gateway

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/configerr"
	"github.com/mcp-gateway/gateway/internal/embeddings"
	"github.com/mcp-gateway/gateway/internal/intercept"
	"github.com/mcp-gateway/gateway/internal/seal"
	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/internal/tracing"
	"github.com/mcp-gateway/gateway/internal/useroauth"
	"github.com/mcp-gateway/gateway/internal/webpage"
	"github.com/mcp-gateway/gateway/upstreams"
	"github.com/mcp-gateway/gateway/upstreams/backend"
)

// onlineCheckTimeout bounds each item check-config --online contacts: an issuer's discovery and
// key set together, or a backend's discovery and tool list together.
const onlineCheckTimeout = 15 * time.Second

// maxOnlineChecks bounds the items check-config --online contacts at once.
const maxOnlineChecks = 8

// onlineResult is one line of check-config --online: the item and what it answered.
type onlineResult struct {
	item, detail string
	err          error
}

// onlineCheck contacts one item.
type onlineCheck func(context.Context) onlineResult

// checkOnline contacts everything the configuration names that serve would contact, at most
// maxOnlineChecks at a time, each within onlineCheckTimeout: each issuer's discovery document
// and key set, Redis, each backend, each interceptor, the approval page's sign-in issuer, the
// authorization servers of per-user OAuth backends, the token endpoints of token-exchange
// backends, the embeddings endpoint and the tracing collector. It prints one line per item, in
// configuration order, and fails when any item failed.
func (c *Config) checkOnline(ctx context.Context, getenv func(string) string, w io.Writer) error {
	var checks []onlineCheck
	if !c.Auth.Disabled {
		for i := range c.Auth.Issuers {
			checks = append(checks, func(ctx context.Context) onlineResult { return probeIssuer(ctx, c.Auth.Config, i) })
		}
	}
	if c.Redis.enabled() {
		checks = append(checks, func(ctx context.Context) onlineResult { return c.Redis.probe(ctx, getenv) })
	}
	reg, err := operatorRegistry(c, getenv)
	if err != nil {
		return err
	}
	defer reg.Close()
	for i, u := range c.Upstreams {
		checks = append(checks, func(ctx context.Context) onlineResult { return probeBackend(ctx, reg, i, u) })
	}
	checks = append(checks, backendAuthChecks(c)...)
	ics, err := c.interceptorConfigs(func(s Secret) (string, error) { return s.resolve(getenv) })
	if err != nil {
		return err
	}
	for i, ic := range ics {
		checks = append(checks, func(ctx context.Context) onlineResult { return probeInterceptor(ctx, i, ic) })
	}
	if c.Approval.Enabled() && !c.Auth.Disabled {
		checks = append(checks, func(ctx context.Context) onlineResult { return probeSignIn(ctx, c.approvalConfig().Issuer) })
	}
	if c.Search.Embeddings.Enabled() {
		checks = append(checks, func(ctx context.Context) onlineResult { return c.Search.Embeddings.probe(ctx, getenv) })
	}
	if c.Tracing.Enabled() {
		checks = append(checks, func(ctx context.Context) onlineResult { return probeTracing(ctx, c.Tracing, getenv) })
	}
	return reportOnline(w, runOnline(ctx, checks, nil))
}

// runOnline runs checks, at most maxOnlineChecks at once, each within onlineCheckTimeout, and
// returns their results in order. full, if set, is called with the number of checks started so
// far each time the next must wait for a running one to end, just before it waits (tests see
// the bound hold with it).
func runOnline(ctx context.Context, checks []onlineCheck, full func(started int)) []onlineResult {
	results := make([]onlineResult, len(checks))
	slots := make(chan struct{}, maxOnlineChecks)
	var wg sync.WaitGroup
	for i, check := range checks {
		select {
		case slots <- struct{}{}:
		default:
			if full != nil {
				full(i)
			}
			slots <- struct{}{}
		}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			ctx, cancel := context.WithTimeout(ctx, onlineCheckTimeout)
			defer cancel()
			results[i] = check(ctx)
		}()
	}
	wg.Wait()
	return results
}

// reportOnline prints one line per result and fails when any item failed.
func reportOnline(w io.Writer, results []onlineResult) error {
	failed := 0
	for _, r := range results {
		if r.err != nil {
			failed++
			// A client's error repeats the URL it was sent to (*url.Error), query and all.
			fmt.Fprintf(w, "FAILED %s: %s\n", r.item, oneLine(configerr.RedactURLs(r.err.Error())))
			continue
		}
		fmt.Fprintf(w, "ok     %s: %s\n", r.item, configerr.RedactURLs(r.detail))
	}
	if failed > 0 {
		return fmt.Errorf("check-config --online: %d of %d item(s) failed", failed, len(results))
	}
	return nil
}

// probeIssuer probes issuer i of cfg, serve's authentication settings, with the client serve's
// authenticator builds for all of cfg (nil): it reaches and refuses what serve would, whichever
// configured issuer's host another issuer's documents name.
func probeIssuer(ctx context.Context, cfg authz.Config, i int) onlineResult {
	r := onlineResult{item: fmt.Sprintf("auth.issuers[%d] %s", i, cfg.Issuers[i].Issuer)}
	p, err := authz.ProbeIssuer(ctx, cfg, i)
	if err != nil {
		r.err = err
		return r
	}
	how := "key set " + p.JWKSURL
	if p.Discovered {
		how = "discovery, key set " + p.JWKSURL
	}
	r.detail = fmt.Sprintf("%s: %d usable key(s)", how, p.Keys)
	return r
}

// probe connects to Redis as serve will and sends a PING: with Redis down, serve starts but its
// /readyz stays 503 (admin.redisReadiness: required) and every confirmation is refused.
func (c RedisConfig) probe(ctx context.Context, getenv func(string) string) onlineResult {
	r := onlineResult{item: "redis " + c.where()}
	st, err := c.newStore(getenv, slog.New(slog.DiscardHandler), prometheus.NewRegistry())
	if err != nil {
		r.err = err
		return r
	}
	defer st.Close()
	if r.err = st.Ping(ctx); r.err != nil {
		return r
	}
	if vc, ok := st.(store.VersionChecker); ok {
		if r.err = vc.CheckVersion(ctx); r.err != nil {
			return r
		}
	}
	// A read, a write and a script under the key prefix, as every confirmation, pin and limit
	// makes: a Redis ACL that does not grant the prefix's keys answers PING and refuses the
	// read (NOPERM); a read-only replica, or an ACL that grants reads only, refuses the write
	// (READONLY, NOPERM); an ACL without scripting refuses the script that every rate limit
	// and hold runs. The key written is deleted at once; the rate limit's bucket and its charge's
	// marker live for seconds.
	key := "check-config:" + strconv.FormatInt(time.Now().UnixNano(), 36)
	steps := []struct {
		what string
		do   func() error
	}{
		{"read", func() error { _, _, err := st.Get(ctx, key); return err }},
		{"write", func() error { return st.Set(ctx, key, []byte("check-config"), onlineProbeTTL) }},
		{"delete", func() error { return st.Delete(ctx, key) }},
		{"script (rate limit)", func() error {
			_, err := st.Allow(ctx, key, store.Limit{Rate: 1, Period: onlineProbeTTL})
			return err
		}},
	}
	for _, step := range steps {
		if err := step.do(); err != nil {
			r.err = fmt.Errorf("redis.keyPrefix %q: %s: %w", c.KeyPrefixOrDefault(), step.what, err)
			return r
		}
	}
	r.detail = "PING answered, keys under " + strconv.Quote(c.KeyPrefixOrDefault()) + " readable, writable and scriptable"
	return r
}

// reportedURL is how a line names an endpoint: as every configuration message quotes a URL
// (configerr.URL), without user information or query values, either of which may carry a
// credential (an endpoint keyed by ?key=).
func reportedURL(raw string) string { return configerr.URL(raw) }

// onlineProbeTTL is how long the keys check-config --online writes to Redis live.
const onlineProbeTTL = 10 * time.Second

// probe asks the embeddings endpoint for one vector, with the configured key and timeout, as a
// search will: a refused key or a wrong model otherwise shows only as searches ranked lexically.
func (c EmbeddingsConfig) probe(ctx context.Context, getenv func(string) string) onlineResult {
	r := onlineResult{item: "search.embeddings " + reportedURL(c.URL)}
	key, err := c.apiKey(getenv)
	if r.err = err; err != nil {
		return r
	}
	e := embeddings.New(c.Config, key, embeddings.Deps{Log: slog.New(slog.DiscardHandler)})
	defer e.Close()
	dims, err := e.Probe(ctx)
	if r.err = err; err == nil {
		r.detail = fmt.Sprintf("model %s: %d dimensions", c.Model, dims)
	}
	return r
}

func probeBackend(ctx context.Context, reg *upstreams.Registry, i int, u UpstreamConfig) onlineResult {
	r := onlineResult{item: fmt.Sprintf("upstreams[%d] %s", i, u.Name)}
	p, err := reg.Probe(ctx, u.Name)
	if err != nil {
		r.err = err
		return r
	}
	if p.NeedsUser {
		r.detail = "answers 401 without a user's token, as a per-user OAuth backend does; protocol and tools not checked"
		return r
	}
	tools := fmt.Sprintf("%d tool(s)", p.Tools)
	if p.PerUser {
		tools = "tools not listed (per-user OAuth: they need a connected user's token)"
	}
	if p.Modern {
		r.detail = fmt.Sprintf("speaks %s (server/discover), %s", p.Protocol, tools)
	} else {
		r.detail = fmt.Sprintf("pre-2026 (initialize, %s), %s", p.Protocol, tools)
	}
	return r
}

// operatorRegistry is the backend registry of an operator's command (pins, check-config
// --online): the configured backends with their secrets resolved, logging nothing.
func operatorRegistry(cfg *Config, getenv func(string) string) (*upstreams.Registry, error) {
	secrets, err := cfg.resolveSecrets(getenv)
	if err != nil {
		return nil, err
	}
	ring, _, err := cfg.MRTR.keyRing(getenv)
	if err != nil {
		return nil, err
	}
	return upstreams.New(cfg.upstreamsConfig(secrets), upstreams.Options{
		Logger:  slog.New(slog.DiscardHandler),
		Cursors: ring.Sealer(seal.PurposeCursor),
	})
}

// maxReportedError bounds an error as check-config --online prints it: errors can quote what a
// remote server answered.
const maxReportedError = 300

// oneLine folds an error's text onto one bounded line.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > maxReportedError {
		s = strings.ToValidUTF8(s[:maxReportedError], "") + "…"
	}
	return s
}

// backendAuthChecks are the checks of what backends' authentication contacts besides the
// backend: a per-user OAuth backend's authorization server (its first connect discovers it) and
// a token-exchange backend's token endpoint (its first caller's call exchanges there). A
// client-credentials token is fetched by the backend's own check, which calls the backend.
func backendAuthChecks(c *Config) []onlineCheck {
	var checks []onlineCheck
	// Every per-user OAuth backend, as serve's Service gets them: its client trusts all their
	// hosts, so each probe's must too.
	oauthBackends, uc, n := userOAuthBackendList(c, nil), c.userOAuthConfig(nil), 0
	for i, u := range c.Upstreams {
		switch u.Auth.Type {
		case upstreams.AuthUserOAuth:
			j := n
			n++
			checks = append(checks, func(ctx context.Context) onlineResult { return probeAuthServer(ctx, i, uc, oauthBackends, j) })
		case upstreams.AuthTokenExchange:
			// Connected to only: the one request it takes is an exchange of a real caller's token.
			item := fmt.Sprintf("upstreams[%d].auth.tokenURL %s", i, u.Name)
			checks = append(checks, func(ctx context.Context) onlineResult {
				return probeReach(ctx, item, u.Auth.TokenURL, "no token sent")
			})
		}
	}
	return checks
}

// probeAuthServer discovers the authorization server of backends[j] (upstreams[i]), a per-user
// OAuth backend, as its first connect would, with the client serve's Service builds for all of
// backends: a wrong authServer, or metadata the gateway refuses, otherwise shows only when a
// user tries to connect.
func probeAuthServer(ctx context.Context, i int, uc useroauth.Config, backends []useroauth.Backend, j int) onlineResult {
	r := onlineResult{item: fmt.Sprintf("upstreams[%d].auth %s", i, backends[j].Name)}
	issuer, err := useroauth.ProbeAuthServer(ctx, uc, backends, j)
	if r.err = err; err == nil {
		r.detail = "authorization server " + issuer + ": metadata usable for the connect page"
	}
	return r
}

// probeReach connects to rawURL, TLS included (system roots, as serve's client for it has),
// and sends nothing; unsent says so in the result's detail.
func probeReach(ctx context.Context, item, rawURL, unsent string) onlineResult {
	r := onlineResult{item: item}
	how, err := backend.Reach(ctx, rawURL, backend.TLSConfig{}, 0)
	if r.err = err; err == nil {
		r.detail = "reachable (" + how + "); " + unsent
	}
	return r
}

// probeTracing sends the collector an export with no span, as serve's exporter sends a batch:
// serve would otherwise lose its spans with nothing but a log line to show for it.
func probeTracing(ctx context.Context, c TracingConfig, getenv func(string) string) onlineResult {
	r := onlineResult{item: "tracing.endpoint " + c.Endpoint}
	cfg, err := c.resolve("", getenv)
	if err == nil {
		err = tracing.Probe(ctx, cfg)
	}
	if r.err = err; err == nil {
		r.detail = "an export with no span accepted"
	}
	return r
}

// probeInterceptor checks an interceptor as its first invocation would reach it. An Interceptor
// Server is asked server/discover (or initialize) and interceptors/list, which must host the
// configured interceptor with its type. A webhook takes nothing but invocations (every POST is
// one, with whatever side effects it has), so it is only connected to, TLS included, and its
// client-credentials token, if it has one, fetched.
func probeInterceptor(ctx context.Context, i int, ic intercept.Config) onlineResult {
	r := onlineResult{item: fmt.Sprintf("interceptors[%d] %s", i, ic.Name)}
	if ic.Webhook {
		how, token, err := intercept.ProbeWebhook(ctx, ic)
		if r.err = err; err == nil {
			r.detail = "webhook reachable (" + how + "); nothing sent, since every request is an invocation"
			if token {
				r.detail += "; client-credentials token fetched"
			}
		}
		return r
	}
	p, err := intercept.ProbeServer(ctx, ic)
	if r.err = err; err != nil {
		return r
	}
	era := "speaks " + p.Protocol + " (server/discover)"
	if !p.Modern {
		era = "pre-2026 (initialize, " + p.Protocol + ")"
	}
	ext := "declares " + intercept.ExtensionID
	if !p.Extension {
		ext = "does not declare " + intercept.ExtensionID
	}
	r.detail = fmt.Sprintf("%s, %s, hosts %s (%s)", era, ext, ic.WithDefaults().Interceptor, ic.Type)
	return r
}

// probeSignIn discovers the approval page's sign-in issuer as the first sign-in would, and
// fetches the key set its ID tokens are verified with. The client id and secret are not
// checked: only a person's sign-in can present them with a code the issuer accepts.
func probeSignIn(ctx context.Context, issuer string) onlineResult {
	r := onlineResult{item: "approval.issuer " + issuer}
	// nil: the clients a sign-in and the authenticator use, so the probe refuses what they would.
	if _, _, r.err = webpage.ProbeSignIn(ctx, issuer); r.err != nil {
		return r
	}
	p, err := authz.ProbeIssuer(ctx, authz.Config{Issuers: []authz.IssuerConfig{{Issuer: issuer}}}, 0)
	if r.err = err; err == nil {
		r.detail = fmt.Sprintf("sign-in discovery: authorization and token endpoints, %d usable key(s); the client is checked by a sign-in only", p.Keys)
	}
	return r
}
