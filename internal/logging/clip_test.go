package logging

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestLongValuesClipped: every string value and error text a line carries is cut to
// MaxValueBytes at a character boundary, in both formats and on both paths of the JSON handler
// (its own, and slog's for groups and errors); values that fit are written as they are.
func TestLongValuesClipped(t *testing.T) {
	long := strings.Repeat("é", MaxValueBytes) // 2 bytes each: the cut falls inside one
	want := long[:MaxValueBytes] + "…"
	for _, format := range []string{FormatJSON, FormatText} {
		var out bytes.Buffer
		log, err := NewLogger(&out, "info", format)
		if err != nil {
			t.Fatal(err)
		}
		log.Info("fast", "name", long, "short", "kept")
		log.Info("error", "error", errors.New(long))
		log.With("name", long).Info("with")
		log.WithGroup("g").Info("group", "name", long)
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if len(lines) != 4 {
			t.Fatalf("%s: %d lines", format, len(lines))
		}
		for _, line := range lines {
			if len(line) > MaxValueBytes+256 || !utf8.ValidString(line) || !strings.Contains(line, "kept") && strings.Contains(line, "fast") {
				t.Errorf("%s: line of %d bytes: %.120s", format, len(line), line)
			}
			if format == FormatJSON {
				var m map[string]any
				if err := json.Unmarshal([]byte(line), &m); err != nil {
					t.Fatal(err)
				}
				v := m["name"]
				if m["error"] != nil {
					v = m["error"]
				}
				if g, ok := m["g"].(map[string]any); ok {
					v = g["name"]
				}
				if v != want {
					t.Errorf("json %s: value of %d bytes, want %d ending in …", m["msg"], len(v.(string)), len(want))
				}
			}
		}
	}
	if got := clipString("short", MaxValueBytes); got != "short" {
		t.Errorf("clipString(short) = %q", got)
	}
}

// TestClipAttrMatchesFastPath: NewLogger's JSON lines are the same bytes whether the handler's
// own path or slog's writes them, long values and URLs in errors' texts included.
func TestClipAttrMatchesFastPath(t *testing.T) {
	long := strings.Repeat("ab\"é", MaxValueBytes)
	var fast, slow bytes.Buffer
	opts := &slog.HandlerOptions{ReplaceAttr: clipAttr}
	h := newJSONHandler(&fast, opts)
	h.clip = MaxValueBytes
	std := slog.New(NewContextHandler(slog.NewJSONHandler(&slow, opts)))
	for _, l := range []*slog.Logger{slog.New(h), std} {
		l.Info(long, "name", long, "n", 3, "error", `Post "https://u:p@h/hook/t?key=k": refused`, "url", "https://h/?key=k")
		l.Info("to\u202eol", "name", "a\u2066b\u0085c", "error", "x\u202dy\u009b")
	}
	as, bs := strings.Split(fast.String(), "\n"), strings.Split(slow.String(), "\n")
	if len(as) != 3 || len(bs) != 3 {
		t.Fatalf("fast wrote %d lines, slow %d, want 2 each", len(as)-1, len(bs)-1)
	}
	for k, a := range as[:2] {
		b := bs[k]
		if i := strings.Index(a, `"level"`); i < 0 || a[i:] != b[strings.Index(b, `"level"`):] {
			t.Fatalf("fast %.200q\nslow %.200q", a, b)
		}
	}
}

// TestLineControlsReplaced: a value a client chose (a tool name, a resource URI, a backend's
// error text) may hold characters JSON lets through unescaped that a reader of the line acts
// on: U+0085 (NEL) breaks the line for readers that split as Unicode does, so that the rest
// reads as a line of the client's choosing; another C1 control (U+009B, CSI) starts a terminal
// escape sequence; a bidirectional control makes a terminal show the rest of the line
// reordered. Every string a line carries, the message, an attribute, one given to With or in
// a group, and an error's text, has each written as U+FFFD, in both formats and on both paths
// of the JSON handler; other text is kept.
func TestLineControlsReplaced(t *testing.T) {
	controls := []rune{'\u0080', '\u0085', '\u009b', '\u009f', '\u061c', '\u200e', '\u200f', '\u202a', '\u202b',
		'\u202c', '\u202d', '\u202e', '\u2066', '\u2067', '\u2068', '\u2069'}
	v := "é"
	for _, c := range controls {
		v += string(c) + "é"
	}
	want := "é" + strings.Repeat("\ufffdé", len(controls))
	for _, format := range []string{FormatJSON, FormatText} {
		var out bytes.Buffer
		log, err := NewLogger(&out, "info", format)
		if err != nil {
			t.Fatal(err)
		}
		log.Info(v, "name", v)
		log.Info("error", "error", errors.New(v), "errs", []error{errors.New(v)})
		log.With("name", v).Info("with")
		log.WithGroup("g").Info("group", "name", v)
		text := out.String()
		if strings.IndexFunc(text, isLineControl) >= 0 {
			t.Errorf("%s: a control reached the output:\n%+q", format, text)
		}
		const values = 6 // the message, name, error, errs, With's name, the group's name
		if n := strings.Count(text, "\ufffd"); n != values*len(controls) {
			t.Errorf("%s: %d U+FFFD, want %d:\n%s", format, n, values*len(controls), text)
		}
		if format == FormatJSON && strings.Count(text, want) != values {
			t.Errorf("%s: the values are not each %q:\n%s", format, want, text)
		}
	}
	if s := "plain ascii, é, ©, \u00a0 and \u2028"; withoutLineControls(s) != s {
		t.Errorf("withoutLineControls changed %q", s)
	}
}
