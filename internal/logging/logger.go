package logging

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"unicode/utf8"

	"github.com/mcp-gateway/gateway/internal/configerr"
)

// ErrLevel and ErrFormat report a log level or format NewLogger does not know.
var (
	ErrLevel  = errors.New("logging: unknown level")
	ErrFormat = errors.New("logging: unknown format")
)

// MaxValueBytes bounds each string value a line carries (an error's text included): many are
// what a client chose (a tool name or resource URI of up to the header or body limits, a
// backend's error text), and a line as long as they are would let one caller fill the
// Writer's queue, so that other callers' lines are dropped. A longer value is cut at a
// character boundary and ends with "…".
const MaxValueBytes = 1024

// clipString is s cut to its first n bytes or fewer (n > 0), at a character boundary, with "…"
// appended when cut; s itself, without allocating, when it fits.
func clipString(s string, n int) string {
	if n <= 0 || len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

// clipAttr is the ReplaceAttr of NewLogger's handlers: string values and errors' texts cut to
// MaxValueBytes, and errors' texts, and strings logged as one (keyed "error" or "err"), with
// every URL in them quoted as configerr.URL quotes it (lineValue).
func clipAttr(_ []string, a slog.Attr) slog.Attr {
	switch a.Value.Kind() {
	case slog.KindString:
		if s := a.Value.String(); len(s) > MaxValueBytes || isErrorKey(a.Key) || hasLineControl(s) {
			if c := lineValue(a.Key, s, MaxValueBytes); c != s {
				a.Value = slog.StringValue(c)
			}
		}
	case slog.KindAny:
		switch v := a.Value.Any().(type) {
		case error:
			if s := v.Error(); len(s) > MaxValueBytes || configerr.RedactURLs(s) != s || hasLineControl(s) {
				a.Value = slog.StringValue(clipString(withoutLineControls(configerr.RedactURLs(s)), MaxValueBytes))
			}
		case []error:
			// Several errors (one per backend, per replica) are as many texts that repeat URLs:
			// written as one, each hidden as an error is. Left as they were, the text format
			// printed each whole (fmt's %+v) and JSON as {}.
			a.Value = slog.StringValue(errorsText(v))
		}
	}
	return a
}

// errorsText is errs' texts as a line writes them: each with its URLs quoted as configerr.URL
// quotes them, joined by "; ", cut to MaxValueBytes.
func errorsText(errs []error) string {
	var b strings.Builder
	for i, err := range errs {
		if b.Len() > MaxValueBytes {
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		if err == nil {
			b.WriteString("<nil>")
			continue
		}
		b.WriteString(configerr.RedactURLs(err.Error()))
	}
	return clipString(withoutLineControls(b.String()), MaxValueBytes)
}

// isErrorKey reports whether an attribute keyed key holds an error's text: the gateway logs
// errors under "error" (err.Error() or the error itself), and a few under "err".
func isErrorKey(key string) bool { return key == "error" || key == "err" }

// lineValue is the string s as a line writes it under key: an error's text with its URLs
// quoted as configerr.URL quotes them, since a client's error repeats the URL it was sent to
// whole (a *url.Error: "Post \"https://h/hook/<token>?key=…\": dial tcp …") and a configured
// URL carries credentials in its user information, query and path; then without C1 and
// bidirectional controls (withoutLineControls) and cut to clip (> 0). Other values are the
// gateway's own, and a URL among them (an issuer, a subject) is written as it is.
func lineValue(key, s string, clip int) string {
	if isErrorKey(key) {
		s = configerr.RedactURLs(s)
	}
	return clipString(withoutLineControls(s), clip)
}

// hasLineControl reports whether s holds a character isLineControl names. Most values hold no
// byte any of them starts with, which IndexByte rules out without decoding.
func hasLineControl(s string) bool {
	if strings.IndexByte(s, 0xC2) < 0 && strings.IndexByte(s, 0xE2) < 0 && strings.IndexByte(s, 0xD8) < 0 {
		return false
	}
	return strings.IndexFunc(s, isLineControl) >= 0
}

// withoutLineControls is s with each character isLineControl names written as U+FFFD, as
// invalid UTF-8 is. JSON escapes only the C0 controls (and slog U+2028 and U+2029): a C1
// control passes as it is, and U+0085 (NEL) is a line break to readers that split lines as
// Unicode does (Python's splitlines, for one), so one in a value a client chose would start a
// line of its choosing; U+009B is an escape sequence's start to a terminal that reads 8-bit
// controls; and a bidirectional control makes a terminal or log viewer show the rest of the
// line reordered, the fields after the value included. s itself, without allocating, when it
// holds none.
func withoutLineControls(s string) string {
	if !hasLineControl(s) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if isLineControl(r) {
			return utf8.RuneError
		}
		return r
	}, s)
}

// isLineControl reports the C1 controls (U+0080 to U+009F) and the characters that change the
// direction text is shown in (Unicode's Bidi_Control: the embeddings, overrides and isolates
// with their pops, and the marks).
func isLineControl(r rune) bool {
	return r >= 0x80 && r <= 0x9f || r == '\u061c' || r == '\u200e' || r == '\u200f' ||
		r >= '\u202a' && r <= '\u202e' || r >= '\u2066' && r <= '\u2069'
}

// NewLogger returns a logger writing to w at level ("debug", "info", "warn", "error", or an
// offset such as "info+2"; "" is info) in format (FormatJSON, "" alike, or FormatText), whose
// lines carry the request id and trace id of a context from WithRequest. Pass a *Writer as w to
// keep the output off the request path.
func NewLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	var lv slog.Level
	if level != "" {
		if err := lv.UnmarshalText([]byte(level)); err != nil {
			return nil, fmt.Errorf("%w %q", ErrLevel, level)
		}
	}
	opts := &slog.HandlerOptions{Level: lv, ReplaceAttr: clipAttr}
	switch format {
	case "", FormatJSON:
		h := newJSONHandler(w, opts)
		h.clip = MaxValueBytes
		return slog.New(h), nil
	case FormatText:
		return slog.New(NewContextHandler(slog.NewTextHandler(w, opts))), nil
	}
	return nil, fmt.Errorf("%w %q", ErrFormat, format)
}
