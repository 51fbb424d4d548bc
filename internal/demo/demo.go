// Package demo runs the local demo's backends: two small MCP servers from
// the official Go SDK, in the stateless 2026-07-28 mode, on loopback ports.
//
//   - notes keeps notes in memory: add_note, list_notes, search_notes,
//     get_note, delete_note (destructive); every note is a resource
//     note://{id}, note://index lists them all, and the prompt
//     summarize_notes asks a model to summarise them.
//   - toolbox has stateless utilities: echo, add, now, count_slowly (sends
//     progress, so its response is an SSE stream), roll_dice and word_count.
//
// Start them with [Start], point the gateway's upstreams at [Backends.List],
// and stop them with [Backends.Close].
package demo

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Names of the demo backends.
const (
	NotesName   = "notes"
	ToolboxName = "toolbox"
)

// Version is the version both backends report in serverInfo.
const Version = "1.0.0"

// EndpointPath is the MCP endpoint path on each backend.
const EndpointPath = "/mcp"

const (
	// listenAddr keeps the demo on loopback with a port chosen by the kernel.
	listenAddr = "127.0.0.1:0"
	// defaultTick is the pause between count_slowly's steps.
	defaultTick = 250 * time.Millisecond
	// readHeaderTimeout bounds slow clients on the demo listeners.
	readHeaderTimeout = 10 * time.Second
	// shutdownTimeout bounds Close's wait for in-flight requests.
	shutdownTimeout = 5 * time.Second
)

// ErrClosed is returned by [Backends.Close] on a second call.
var ErrClosed = errors.New("demo: backends already closed")

// Backend names one running demo backend.
type Backend struct {
	// Name is the backend's name: "notes" or "toolbox". It is also the
	// serverInfo name and a natural upstream name for the gateway.
	Name string
	// URL is the absolute URL of its MCP endpoint, for example
	// http://127.0.0.1:38211/mcp.
	URL string
}

// Backends is the set of running demo backends.
type Backends struct {
	list    []Backend
	servers []*http.Server
	closed  bool
}

// deps are what the backends take from the outside world, injectable so
// tests are deterministic.
type deps struct {
	now  func() time.Time
	intN func(n int) int
	tick time.Duration
}

func defaultDeps() deps {
	return deps{now: time.Now, intN: rand.IntN, tick: defaultTick}
}

// Start starts the notes and toolbox backends on 127.0.0.1 with ports chosen
// by the kernel. ctx bounds only the start-up; the backends run until
// [Backends.Close]. logger receives the go-sdk's and the HTTP servers' logs.
func Start(ctx context.Context, logger *slog.Logger) (*Backends, error) {
	return start(ctx, logger, defaultDeps())
}

func start(ctx context.Context, logger *slog.Logger, d deps) (*Backends, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	b := &Backends{}
	servers := []struct {
		name string
		srv  *mcp.Server
	}{
		{NotesName, newNotesServer(logger, d)},
		{ToolboxName, newToolboxServer(logger, d)},
	}
	for _, s := range servers {
		if err := b.serve(ctx, logger, s.name, s.srv); err != nil {
			return nil, errors.Join(err, b.Close())
		}
	}
	return b, nil
}

func (b *Backends) serve(ctx context.Context, logger *slog.Logger, name string, srv *mcp.Server) error {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", listenAddr)
	if err != nil {
		return fmt.Errorf("demo: listening for %s: %w", name, err)
	}
	log := logger.With("backend", name)
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		Stateless: true,
		Logger:    log,
		// A closed response stream is a cancellation (spec §2.1), so
		// count_slowly stops when its caller goes away.
		PropagateRequestCancellation: true,
	})
	mux := http.NewServeMux()
	mux.Handle(EndpointPath, handler)
	hs := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: readHeaderTimeout,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	go func() {
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("demo backend stopped", "err", err)
		}
	}()
	b.servers = append(b.servers, hs)
	b.list = append(b.list, Backend{Name: name, URL: "http://" + ln.Addr().String() + EndpointPath})
	log.Info("demo backend listening", "url", b.list[len(b.list)-1].URL)
	return nil
}

// List returns the running backends, notes first.
func (b *Backends) List() []Backend { return append([]Backend(nil), b.list...) }

// URL returns the MCP endpoint of the backend called name, or "" if there
// is none.
func (b *Backends) URL(name string) string {
	for _, be := range b.list {
		if be.Name == name {
			return be.URL
		}
	}
	return ""
}

// Close stops the backends, waiting a bounded time for in-flight requests
// and then dropping them. It is not safe for concurrent use.
func (b *Backends) Close() error {
	if b.closed {
		return ErrClosed
	}
	b.closed = true
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	var errs []error
	for _, hs := range b.servers {
		err := hs.Shutdown(ctx)
		if errors.Is(err, context.DeadlineExceeded) {
			// Connections still busy (or opened and never used) after the
			// grace period are dropped; that is the intended outcome.
			err = hs.Close()
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
