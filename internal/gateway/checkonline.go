package gateway

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/embeddings"
	"github.com/mcp-gateway/gateway/internal/seal"
	"github.com/mcp-gateway/gateway/upstreams"
)

// onlineCheckTimeout bounds each item check-config --online contacts: an issuer's discovery and
// key set together, or a backend's discovery and tool list together.
const onlineCheckTimeout = 15 * time.Second

// onlineResult is one line of check-config --online: the item and what it answered.
type onlineResult struct {
	item, detail string
	err          error
}

// checkOnline contacts what the configuration names, all at once: each issuer's discovery
// document and key set, Redis (a PING, with the configured credentials and TLS), and each
// backend's server/discover (or initialize) and tool list. It prints one line per item, in
// configuration order, and fails when any item failed.
func (c *Config) checkOnline(ctx context.Context, getenv func(string) string, w io.Writer) error {
	var checks []func(context.Context) onlineResult
	if !c.Auth.Disabled {
		client := &http.Client{}
		for i, ic := range c.Auth.Issuers {
			checks = append(checks, func(ctx context.Context) onlineResult { return probeIssuer(ctx, client, i, ic) })
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
	if c.Search.Embeddings.Enabled() {
		checks = append(checks, func(ctx context.Context) onlineResult { return c.Search.Embeddings.probe(ctx, getenv) })
	}
	results := make([]onlineResult, len(checks))
	done := make(chan int)
	for i, check := range checks {
		go func() {
			ctx, cancel := context.WithTimeout(ctx, onlineCheckTimeout)
			defer cancel()
			results[i] = check(ctx)
			done <- i
		}()
	}
	for range checks {
		<-done
	}
	failed := 0
	for _, r := range results {
		if r.err != nil {
			failed++
			fmt.Fprintf(w, "FAILED %s: %s\n", r.item, oneLine(r.err.Error()))
			continue
		}
		fmt.Fprintf(w, "ok     %s: %s\n", r.item, r.detail)
	}
	if failed > 0 {
		return fmt.Errorf("check-config --online: %d of %d item(s) failed", failed, len(results))
	}
	return nil
}

func probeIssuer(ctx context.Context, client *http.Client, i int, ic authz.IssuerConfig) onlineResult {
	r := onlineResult{item: fmt.Sprintf("auth.issuers[%d] %s", i, ic.Issuer)}
	p, err := authz.ProbeIssuer(ctx, client, ic)
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
	if r.err = st.Ping(ctx); r.err == nil {
		r.detail = "PING answered"
	}
	return r
}

// probe asks the embeddings endpoint for one vector, with the configured key and timeout, as a
// search will: a refused key or a wrong model otherwise shows only as searches ranked lexically.
func (c EmbeddingsConfig) probe(ctx context.Context, getenv func(string) string) onlineResult {
	r := onlineResult{item: "search.embeddings " + c.URL}
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
	if p.Modern {
		r.detail = fmt.Sprintf("speaks %s (server/discover), %d tool(s)", p.Protocol, p.Tools)
	} else {
		r.detail = fmt.Sprintf("pre-2026 (initialize, %s), %d tool(s)", p.Protocol, p.Tools)
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
