package loadgen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

// Defaults and caps of OpenStreams.
const (
	DefaultHoldStreams  = 100
	DefaultHoldParallel = 64
	DefaultHoldTimeout  = 30 * time.Second
	MaxHoldStreams      = 20_000
	MaxHoldParallel     = 1024
)

// HoldConfig describes idle subscriptions/listen streams to open and hold (docs/protocol.md §5.5).
type HoldConfig struct {
	// URL is the MCP endpoint; its host must be loopback.
	URL string
	// Streams is how many streams to open. Default DefaultHoldStreams; at most MaxHoldStreams.
	// Each takes one connection, so the file descriptor limit must allow it.
	Streams int
	// Parallel is how many streams are being opened at once. Default DefaultHoldParallel; at most
	// MaxHoldParallel.
	Parallel int
	// Timeout bounds opening one stream, up to its acknowledgement. Default DefaultHoldTimeout.
	Timeout time.Duration
	// Token, when set, is sent as a bearer token. It is never printed.
	Token string
}

func (c HoldConfig) withDefaults() HoldConfig {
	if c.Streams == 0 {
		c.Streams = DefaultHoldStreams
	}
	if c.Parallel == 0 {
		c.Parallel = DefaultHoldParallel
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultHoldTimeout
	}
	return c
}

// Validate reports every problem with c; it changes nothing.
func (c HoldConfig) Validate() error {
	c = c.withDefaults()
	var errs []error
	if c.URL == "" {
		errs = append(errs, errors.New("URL is required"))
	}
	if c.Streams < 1 || c.Streams > MaxHoldStreams {
		errs = append(errs, fmt.Errorf("streams %d must be in [1, %d]", c.Streams, MaxHoldStreams))
	}
	if c.Parallel < 1 || c.Parallel > MaxHoldParallel {
		errs = append(errs, fmt.Errorf("parallel %d must be in [1, %d]", c.Parallel, MaxHoldParallel))
	}
	if c.Timeout < 0 || c.Timeout > MaxTimeout {
		errs = append(errs, fmt.Errorf("timeout %s must be in [0, %s]", c.Timeout, MaxTimeout))
	}
	if strings.ContainsAny(c.Token, "\r\n") {
		errs = append(errs, errors.New("token must not contain line breaks"))
	}
	return errors.Join(errs...)
}

// Streams is a set of held listen streams.
type Streams struct {
	// Opened is how many streams were acknowledged.
	Opened int
	// Failed counts the streams that could not be opened, by error kind.
	Failed map[string]int
	// OpenTime is how long opening all of them took.
	OpenTime time.Duration

	cancel    context.CancelFunc
	wg        sync.WaitGroup
	ended     atomic.Int64
	transport *http.Transport
}

// Ended returns how many acknowledged streams have ended since (the server closed them).
func (s *Streams) Ended() int { return int(s.ended.Load()) }

// Close ends every stream by closing its connection, which is how a client ends a
// subscription (docs/protocol.md §5.5), and waits for the readers to stop.
func (s *Streams) Close() {
	s.cancel()
	s.wg.Wait()
	s.transport.CloseIdleConnections()
}

// OpenStreams opens cfg.Streams subscriptions/listen streams asking for toolsListChanged and
// returns once each has been acknowledged or has failed. The streams stay open until Close.
func OpenStreams(ctx context.Context, cfg HoldConfig, resolver Resolver) (*Streams, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	if err := CheckLoopback(ctx, resolverOrDefault(resolver), cfg.URL); err != nil {
		return nil, err
	}
	t := newTransport(1)
	hctx, cancel := context.WithCancel(ctx)
	s := &Streams{Failed: map[string]int{}, cancel: cancel, transport: t}
	var ids atomic.Int64
	client := &http.Client{Transport: t}
	req := request{method: "subscriptions/listen", caps: capsNone, rest: []byte(`,"notifications":{"toolsListChanged":true}`)}
	var mu sync.Mutex
	sem := make(chan struct{}, cfg.Parallel)
	var opening sync.WaitGroup
	start := time.Now()
	for range cfg.Streams {
		sem <- struct{}{}
		opening.Add(1)
		s.wg.Go(func() {
			w := &wire{http: client, url: cfg.URL, auth: bearer(cfg.Token), ids: func() int64 { return ids.Add(1) }}
			err := s.hold(hctx, w, &req, cfg.Timeout, func() { <-sem; opening.Done() })
			if err != nil {
				mu.Lock()
				s.Failed[kindOf(err)]++
				mu.Unlock()
			}
		})
	}
	opening.Wait()
	s.OpenTime = time.Since(start)
	s.Opened = cfg.Streams
	for _, n := range s.Failed {
		s.Opened -= n
	}
	return s, nil
}

func bearer(token string) string {
	if token == "" {
		return ""
	}
	return "Bearer " + token
}

func resolverOrDefault(r Resolver) Resolver {
	if r == nil {
		return &net.Resolver{}
	}
	return r
}

// hold opens one stream, calls opened once it is acknowledged or has failed, then reads until
// the stream ends. The error is the reason it could not be opened; nil once acknowledged.
func (s *Streams) hold(ctx context.Context, w *wire, req *request, timeout time.Duration, opened func()) error {
	once := sync.OnceFunc(opened)
	defer once()
	sctx, scancel := context.WithCancel(ctx)
	defer scancel()
	timer := time.AfterFunc(timeout, scancel)
	resp, _, err := w.send(sctx, req)
	if err != nil {
		timer.Stop()
		return err
	}
	defer resp.Body.Close()
	err = w.awaitAck(sctx, resp)
	if !timer.Stop() && err == nil {
		return opErr(KindTimeout, errors.New("acknowledged too late"))
	}
	if err != nil {
		return err
	}
	once()
	for {
		if _, err := w.rd.next(); err != nil {
			break
		}
	}
	if ctx.Err() == nil {
		s.ended.Add(1)
	}
	return nil
}

// awaitAck reads a listen response up to its acknowledgement (docs/protocol.md §5.5: the first message).
func (w *wire) awaitAck(ctx context.Context, resp *http.Response) error {
	if resp.StatusCode != http.StatusOK {
		return statusErr(resp)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		return opErr(KindBadResponse, errors.New("listen answered with Content-Type "+ct))
	}
	w.rd = newEvents(resp.Body, 4<<10)
	for {
		data, err := w.rd.next()
		switch {
		case errors.Is(err, io.EOF):
			return opErr(KindIncompleteStream, errors.New("listen stream ended before its acknowledgement"))
		case err != nil:
			return transportErr(ctx, err)
		case data == nil:
			continue
		}
		m, err := jsonrpc.DecodeMessage(data, jsonrpc.Limits{})
		switch {
		case err != nil:
			return opErr(KindBadResponse, err)
		case m.Error != nil:
			return opErr(rpcKind(m.Error.Code), m.Error)
		case m.Method == "notifications/subscriptions/acknowledged":
			return nil
		}
		return opErr(KindBadResponse, errors.New("first listen message is not the acknowledgement"))
	}
}
