package logging

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestNewLogger(t *testing.T) {
	tests := []struct {
		level, format string
		err           error
		debugShown    bool
		json          bool
	}{
		{"", "", nil, false, true},
		{"debug", "json", nil, true, true},
		{"warn", "text", nil, false, false},
		{"loud", "json", ErrLevel, false, false},
		{"info", "xml", ErrFormat, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.level+"/"+tt.format, func(t *testing.T) {
			var out bytes.Buffer
			log, err := NewLogger(&out, tt.level, tt.format)
			if !errors.Is(err, tt.err) {
				t.Fatalf("NewLogger = %v, want %v", err, tt.err)
			}
			if err != nil {
				return
			}
			log.Debug("dbg")
			log.Error("boom", "request_id", "r1")
			got := out.String()
			if strings.Contains(got, "dbg") != tt.debugShown {
				t.Errorf("debug line shown = %v, want %v: %s", !tt.debugShown, tt.debugShown, got)
			}
			last := got[strings.LastIndex(strings.TrimSuffix(got, "\n"), "\n")+1:]
			if json.Valid([]byte(last)) != tt.json {
				t.Errorf("line %q: JSON = %v, want %v", last, !tt.json, tt.json)
			}
		})
	}
}

// TestLoggerThroughWriter: the intended wiring, a slog handler over a Writer, delivers whole
// lines once the Writer is closed.
func TestLoggerThroughWriter(t *testing.T) {
	var out bytes.Buffer
	w := newWriter(t, &out, Config{})
	log, err := NewLogger(w, "info", "json")
	if err != nil {
		t.Fatal(err)
	}
	for range 100 {
		log.Info("request", "method", "tools/call", "status", 200)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 100 {
		t.Fatalf("%d lines, want 100", len(lines))
	}
	for _, l := range lines {
		var v struct{ Msg, Method string }
		if err := json.Unmarshal([]byte(l), &v); err != nil || v.Msg != "request" || v.Method != "tools/call" {
			t.Fatalf("line %q: %v", l, err)
		}
	}
}
