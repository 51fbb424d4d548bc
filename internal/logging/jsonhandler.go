package logging

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
)

// jsonHandler writes exactly the lines slog.NewJSONHandler wrapped in NewContextHandler writes,
// but builds the common ones (attributes of the scalar kinds, no groups) itself. Every request
// logs an access line and, with authentication, a decision line; through slog's handler the two
// were 8 % of the authenticated gateway's CPU in a profile, most of it the Record's attribute
// copies, the handler's per-record state and the context handler's second pass over the
// attributes. Anything else (groups, values of kind Any or LogValuer, a time outside years
// 0–9999, an empty key) goes to slog's own handler, which writes through the same lock.
// TestJSONHandlerMatchesSlog compares the two byte for byte.
type jsonHandler struct {
	std   slog.Handler // NewContextHandler(slog.NewJSONHandler) with the same attrs and groups
	out   *lockedOut
	level slog.Leveler
	pre   []byte // the WithAttrs attributes, rendered, each with its leading comma
	slow  bool   // a group was opened, or a WithAttrs attribute is not a plain scalar
	clip  int    // > 0: string values are written as std's ReplaceAttr (clipAttr) writes them: lineValue
}

// lockedOut serializes the two paths' writes, as slog's handler does its own.
type lockedOut struct {
	mu sync.Mutex
	w  io.Writer
}

func (o *lockedOut) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.w.Write(p)
}

func newJSONHandler(w io.Writer, opts *slog.HandlerOptions) *jsonHandler {
	out := &lockedOut{w: w}
	lv := opts.Level
	if lv == nil {
		lv = slog.LevelInfo
	}
	return &jsonHandler{std: NewContextHandler(slog.NewJSONHandler(out, opts)), out: out, level: lv}
}

func (h *jsonHandler) Enabled(_ context.Context, l slog.Level) bool {
	return l >= h.level.Level()
}

func (h *jsonHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.std = h.std.WithAttrs(attrs)
	if !c.slow {
		pre := append([]byte(nil), h.pre...)
		for _, a := range attrs {
			var ok bool
			if pre, ok = appendAttr(pre, a, h.clip); !ok {
				c.slow = true
				break
			}
		}
		c.pre = pre
	}
	return &c
}

func (h *jsonHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.std = h.std.WithGroup(name)
	c.slow = true
	return &c
}

// Handle writes r. Records logged through slog.Logger come here; LogAttrs skips the Record.
func (h *jsonHandler) Handle(ctx context.Context, r slog.Record) error {
	if !h.slow && r.NumAttrs() <= maxFastAttrs {
		var attrs [maxFastAttrs]slog.Attr
		n := 0
		r.Attrs(func(a slog.Attr) bool {
			attrs[n] = a
			n++
			return true
		})
		if ok, err := h.write(ctx, r.Time, r.Level, r.Message, attrs[:n]); ok {
			return err
		}
	}
	return h.std.Handle(ctx, r)
}

// maxPooledLine bounds the line buffers kept for reuse, so one huge line does not stay in memory.
const maxPooledLine = 64 << 10

// maxFastAttrs bounds the attributes of a record the fast path copies onto its stack.
const maxFastAttrs = 16

var linePool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// write renders the line and writes it; false (nothing written) when some part needs slog's
// own handler.
func (h *jsonHandler) write(ctx context.Context, t time.Time, level slog.Level, msg string, attrs []slog.Attr) (bool, error) {
	if h.slow {
		return false, nil
	}
	bp := linePool.Get().(*[]byte)
	defer linePool.Put(bp)
	b := (*bp)[:0]
	b = append(b, '{')
	if !t.IsZero() {
		t = t.Round(0)
		if y := t.Year(); y < 0 || y >= 10000 {
			return false, nil
		}
		b = append(b, `"time":"`...)
		b = t.AppendFormat(b, time.RFC3339Nano)
		b = append(b, `",`...)
	}
	b = append(b, `"level":`...)
	b = appendString(b, level.String())
	b = append(b, `,"msg":`...)
	if h.clip > 0 {
		msg = lineValue(slog.MessageKey, msg, h.clip)
	}
	b = appendString(b, msg)
	b = append(b, h.pre...)
	hasID, hasTrace := false, false
	for _, a := range attrs {
		var ok bool
		if b, ok = appendAttr(b, a, h.clip); !ok {
			return false, nil
		}
		hasID = hasID || a.Key == KeyRequestID
		hasTrace = hasTrace || a.Key == KeyTraceID
	}
	if info, ok := ctx.Value(requestKey{}).(*requestInfo); ok {
		if !hasID && info.requestID != "" {
			b = append(b, `,"`+KeyRequestID+`":`...)
			b = appendString(b, info.requestID)
		}
		if !hasTrace && info.traceID != "" {
			b = append(b, `,"`+KeyTraceID+`":`...)
			b = appendString(b, info.traceID)
		}
	}
	b = append(b, '}', '\n')
	if cap(b) <= maxPooledLine {
		*bp = b
	}
	_, err := h.out.Write(b)
	return true, err
}

// appendAttr appends ,"key":value for an attribute of a scalar kind; false for the rest, and
// for what slog would drop or treat specially (an empty key).
func appendAttr(b []byte, a slog.Attr, clip int) ([]byte, bool) {
	if a.Key == "" {
		return b, false
	}
	v := a.Value
	b = append(b, ',')
	b = appendString(b, a.Key)
	b = append(b, ':')
	switch v.Kind() {
	case slog.KindString:
		if clip > 0 {
			b = appendString(b, lineValue(a.Key, v.String(), clip))
		} else {
			b = appendString(b, v.String())
		}
	case slog.KindInt64:
		b = strconv.AppendInt(b, v.Int64(), 10)
	case slog.KindUint64:
		b = strconv.AppendUint(b, v.Uint64(), 10)
	case slog.KindBool:
		b = strconv.AppendBool(b, v.Bool())
	case slog.KindDuration:
		b = strconv.AppendInt(b, int64(v.Duration()), 10)
	default:
		return b, false
	}
	return b, true
}

// LogAttrs logs like l.LogAttrs, without the caller's program counter (which the gateway's
// handlers never print) and, for the gateway's JSON handler, without building a slog.Record.
func LogAttrs(ctx context.Context, l *slog.Logger, level slog.Level, msg string, attrs ...slog.Attr) {
	h := l.Handler()
	if !h.Enabled(ctx, level) {
		return
	}
	t := time.Now()
	if jh, ok := h.(*jsonHandler); ok {
		if ok, _ := jh.write(ctx, t, level, msg, attrs); ok {
			return
		}
	}
	r := slog.NewRecord(t, level, msg, 0)
	r.AddAttrs(attrs...)
	_ = h.Handle(ctx, r)
}

// appendString appends s as a JSON string escaped as slog's JSON handler escapes it: the quote,
// the backslash and control characters, invalid UTF-8 as U+FFFD, and U+2028 and U+2029.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if jsonSafe[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

const hexDigits = "0123456789abcdef"

// jsonSafe marks the ASCII bytes a JSON string holds as they are.
var jsonSafe = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()
