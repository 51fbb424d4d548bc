package logging

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// gate is an output that blocks every Write until released, and reports when a Write has
// started, so a test can fill the queue deterministically.
type gate struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	writes  int
	entered chan struct{}
	release chan struct{}
}

func newGate() *gate {
	return &gate{entered: make(chan struct{}, 1), release: make(chan struct{})}
}

func (g *gate) Write(p []byte) (int, error) {
	select {
	case g.entered <- struct{}{}:
	default:
	}
	<-g.release
	g.mu.Lock()
	defer g.mu.Unlock()
	g.writes++
	return g.buf.Write(p)
}

func (g *gate) lines() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return strings.Split(strings.TrimSuffix(g.buf.String(), "\n"), "\n")
}

func newWriter(t *testing.T, out io.Writer, cfg Config) *Writer {
	t.Helper()
	w, err := New(out, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })
	return w
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name     string
		cfg      Config
		problems int
	}{
		{"zero value", Config{}, 0},
		{"explicit", Config{QueueLines: 10, FlushTimeout: time.Second, Format: FormatText}, 0},
		{"negative queue", Config{QueueLines: -1}, 1},
		{"everything wrong", Config{QueueLines: -1, FlushTimeout: -1, Format: "xml"}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			n := 0
			if err != nil {
				n = len(err.(interface{ Unwrap() []error }).Unwrap())
				if !errors.Is(err, ErrConfig) {
					t.Errorf("%v is not ErrConfig", err)
				}
			}
			if n != tt.problems {
				t.Errorf("Validate() = %v, want %d problems", err, tt.problems)
			}
		})
	}
	if _, err := New(nil, Config{}); !errors.Is(err, ErrConfig) {
		t.Errorf("New(nil) = %v, want ErrConfig", err)
	}
}

// TestOrderPerWriter: lines from one goroutine reach the output in the order it wrote them,
// whatever the interleaving with other goroutines.
func TestOrderPerWriter(t *testing.T) {
	const writers, perWriter = 8, 500
	var out bytes.Buffer
	w := newWriter(t, &out, Config{QueueLines: writers * perWriter})
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for i := range perWriter {
				fmt.Fprintf(w, "%d %d\n", g, i)
			}
		})
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	next := make([]int, writers)
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		var g, i int
		if _, err := fmt.Sscanf(sc.Text(), "%d %d", &g, &i); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		if i != next[g] {
			t.Fatalf("writer %d: got line %d, want %d", g, i, next[g])
		}
		next[g]++
	}
	for g, n := range next {
		if n != perWriter {
			t.Errorf("writer %d: %d lines reached the output, want %d", g, n, perWriter)
		}
	}
	if d := w.Dropped(); d != 0 {
		t.Errorf("Dropped() = %d with a queue large enough for everything", d)
	}
}

// TestDropsCounted: with the output stuck, Write still returns at once; lines beyond the
// queue are dropped and counted, and a notice follows once the output recovers.
func TestDropsCounted(t *testing.T) {
	const queue, extra = 4, 7
	out := newGate()
	w := newWriter(t, out, Config{QueueLines: queue, Clock: fixedClock})
	fmt.Fprintln(w, "first")
	<-out.entered // the drain goroutine holds "first" and is stuck in the output
	for i := range queue + extra {
		if n, err := fmt.Fprintf(w, "line %d\n", i); err != nil || n == 0 {
			t.Fatalf("Write = %d, %v; a full queue must not fail the caller", n, err)
		}
	}
	if d := w.Dropped(); d != extra {
		t.Fatalf("Dropped() = %d, want %d", d, extra)
	}
	close(out.release)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	lines := out.lines()
	if len(lines) != 1+queue+1 {
		t.Fatalf("output has %d lines, want %d: %q", len(lines), queue+2, lines)
	}
	if lines[0] != "first" || lines[queue] != fmt.Sprintf("line %d", queue-1) {
		t.Errorf("kept lines are not the oldest ones in order: %q", lines)
	}
	var notice struct {
		Level, Msg string
		Dropped    uint64
	}
	if err := json.Unmarshal([]byte(lines[queue+1]), &notice); err != nil {
		t.Fatalf("notice %q: %v", lines[queue+1], err)
	}
	if notice.Msg != "7 log lines dropped" || notice.Dropped != extra || notice.Level != "WARN" {
		t.Errorf("notice = %+v", notice)
	}
}

// TestNoticeOncePerGap: a recovered output gets one notice per run of drops, not one per line.
func TestNoticeOncePerGap(t *testing.T) {
	out := newGate()
	w := newWriter(t, out, Config{QueueLines: 1, Format: FormatText, Clock: fixedClock})
	fmt.Fprintln(w, "a")
	<-out.entered
	fmt.Fprintln(w, "b") // queued
	fmt.Fprintln(w, "c") // dropped
	fmt.Fprintln(w, "d") // dropped
	close(out.release)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want := []string{"a", "b", `time=2026-07-28T12:00:00.000Z level=WARN msg="2 log lines dropped" dropped=2`}
	if got := out.lines(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("output:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestFlushOnClose: every line queued before Close reaches the output before Close returns.
func TestFlushOnClose(t *testing.T) {
	const lines = 1000
	out := newGate()
	w := newWriter(t, out, Config{QueueLines: lines})
	for i := range lines {
		fmt.Fprintf(w, "%d\n", i)
	}
	close(out.release)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := out.lines(); len(got) != lines || got[lines-1] != fmt.Sprint(lines-1) {
		t.Fatalf("after Close the output has %d lines, want %d", len(got), lines)
	}
	if _, err := w.Write([]byte("late\n")); !errors.Is(err, ErrClosed) {
		t.Errorf("Write after Close = %v, want ErrClosed", err)
	}
	if d := w.Dropped(); d != 1 {
		t.Errorf("a write after Close should count as dropped; Dropped() = %d", d)
	}
}

// TestCloseDeadline: an output that never returns cannot hold shutdown beyond FlushTimeout.
func TestCloseDeadline(t *testing.T) {
	out := newGate()
	w := newWriter(t, out, Config{FlushTimeout: time.Millisecond})
	fmt.Fprintln(w, "stuck")
	<-out.entered
	if err := w.Close(); !errors.Is(err, ErrFlushTimeout) {
		t.Fatalf("Close with a stuck output = %v, want ErrFlushTimeout", err)
	}
	close(out.release)
	// Once the output returns the goroutine ends; a later Close observes it (and goleak checks).
	w.cfg.FlushTimeout = time.Minute
	if err := w.Close(); err != nil {
		t.Fatalf("second Close = %v", err)
	}
}

func TestWriteCopiesTheLine(t *testing.T) {
	out := newGate()
	w := newWriter(t, out, Config{})
	line := []byte("original\n")
	fmt.Fprint(w, "x\n")
	<-out.entered
	_, _ = w.Write(line)
	copy(line, "CHANGED!")
	close(out.release)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := out.lines(); len(got) != 2 || got[1] != "original" {
		t.Errorf("the caller's buffer reuse leaked into the output: %q", got)
	}
}

func fixedClock() time.Time { return time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC) }

// TestBatchesLines: lines that queue while the output is busy reach it in one Write, in order,
// so a busy replica pays one system call per batch rather than one per access line.
func TestBatchesLines(t *testing.T) {
	const queued = 50
	out := newGate()
	w := newWriter(t, out, Config{})
	fmt.Fprintln(w, "first")
	<-out.entered
	for i := range queued {
		fmt.Fprintf(w, "%d\n", i)
	}
	close(out.release)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got := out.lines()
	if len(got) != 1+queued || got[1] != "0" || got[queued] != fmt.Sprint(queued-1) {
		t.Fatalf("output = %q", got)
	}
	out.mu.Lock()
	defer out.mu.Unlock()
	if out.writes != 2 {
		t.Errorf("the output got %d writes, want 2: the line in flight, then one batch", out.writes)
	}
}
