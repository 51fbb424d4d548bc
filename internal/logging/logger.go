package logging

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
)

// ErrLevel and ErrFormat report a log level or format NewLogger does not know.
var (
	ErrLevel  = errors.New("logging: unknown level")
	ErrFormat = errors.New("logging: unknown format")
)

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
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "", FormatJSON:
		return slog.New(newJSONHandler(w, opts)), nil
	case FormatText:
		return slog.New(NewContextHandler(slog.NewTextHandler(w, opts))), nil
	}
	return nil, fmt.Errorf("%w %q", ErrFormat, format)
}
