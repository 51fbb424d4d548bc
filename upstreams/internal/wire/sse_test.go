package wire

import (
	"errors"
	"io"
	"math"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/mcp-gateway/gateway/internal/eventstream"
)

func TestSSEReader(t *testing.T) {
	tests := []struct {
		name string
		in   string
		max  int
		want []string
		err  error
	}{
		{"basic", "event: message\ndata: {\"a\":1}\n\n", 100, []string{`{"a":1}`}, io.EOF},
		{"comments and CRLF", ": keep-alive\r\n\r\ndata: a\r\ndata:b\r\n\r\nid: 4\nretry: 10\n\n", 100, []string{"a\nb"}, io.EOF},
		{"partial event dropped", "data: x\n\ndata: y", 100, []string{"x"}, io.EOF},
		{"event too large", "data: 0123456789\n\n", 5, nil, ErrEventTooLarge},
		// The bound is on an event's data, as on a JSON body: data of exactly max bytes is
		// read, whatever its line spends on the field name; one byte more is not.
		{"data of exactly max", "data: 0123456789\n\n", 10, []string{"0123456789"}, io.EOF},
		{"data of exactly max, no space", "data:0123456789\r\r", 10, []string{"0123456789"}, io.EOF},
		{"data one over max", "data: 0123456789\n\n", 9, nil, ErrEventTooLarge},
		{"data of max over lines", "data: 01234\ndata: 5678\n\n", 10, []string{"01234\n5678"}, io.EOF},
		{"too large across lines", "data: 0123\ndata: 4567\n\n", 6, nil, ErrEventTooLarge},
		{"long line beyond buffer", "data: " + strings.Repeat("x", 40000) + "\n\n", 50000, []string{strings.Repeat("x", 40000)}, io.EOF},
		{"long line over max", "data: " + strings.Repeat("x", 40000) + "\n\n", 1000, nil, ErrEventTooLarge},
		// A bound at the top of int (a maxResponseBytes as large as configuration allows) is a
		// bound, not an overflow that refuses every line.
		// The standard's parsing rules (WHATWG HTML, "Parsing an event stream"), one a row.
		{"lone CR ends lines", "data: a\rdata: b\r\rdata: c\r\r", 100, []string{"a\nb", "c"}, io.EOF},
		{"LF ends lines", "data: a\ndata: b\n\n", 100, []string{"a\nb"}, io.EOF},
		{"mixed line ends", "data: a\r\ndata: b\rdata: c\n\r\n", 100, []string{"a\nb\nc"}, io.EOF},
		{"CR then LF is one line end", "data: a\r\n\r\ndata: b\r\n\r\n", 100, []string{"a", "b"}, io.EOF},
		{"CR then CR is two", "data: a\r\rdata: b\r\r", 100, []string{"a", "b"}, io.EOF},
		{"leading BOM skipped", "\uFEFFdata: a\n\n", 100, []string{"a"}, io.EOF},
		{"BOM before a comment", "\uFEFF: hi\rdata: a\r\r", 100, []string{"a"}, io.EOF},
		{"only the first BOM skipped", "\uFEFF\uFEFFdata: a\n\ndata: b\n\n", 100, []string{"b"}, io.EOF},
		{"BOM later is data", "data: \uFEFFa\n\n", 100, []string{"\uFEFFa"}, io.EOF},
		{"field without colon", "data\ndata\n\n", 100, []string{"\n"}, io.EOF},
		{"lone empty data not dispatched", "data\n\ndata: x\n\n", 100, []string{"x"}, io.EOF},
		{"one leading space stripped", "data:  a\ndata:b \n\n", 100, []string{" a\nb "}, io.EOF},
		{"tab is not stripped", "data:\ta\n\n", 100, []string{"\ta"}, io.EOF},
		{"comments ignored", ":a\n: b\ndata: x\n:c\n\n", 100, []string{"x"}, io.EOF},
		{"field names case-sensitive", "Data: x\nDATA: y\n\ndata: z\n\n", 100, []string{"z"}, io.EOF},
		{"unknown fields ignored", "event: message\nid: 1\nretry: x\nfoo: bar\ndata: z\n\n", 100, []string{"z"}, io.EOF},
		// Only message events are messages, as both SDKs' clients read them: an event of any
		// other type is passed over, whatever its data and wherever its event field stands.
		{"other event type passed over", "event: ping\ndata: {\"a\":1}\n\ndata: z\n\n", 100, []string{"z"}, io.EOF},
		{"event type after its data", "data: x\nevent: endpoint\n\nevent: message\ndata: z\n\n", 100, []string{"z"}, io.EOF},
		{"event type case-sensitive", "event: Message\ndata: x\n\ndata: z\n\n", 100, []string{"z"}, io.EOF},
		{"empty event type is a message", "event\ndata: x\n\nevent:\ndata: z\n\n", 100, []string{"x", "z"}, io.EOF},
		{"last event type counts", "event: ping\nevent: message\ndata: x\n\n", 100, []string{"x"}, io.EOF},
		{"event type ends with its event", "event: ping\n\ndata: z\n\n", 100, []string{"z"}, io.EOF},
		{"event with no data", "event: e\nid: 1\n\ndata: z\n\n", 100, []string{"z"}, io.EOF},
		{"final event without blank line", "data: x\n\ndata: y\n", 100, []string{"x"}, io.EOF},
		{"final event ended by CR", "data: x\r\rdata: y\r", 100, []string{"x"}, io.EOF},
		{"line over max with CR", "data: 0123456789\r\r", 5, nil, ErrEventTooLarge},
		{"line over max, CR line ends", ": " + strings.Repeat("x", 40000) + "\rdata: y\r\r", 1000, nil, ErrEventTooLarge},
		{"long CR lines beyond buffer", ": " + strings.Repeat("x", 40000) + "\rdata: " + strings.Repeat("y", 40000) + "\r\r", 50000, []string{strings.Repeat("y", 40000)}, io.EOF},
		{"the largest bound", ": hi\ndata: x\n\n", math.MaxInt, []string{"x"}, io.EOF},
		{"next to the largest bound", "data: x\n\n", math.MaxInt - 1, []string{"x"}, io.EOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Whole, and a byte a read: line ends split across reads (a CR in one read, its
			// LF in the next) end one line, as in one read.
			for _, in := range []io.Reader{strings.NewReader(tt.in), iotest.OneByteReader(strings.NewReader(tt.in))} {
				r := NewSSEReader(in, tt.max)
				var got []string
				var err error
				for range 100 {
					var d []byte
					if d, err = r.Next(); err != nil {
						break
					}
					got = append(got, string(d))
				}
				if !errors.Is(err, tt.err) || strings.Join(got, "|") != strings.Join(tt.want, "|") {
					t.Fatalf("got %q, %v; want %q, %v", got, err, tt.want, tt.err)
				}
			}
		})
	}
}

func FuzzSSEReader(f *testing.F) {
	f.Add([]byte("data: a\n\n: c\ndata: b\r\n\r\n"), 16)
	f.Add([]byte("data"), 1)
	f.Add([]byte("\uFEFFdata: a\rdata: b\r\n\r"), 16)
	f.Fuzz(func(t *testing.T, in []byte, max int) {
		if max <= 0 || max > 1<<16 {
			return
		}
		r := NewSSEReader(strings.NewReader(string(in)), max)
		for range len(in) + 2 {
			d, err := r.Next()
			if err != nil {
				return
			}
			if len(d) > max {
				t.Fatalf("event of %d bytes exceeds max %d", len(d), max)
			}
		}
		t.Fatal("reader did not end")
	})
}

// FuzzSSEReaderAgreesWithEventstream: the gateway's reader returns the data of exactly the
// message events the clients' reader (eventstream.Reader) returns with data that is not empty, in
// order, and fails where it fails, a byte a read as much as whole: the gateway reads from a
// backend's stream what a client reads from the same bytes.
func FuzzSSEReaderAgreesWithEventstream(f *testing.F) {
	f.Add("data: a\n\n: c\ndata: b\r\n\r\nevent: e\ndata\n\n", 16)
	f.Add("\uFEFFdata: a\rdata: b\r\n\rid: 1\n\n", 4)
	f.Add("data: 0123\ndata: 4567\n\n", 6)
	f.Add("event: ping\ndata: a\n\nevent:\ndata: b\n\ndata: c\nevent: message\n\n", 16)
	f.Fuzz(func(t *testing.T, in string, max int) {
		if max <= 0 || max > 1<<16 {
			return
		}
		var want []string
		evs, werr := eventstream.Parse([]byte(in), max)
		for _, ev := range evs {
			if len(ev.Data) > 0 && (ev.Type == "" || ev.Type == "message") {
				want = append(want, string(ev.Data))
			}
		}
		for _, src := range []io.Reader{strings.NewReader(in), iotest.OneByteReader(strings.NewReader(in))} {
			r := NewSSEReaderSize(src, max, SSEListenBuffer)
			var got []string
			var err error
			for {
				var d []byte
				if d, err = r.Next(); err != nil {
					break
				}
				got = append(got, string(d))
			}
			r.Release()
			tooLarge := errors.Is(err, ErrEventTooLarge)
			if strings.Join(got, "\x00") != strings.Join(want, "\x00") || len(got) != len(want) ||
				tooLarge != errors.Is(werr, eventstream.ErrTooLarge) || !tooLarge && !errors.Is(err, io.EOF) {
				t.Fatalf("the gateway read %q, %v; the clients' reader %q, %v", got, err, want, werr)
			}
		}
	})
}
