// Package logging provides the gateway's log output: an io.Writer for slog handlers that never
// makes a request wait for the log destination, and a helper that builds the *slog.Logger.
//
// A request goroutine only copies its line into a bounded queue; one goroutine writes whatever has
// queued to the real output in one call. When the output cannot keep up the queue fills, further lines are dropped
// and counted rather than stalling requests, and a "N log lines dropped" line is written once the
// output catches up. Nothing here is global: main creates the Writer, passes the Logger down and
// closes the Writer on exit.
package logging

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults for Config.
const (
	// DefaultQueueLines holds a few seconds of a busy replica's access lines.
	DefaultQueueLines = 4096
	// DefaultFlushTimeout bounds shutdown on an output that no longer accepts writes.
	DefaultFlushTimeout = 5 * time.Second
	// batchLinger is how long the drain goroutine waits after the first line of a batch before
	// writing it: long enough to gather a busy replica's lines into one write, short enough that
	// a log reader never notices.
	batchLinger = 5 * time.Millisecond
	// maxPendingBytes bounds the memory of lines waiting for the output, whatever their count
	// (a single larger line is still accepted into an empty batch).
	maxPendingBytes = 4 << 20
)

// Formats a Writer's own notice lines can take; they match slog's JSON and text handlers.
const (
	FormatJSON = "json"
	FormatText = "text"
)

// Errors.
var (
	// ErrClosed is returned by Write after Close: the line is dropped and counted.
	ErrClosed = errors.New("logging: writer closed")
	// ErrFlushTimeout is returned by Close when queued lines did not reach the output in time.
	ErrFlushTimeout = errors.New("logging: flush deadline exceeded")
	// ErrConfig wraps every configuration problem.
	ErrConfig = errors.New("logging: invalid configuration")
)

// Config tunes a Writer. The zero value is valid and takes the defaults.
type Config struct {
	// QueueLines is how many lines may wait for the output before further lines are dropped.
	// Default DefaultQueueLines; must not be negative.
	QueueLines int
	// FlushTimeout bounds how long Close waits for queued lines to reach the output. Default
	// DefaultFlushTimeout; must not be negative.
	FlushTimeout time.Duration
	// Format is the format of the Writer's own "N log lines dropped" line, to match the handler
	// writing to it: FormatJSON (default) or FormatText.
	Format string
	// Clock stamps the dropped-lines notice. Default time.Now.
	Clock func() time.Time
}

// Validate reports every problem with c at once; it changes nothing.
func (c Config) Validate() error {
	var errs []error
	if c.QueueLines < 0 {
		errs = append(errs, fmt.Errorf("%w: QueueLines %d is negative", ErrConfig, c.QueueLines))
	}
	if c.FlushTimeout < 0 {
		errs = append(errs, fmt.Errorf("%w: FlushTimeout %s is negative", ErrConfig, c.FlushTimeout))
	}
	if c.Format != "" && c.Format != FormatJSON && c.Format != FormatText {
		errs = append(errs, fmt.Errorf("%w: Format %q is not %q or %q", ErrConfig, c.Format, FormatJSON, FormatText))
	}
	return errors.Join(errs...)
}

func (c Config) withDefaults() Config {
	if c.QueueLines == 0 {
		c.QueueLines = DefaultQueueLines
	}
	if c.FlushTimeout == 0 {
		c.FlushTimeout = DefaultFlushTimeout
	}
	if c.Format == "" {
		c.Format = FormatJSON
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	return c
}

// Writer is an io.Writer whose Write never waits for the output: it appends the line to a
// bounded pending batch that one goroutine writes out. It is safe for concurrent use. Each Write
// should be one complete line, which is what slog's handlers do.
//
// Lines are batched rather than handed over one by one: under load every line would otherwise
// cost a goroutine wake-up and a write system call of its own, which on a busy replica was a
// third of the gateway's write calls (one per access line). The drain goroutine is woken only
// when a batch starts, and writes everything pending in one call.
type Writer struct {
	out     io.Writer
	cfg     Config
	dropped atomic.Uint64

	mu      sync.Mutex
	pending []byte // lines waiting for the output, in Write order
	lines   int    // how many lines pending holds
	spare   []byte // the buffer the drain goroutine last wrote, reused for the next batch
	closed  bool

	wake chan struct{} // one slot: a batch has started
	stop chan struct{} // closed by Close: write what is pending, then exit
	done chan struct{} // closed by the drain goroutine when it exits
	once sync.Once
}

// New starts a Writer draining to out. Close it to flush and stop its goroutine.
func New(out io.Writer, cfg Config) (*Writer, error) {
	if out == nil {
		return nil, fmt.Errorf("%w: nil output", ErrConfig)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	w := &Writer{
		out:  out,
		cfg:  cfg,
		wake: make(chan struct{}, 1),
		stop: make(chan struct{}),
		done: make(chan struct{}),
	}
	go w.drain()
	return w, nil
}

// Write queues a copy of p for the output and returns at once. When QueueLines lines (or
// maxPendingBytes) are already waiting the line is dropped and counted; that is not an error,
// since a request must not fail over a log line. After Close it returns ErrClosed.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	switch {
	case w.closed:
		w.mu.Unlock()
		w.dropped.Add(1)
		return 0, ErrClosed
	case w.lines >= w.cfg.QueueLines || len(w.pending)+len(p) > maxPendingBytes && w.lines > 0:
		w.mu.Unlock()
		w.dropped.Add(1)
		return len(p), nil
	}
	w.pending = append(w.pending, p...)
	w.lines++
	first := w.lines == 1
	w.mu.Unlock()
	if first {
		select {
		case w.wake <- struct{}{}:
		default: // the drain goroutine is already due to run
		}
	}
	return len(p), nil
}

// Dropped returns how many lines were dropped since the Writer started, for a metric.
func (w *Writer) Dropped() uint64 { return w.dropped.Load() }

// Close stops accepting lines and waits up to FlushTimeout for the pending ones to reach the
// output. On timeout it returns ErrFlushTimeout; the drain goroutine then stays blocked in the
// output's Write until that returns. Lines written concurrently with Close may be lost.
func (w *Writer) Close() error {
	w.once.Do(func() {
		w.mu.Lock()
		w.closed = true
		w.mu.Unlock()
		close(w.stop)
	})
	t := time.NewTimer(w.cfg.FlushTimeout)
	defer t.Stop()
	select {
	case <-w.done:
		return nil
	case <-t.C:
		return ErrFlushTimeout
	}
}

// drain is the only goroutine that writes to the output, so lines keep the order in which
// their Write calls appended them.
func (w *Writer) drain() {
	defer close(w.done)
	var reported uint64
	linger := time.NewTimer(batchLinger)
	linger.Stop()
	for {
		select {
		case <-w.wake:
			// Let the batch gather: when a core is idle this goroutine runs the moment the first
			// line arrives, and would otherwise write lines one by one.
			linger.Reset(batchLinger)
			select {
			case <-linger.C:
			case <-w.stop:
				linger.Stop()
			}
			if w.flush() {
				w.notice(&reported)
			}
		case <-w.stop:
			w.flush()
			w.notice(&reported)
			return
		}
	}
}

// flush takes the pending batch, leaving the spare buffer in its place, and writes it. Lines
// that arrive meanwhile start the next batch, and their wake-up brings drain back here. It
// reports whether nothing was pending once the batch was written: only then may the notice of
// drops follow, after every line that was kept from before the drops.
func (w *Writer) flush() (empty bool) {
	w.mu.Lock()
	batch := w.pending
	w.pending, w.lines = w.spare[:0], 0
	w.mu.Unlock()
	if len(batch) > 0 {
		// An output error cannot be reported anywhere better than the output itself; drop it.
		_, _ = w.out.Write(batch)
	}
	if cap(batch) > maxPendingBytes {
		batch = nil // one burst of huge lines must not pin a huge buffer
	}
	w.mu.Lock()
	w.spare = batch
	empty = w.lines == 0
	w.mu.Unlock()
	return empty
}

// notice writes "N log lines dropped" once the pending lines have been written after drops, so
// the gap in the log is visible where it happened.
func (w *Writer) notice(reported *uint64) {
	total := w.dropped.Load()
	if total == *reported {
		return
	}
	n := total - *reported
	*reported = total
	_, _ = w.out.Write(w.noticeLine(n))
}

func (w *Writer) noticeLine(n uint64) []byte {
	var line bytes.Buffer
	var h slog.Handler = slog.NewJSONHandler(&line, nil)
	if w.cfg.Format == FormatText {
		h = slog.NewTextHandler(&line, nil)
	}
	r := slog.NewRecord(w.cfg.Clock(), slog.LevelWarn, fmt.Sprintf("%d log lines dropped", n), 0)
	r.AddAttrs(slog.Uint64("dropped", n))
	_ = h.Handle(context.Background(), r)
	return line.Bytes()
}
