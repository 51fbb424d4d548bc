package logging

import (
	"io"
	"log/slog"
	"os"
	"testing"
)

// benchOutput is a real file descriptor, so the baseline pays a real write(2) per line.
func benchOutput(b *testing.B) *os.File {
	b.Helper()
	f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	return f
}

const benchLine = `{"time":"2026-07-28T12:00:00.000Z","level":"INFO","msg":"request","request_id":"4f1c2a9e0b7d4e3f8a6b5c4d3e2f1a0b","method":"tools/call","name":"github__create_issue","upstream":"github","subject":"https://idp.example.com/#alice","status":200,"outcome":"ok","sse":false,"duration":1234567}` + "\n"

// BenchmarkWrite compares raw Write calls from parallel request goroutines.
func BenchmarkWrite(b *testing.B) {
	for _, impl := range benchWriters() {
		b.Run(impl.name, func(b *testing.B) {
			w, dropped, closeFn := impl.make(b, benchOutput(b))
			line := []byte(benchLine)
			b.ReportAllocs()
			b.SetBytes(int64(len(line)))
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					_, _ = w.Write(line)
				}
			})
			b.StopTimer()
			closeFn()
			b.ReportMetric(float64(dropped())/float64(b.N), "dropped/op")
		})
	}
}

// BenchmarkSlog compares the same access line logged through slog's JSON handler.
func BenchmarkSlog(b *testing.B) {
	for _, impl := range benchWriters() {
		b.Run(impl.name, func(b *testing.B) {
			w, dropped, closeFn := impl.make(b, benchOutput(b))
			log := slog.New(slog.NewJSONHandler(w, nil))
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					log.LogAttrs(b.Context(), slog.LevelInfo, "request",
						slog.String("request_id", "4f1c2a9e0b7d4e3f8a6b5c4d3e2f1a0b"),
						slog.String("method", "tools/call"), slog.String("name", "github__create_issue"),
						slog.String("upstream", "github"), slog.String("subject", "https://idp.example.com/#alice"),
						slog.Int("status", 200), slog.String("outcome", "ok"), slog.Int64("duration", 1234567))
				}
			})
			b.StopTimer()
			closeFn()
			b.ReportMetric(float64(dropped())/float64(b.N), "dropped/op")
		})
	}
}

type benchWriter struct {
	name string
	make func(b *testing.B, out io.Writer) (w io.Writer, dropped func() uint64, close func())
}

func benchWriters() []benchWriter {
	return []benchWriter{
		{"mutex", func(_ *testing.B, out io.Writer) (io.Writer, func() uint64, func()) {
			return &lockedOut{w: out}, func() uint64 { return 0 }, func() {}
		}},
		{"async", func(b *testing.B, out io.Writer) (io.Writer, func() uint64, func()) {
			w, err := New(out, Config{})
			if err != nil {
				b.Fatal(err)
			}
			return w, w.Dropped, func() {
				if err := w.Close(); err != nil {
					b.Error(err)
				}
			}
		}},
	}
}
