package logging

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
)

func TestContextHandler(t *testing.T) {
	tests := []struct {
		name string
		ctx  context.Context
		log  func(*slog.Logger, context.Context)
		want map[string]any // expected request_id / trace_id; absent keys must be absent
	}{
		{"no request in context", context.Background(),
			func(l *slog.Logger, ctx context.Context) { l.InfoContext(ctx, "m") }, map[string]any{}},
		{"both added", WithRequest(context.Background(), "r1", "t1"),
			func(l *slog.Logger, ctx context.Context) { l.InfoContext(ctx, "m") },
			map[string]any{KeyRequestID: "r1", KeyTraceID: "t1"}},
		{"empty trace id left out", WithRequest(context.Background(), "r1", ""),
			func(l *slog.Logger, ctx context.Context) { l.InfoContext(ctx, "m") },
			map[string]any{KeyRequestID: "r1"}},
		{"the record's own request_id wins", WithRequest(context.Background(), "r1", "t1"),
			func(l *slog.Logger, ctx context.Context) { l.InfoContext(ctx, "m", KeyRequestID, "own") },
			map[string]any{KeyRequestID: "own", KeyTraceID: "t1"}},
		{"through WithAttrs", WithRequest(context.Background(), "r2", "t2"),
			func(l *slog.Logger, ctx context.Context) { l.With("component", "authz").InfoContext(ctx, "m") },
			map[string]any{KeyRequestID: "r2", KeyTraceID: "t2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			log, err := NewLogger(&out, "info", FormatJSON)
			if err != nil {
				t.Fatal(err)
			}
			tt.log(log, tt.ctx)
			if n := strings.Count(out.String(), `"`+KeyRequestID+`"`); n > 1 {
				t.Errorf("request_id appears %d times: %s", n, out.String())
			}
			var line map[string]any
			if err := json.Unmarshal(out.Bytes(), &line); err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{KeyRequestID, KeyTraceID} {
				if line[k] != tt.want[k] {
					t.Errorf("%s = %v, want %v", k, line[k], tt.want[k])
				}
			}
		})
	}
}
