package logging

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// reference is the handler the gateway used before jsonHandler: slog's JSON handler under the
// context handler. Every line must come out the same through both.
func reference(w *bytes.Buffer, opts *slog.HandlerOptions) *slog.Logger {
	return slog.New(NewContextHandler(slog.NewJSONHandler(w, opts)))
}

// hostileStrings are the strings whose escaping differs between encoders: quotes, backslashes,
// control bytes, invalid UTF-8, the JavaScript line separators, HTML characters (which slog
// leaves as they are), and long plain runs.
var hostileStrings = []string{
	"", "plain", `q"uote`, `back\slash`, "nl\nline", "cr\rtab\t", "\x00\x01\x1f\x7f", "bad\xffutf8\xc3",
	"sep\u2028par\u2029", "<script>&amp;</script>", "é ü 日本 🎉", strings.Repeat("x", 3000),
	"\xed\xa0\x80", // a surrogate half, invalid in UTF-8
}

func randomString(r *rand.Rand) string {
	if r.IntN(3) == 0 {
		return hostileStrings[r.IntN(len(hostileStrings))]
	}
	b := make([]byte, r.IntN(40))
	for i := range b {
		b[i] = byte(r.IntN(256))
	}
	return string(b)
}

func randomAttr(r *rand.Rand) slog.Attr {
	key := randomString(r)
	if r.IntN(4) == 0 {
		key = []string{KeyRequestID, KeyTraceID, "status", ""}[r.IntN(4)]
	}
	switch r.IntN(9) {
	case 0:
		return slog.Int(key, r.IntN(1<<20)-1<<19)
	case 1:
		return slog.Uint64(key, r.Uint64())
	case 2:
		return slog.Bool(key, r.IntN(2) == 0)
	case 3:
		return slog.Duration(key, time.Duration(r.Int64()))
	case 4:
		return slog.Float64(key, r.Float64()*1e6) // slog's handler
	case 5:
		return slog.Any(key, errors.New(randomString(r))) // slog's handler
	case 6:
		return slog.Group(key, slog.String("inner", randomString(r))) // slog's handler
	case 7:
		return slog.Time(key, time.Unix(r.Int64N(1<<33), r.Int64N(1e9)).UTC())
	default:
		return slog.String(key, randomString(r))
	}
}

// TestJSONHandlerMatchesSlog logs random records through the gateway's handler and through
// slog's own, by the Logger and by LogAttrs, with and without request context, WithAttrs and
// WithGroup, and requires the same bytes.
func TestJSONHandlerMatchesSlog(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	levels := []slog.Level{slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError, slog.LevelInfo + 2}
	fast := 0
	for i := range 3000 {
		var got, want bytes.Buffer
		opts := &slog.HandlerOptions{Level: levels[r.IntN(len(levels))]}
		gl, wl := slog.New(newJSONHandler(&got, opts)), reference(&want, opts)
		if r.IntN(3) == 0 {
			var with []any
			for range r.IntN(3) + 1 {
				a := randomAttr(r)
				with = append(with, a)
			}
			gl, wl = gl.With(with...), wl.With(with...)
		}
		if r.IntN(10) == 0 {
			g := randomString(r)
			gl, wl = gl.WithGroup(g), wl.WithGroup(g)
		}
		ctx := context.Background()
		if r.IntN(2) == 0 {
			ctx = WithRequest(ctx, []string{"", "req-1", randomString(r)}[r.IntN(3)], []string{"", "0af7651916cd43dd8448eb211c80319c"}[r.IntN(2)])
		}
		var attrs []slog.Attr
		for range r.IntN(14) {
			attrs = append(attrs, randomAttr(r))
		}
		level, msg := levels[r.IntN(len(levels))], randomString(r)
		// The same timestamp for both: the Logger stamps records itself, so both go through
		// Handle with one Record, and LogAttrs is compared under a fixed clock below.
		rec := slog.NewRecord(time.Unix(1764000000, int64(r.IntN(1e9))), level, msg, 0)
		rec.AddAttrs(attrs...)
		if gl.Enabled(ctx, level) {
			if err := gl.Handler().Handle(ctx, rec); err != nil {
				t.Fatal(err)
			}
		}
		if wl.Enabled(ctx, level) {
			if err := wl.Handler().Handle(ctx, rec); err != nil {
				t.Fatal(err)
			}
		}
		if got.String() != want.String() {
			t.Fatalf("record %d differs:\n got %q\nwant %q", i, got.String(), want.String())
		}
		if got.Len() > 0 {
			fast++
		}
	}
	if fast < 1000 {
		t.Fatalf("only %d of 3000 records were logged; the comparison covers too little", fast)
	}
}

// TestLogAttrsMatchesLogger: LogAttrs writes the line the Logger writes for the same call, for
// the JSON handler and for others, time aside.
func TestLogAttrsMatchesLogger(t *testing.T) {
	stripTime := func(s string) string {
		var out []string
		for _, l := range strings.Split(s, "\n") {
			if i := strings.Index(l, `"level"`); i > 0 {
				l = l[i:]
			} else if i := strings.Index(l, "level="); i > 0 {
				l = l[i:]
			}
			out = append(out, l)
		}
		return strings.Join(out, "\n")
	}
	for _, format := range []string{FormatJSON, FormatText} {
		var a, b bytes.Buffer
		la, err := NewLogger(&a, "info", format)
		if err != nil {
			t.Fatal(err)
		}
		lb, _ := NewLogger(&b, "info", format)
		ctx := WithRequest(context.Background(), "r1", "t1")
		attrs := []slog.Attr{slog.String("method", "tools/call"), slog.Int("status", 200), slog.Bool("sse", false),
			slog.Duration("duration", 1500*time.Microsecond), slog.Any("err", errors.New("boom")), slog.String("q", "a\"b\n")}
		LogAttrs(ctx, la, slog.LevelInfo, "request", attrs...)
		lb.LogAttrs(ctx, slog.LevelInfo, "request", attrs...)
		LogAttrs(ctx, la, slog.LevelDebug, "hidden") // below the level: nothing
		if a.Len() == 0 || stripTime(a.String()) != stripTime(b.String()) {
			t.Fatalf("%s: LogAttrs wrote %q, Logger.LogAttrs %q", format, a.String(), b.String())
		}
	}
}

// BenchmarkAccessLine compares the access line through slog's handler and through the
// gateway's, by the Logger and by LogAttrs.
func BenchmarkAccessLine(b *testing.B) {
	attrs := []slog.Attr{
		slog.String("request_id", "4f1c2a9e0b7d4e3f8a6b5c4d3e2f1a0b"), slog.String("method", "tools/call"),
		slog.String("name", "github__create_issue"), slog.String("upstream", "github"),
		slog.String("subject", "https://idp.example.com/#alice"), slog.Int("status", 200), slog.String("outcome", "ok"),
		slog.Bool("sse", false), slog.Duration("duration", 1234567*time.Nanosecond), slog.String("era", "2026"),
		slog.String("pv", "2026-07-28"), slog.String("session", ""),
	}
	ctx := WithRequest(context.Background(), "4f1c2a9e0b7d4e3f8a6b5c4d3e2f1a0b", "0af7651916cd43dd8448eb211c80319c")
	run := func(name string, l *slog.Logger, direct bool) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if direct {
					LogAttrs(ctx, l, slog.LevelInfo, "request", attrs...)
				} else {
					l.LogAttrs(ctx, slog.LevelInfo, "request", attrs...)
				}
			}
		})
	}
	var discard bytes.Buffer
	sink := writerFunc(func(p []byte) (int, error) { discard.Reset(); return len(p), nil })
	run("slog", slog.New(NewContextHandler(slog.NewJSONHandler(sink, nil))), false)
	fast := slog.New(newJSONHandler(sink, &slog.HandlerOptions{}))
	run("gateway-logger", fast, false)
	run("gateway-LogAttrs", fast, true)
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
