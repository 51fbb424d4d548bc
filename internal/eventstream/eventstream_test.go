package eventstream

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// render is an event as the table writes it: type, id and data, "-" for what it did not have.
func render(ev Event) string {
	s := "-"
	if ev.Type != "" {
		s = ev.Type
	}
	if ev.HasID {
		s += " id=" + ev.ID
	} else {
		s += " -"
	}
	if ev.HasData {
		return s + " " + fmt.Sprintf("%q", ev.Data)
	}
	return s + " -"
}

// TestReader: the standard's parsing rules (WHATWG HTML, "Parsing an event stream"), each
// stream read whole and a byte a read, so that a CR in one read and its LF in the next end
// one line, and a CR-ended event is returned without waiting for another byte.
func TestReader(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
	}{
		{"LF", "data: a\ndata: b\n\n", []string{`- - "a\nb"`}},
		{"CRLF", "data: a\r\n\r\ndata: b\r\n\r\n", []string{`- - "a"`, `- - "b"`}},
		{"lone CR", "data: a\rdata: b\r\rdata: c\r\r", []string{`- - "a\nb"`, `- - "c"`}},
		{"mixed", "data: a\r\ndata: b\rdata: c\n\r\n", []string{`- - "a\nb\nc"`}},
		{"CR then LF is one line end, CR CR two", "data: a\r\n\rdata: b\r\r\n", []string{`- - "a"`, `- - "b"`}},
		{"BOM skipped once", "\uFEFFdata: a\n\n\uFEFFdata: b\n\n", []string{`- - "a"`}},
		{"field without colon", "data\ndata\n\n", []string{`- - "\n"`}},
		{"empty data", "data\n\n", []string{`- - ""`}},
		{"one space stripped", "data:  a\n\n", []string{`- - " a"`}},
		{"no space", "data:a\n\n", []string{`- - "a"`}},
		{"colon in the value", "data: a:b\n\n", []string{`- - "a:b"`}},
		{"comments and unknown fields", ": c\nDATA: x\nfoo: y\ndata: z\n\n", []string{`- - "z"`}},
		{"event and id", "event: message\nid: 7\ndata: {}\n\n", []string{`message id=7 "{}"`}},
		{"an id alone", "id: 1\n\n", []string{`- id=1 -`}},
		{"an id with NUL is ignored", "id: a\x00b\ndata: x\n\n", []string{`- - "x"`}},
		{"retry alone", "retry: 5\n\n", []string{`- - -`}},
		{"blank lines and comments make no event", "\n\n: keep-alive\n\n", nil},
		{"final event without a blank line", "data: x\n\ndata: y\n", []string{`- - "x"`}},
		{"final event cut after CR", "data: x\r", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, r := range []io.Reader{strings.NewReader(tt.in), iotest.OneByteReader(strings.NewReader(tt.in))} {
				e := NewReader(r, 16, 1<<10)
				var got []string
				for {
					ev, err := e.Next()
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, render(ev))
				}
				if strings.Join(got, "|") != strings.Join(tt.want, "|") {
					t.Fatalf("got %q, want %q", got, tt.want)
				}
			}
		})
	}
}

// TestReaderCRDispatchesAtOnce: an event ended by CR CR is returned without another byte of the
// stream, which may be an open stream's last for a long time.
func TestReaderCRDispatchesAtOnce(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	e := NewReader(pr, 64, 1<<10)
	go func() { _, _ = io.WriteString(pw, "data: a\r\r") }()
	ev, err := e.Next()
	if err != nil || string(ev.Data) != "a" {
		t.Fatalf("%+v %v", ev, err)
	}
}

// TestReaderBounds: a line or an event's data past the bound is ErrTooLarge, whatever the
// line ends; at the bound it is read: the data of one line may be max bytes, as a JSON body of
// max bytes is read, whatever the field name spends (LineBound).
func TestReaderBounds(t *testing.T) {
	const max = 32
	for _, end := range []string{"\n", "\r", "\r\n"} {
		at := "data: " + strings.Repeat("x", max) + end + end
		if evs, err := Parse([]byte(at), max); err != nil || len(evs) != 1 || len(evs[0].Data) != max {
			t.Errorf("a line at the bound, ended %q: %v %v", end, evs, err)
		}
		over := "data: " + strings.Repeat("x", max+1) + end + end
		if _, err := Parse([]byte(over), max); !errors.Is(err, ErrTooLarge) {
			t.Errorf("a line past the bound, ended %q: %v", end, err)
		}
		comment := ":" + strings.Repeat("x", LineBound(max)) + end + "data: y" + end + end
		if _, err := Parse([]byte(comment), max); !errors.Is(err, ErrTooLarge) {
			t.Errorf("a comment line past the bound, ended %q: %v", end, err)
		}
		lines := strings.Repeat("data: "+strings.Repeat("x", 10)+end, 4) + end
		if _, err := Parse([]byte(lines), max); !errors.Is(err, ErrTooLarge) {
			t.Errorf("an event past the bound, ended %q: %v", end, err)
		}
	}
}

// FuzzReader: any stream reads the same whole and a byte a read, never panics, and its line
// ends may be any of the three.
func FuzzReader(f *testing.F) {
	for _, s := range []string{"data: a\n\n", "data: a\r\rid: 1\r\n\r\n", "\uFEFFevent: e\ndata\n\n", ":\r\n", "data: a\r"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		read := func(r io.Reader) string {
			e := NewReader(r, 16, 1<<12)
			var got []string
			for {
				ev, err := e.Next()
				if err != nil {
					return strings.Join(got, "|") + "|" + err.Error()
				}
				got = append(got, render(ev))
			}
		}
		whole := read(strings.NewReader(in))
		if bytewise := read(iotest.OneByteReader(strings.NewReader(in))); whole != bytewise {
			t.Fatalf("whole %q, a byte a read %q", whole, bytewise)
		}
		for _, end := range []string{"\r", "\r\n"} {
			if strings.ContainsAny(in, "\r") {
				break
			}
			if other := read(strings.NewReader(strings.ReplaceAll(in, "\n", end))); other != whole {
				t.Fatalf("LF %q, %q %q", whole, end, other)
			}
		}
	})
}

// TestReaderAllocations: a line whole in the read buffer is parsed in place, so an event costs
// only what it returns (its type and its data), not a copy of each line; the load generator
// reads every event of its run with this Reader.
func TestReaderAllocations(t *testing.T) {
	const event = ": comment\nevent: message\nretry: 10\ndata: {\"a\":1}\ndata: {\"b\":2}\n\n"
	src := strings.NewReader(strings.Repeat(event, 200))
	e := NewReader(src, 4<<10, 1<<20)
	allocs := testing.AllocsPerRun(100, func() {
		ev, err := e.Next()
		if err != nil || ev.Type != "message" || string(ev.Data) != "{\"a\":1}\n{\"b\":2}" {
			t.Fatalf("%q %q %v", ev.Type, ev.Data, err)
		}
	})
	// The type's string, and the data's buffer growing once for its second line.
	if allocs > 3 {
		t.Errorf("%v allocations an event, want at most 3", allocs)
	}
}
