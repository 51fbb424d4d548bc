package mrtr

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/bidi"

	"github.com/mcp-gateway/gateway/internal/pins"
)

// sentHead opens the second showing of a piece holding right-to-left text.
const sentHead = " (as sent, left to right: "

// TestConfirmMessageShowsRightToLeftAsSent: the client lays the message out as plain text by
// the bidirectional algorithm, so a Hebrew or Arabic letter or an Arabic digit moves the digits
// and punctuation beside it ("ש 0532 0130" reads "0130 0532 ש"), and further, into the names
// and values after it. Each piece holding such text (an argument, a member also forwarded, the
// tool's name) is shown again, in the order sent: its right-to-left characters written as
// [U+XXXX], so that the second showing is laid out left to right, digits in the order sent,
// and ends the move before what follows. Checked for the family: the second showing decodes to
// exactly the piece shown, holds nothing laid out right to left, and the algorithm (both
// paragraph directions) lays it and the text after it left to right; a piece without
// right-to-left text is shown once.
func TestConfirmMessageShowsRightToLeftAsSent(t *testing.T) {
	for _, tt := range []struct {
		tool, args, forwarded string
		// want is a piece the message must hold, its second showing included.
		want string
	}{
		{"t", `{"account":"` + "\u05e9 0532 0130" + `"}`, "",
			`account="ש 0532 0130"` + sentHead + `account="[U+05E9] 0532 0130")`},
		{"t", `{"to":"` + "\u0634 12 34" + `"}`, "", `to="ش 12 34"` + sentHead + `to="[U+0634] 12 34")`},
		{"t", `{"n":"` + "\u0661\u0662 \u0663" + `"}`, "", sentHead + `n="[U+0661][U+0662] [U+0663]")`},
		{"t", `{"` + "\u05e9 1 2" + `":true}`, "", sentHead + `"[U+05E9] 1 2"=true)`},
		{"t", `{"xs":[{"a":"` + "x \u05d0 7/8" + `"}]}`, "", sentHead + `xs=[U+005B]{"a":"x [U+05D0] 7/8"}])`},
		// The move reaches past the value: without the second showing, x="ש", 1="2" reads
		// x="2="1 ,"ש".
		{"t", `{"x":"` + "\u05e9" + `","1":"2"}`, "", `x="ש"` + sentHead + `x="[U+05E9]"), 1="2"?`},
		// A "[" of the piece is written as an escape too: "ש[U+05D0]" and "שא" are two second
		// showings.
		{"t", `{"x":"` + "\u05e9[U+05D0]" + `"}`, "", sentHead + `x="[U+05E9][U+005B]U+05D0]")`},
		// Marks take the direction of the letter they follow: written as escapes too.
		{"t", `{"x":"` + "\u05e9\u05b8 1 2" + `"}`, "", sentHead + `x="[U+05E9][U+05B8] 1 2")`},
		{"t", `{"a":1}`, `{"_meta":{"com.example/to":"` + "\u05e9 0532 0130" + `"}}`,
			sentHead + `_meta={"com.example/to":"[U+05E9] 0532 0130"})?`},
		{"bank__\u05e9 1 2", `{"a":1}`, "", `"bank__ש 1 2"` + sentHead + `"bank__[U+05E9] 1 2") to run with: a=1?`},
	} {
		msg := confirmMessage(tt.tool, json.RawMessage(tt.args), forwardedOrNil(tt.forwarded))
		checkClean(t, msg, maxMessageRunes)
		if !strings.Contains(msg, tt.want) {
			t.Errorf("%s %s: message %q lacks %q", tt.tool, tt.args, msg, tt.want)
		}
		checkShownAsSent(t, msg)
	}
	// What follows right-to-left text is laid out in its own order, whatever the fix's form.
	msg := confirmMessage("t", json.RawMessage(`{"x":"`+"\u05e9"+`","1":"2"}`), nil)
	rtl, after := layout(t, msg, bidi.LeftToRight), utf8.RuneCountInString(msg[:strings.LastIndex(msg, `1="2"`)])
	for k := after - 2; k < len(rtl); k++ {
		if rtl[k] {
			t.Errorf("%q: the argument after a right-to-left value is laid out right to left", msg)
			break
		}
	}
	for _, args := range []string{`{"path":"/tmp/x","name":"` + "\u041f\u0440\u0438\u0432\u0435\u0442 12" + `"}`, `{"x":"[U+05E9]"}`, `{"x":"caf\u00e9 1 2"}`} {
		if msg := confirmMessage("t", json.RawMessage(args), nil); strings.Contains(msg, sentHead) {
			t.Errorf("%s: shown twice without right-to-left text: %q", args, msg)
		}
	}
}

// TestApprovalMessageShowsRightToLeftAsSent: the message that sends the user to the approval
// page names the tool as the form does, a name with right-to-left text shown again in the
// order sent.
func TestApprovalMessageShowsRightToLeftAsSent(t *testing.T) {
	res := ApprovalResult("bank__\u05e9 1 2", "https://gw.example/approval/c/x", "x", "s")
	msg := res.InputRequests[ConfirmKey].Params.Message
	if want := `"bank__ש 1 2"` + sentHead + `"bank__[U+05E9] 1 2")`; !strings.Contains(msg, want) {
		t.Errorf("message %q lacks %q", msg, want)
	}
	checkClean(t, msg, 1000)
	checkShownAsSent(t, msg)
}

// TestConfirmMessageRightToLeftBounded: the second showings keep the message within its bound,
// each cut at a whole character and marked when longer, and every argument is still named or
// counted.
func TestConfirmMessageRightToLeftBounded(t *testing.T) {
	long := strings.Repeat("\u05e9", 200)
	var b strings.Builder
	b.WriteString("{")
	for i := range 10 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"` + long + strconv.Itoa(i) + `":"` + long + `"`)
	}
	b.WriteString("}")
	msg := confirmMessage(strings.Repeat("\u05d0", 100), json.RawMessage(b.String()), json.RawMessage(`{"x-to":"`+long+`"}`))
	checkClean(t, msg, maxMessageRunes)
	if !strings.Contains(msg, "…)") || !strings.Contains(msg, forwardedHeading) || !strings.HasSuffix(msg, "?") {
		t.Errorf("message %q: a second showing is not cut and marked, or the forwarded members are cut off", msg)
	}
	named := strings.Count(msg, sentHead) - 2 // the tool's and the forwarded member's
	more := 0
	if i := strings.Index(msg, ", and "); i >= 0 {
		more, _ = strconv.Atoi(strings.Fields(msg[i+len(", and "):])[0])
	}
	if named+more != 10 {
		t.Errorf("%d arguments named and %d counted of 10 in %q", named, more, msg)
	}
	checkShownAsSent(t, msg)
}

func forwardedOrNil(s string) json.RawMessage {
	if s == "" {
		return nil
	}
	return json.RawMessage(s)
}

var escapeRE = regexp.MustCompile(`\[U\+([0-9A-F]{4,6})\]`)

// checkShownAsSent checks each second showing of msg: it decodes (its escapes read back) to the
// piece just before it, holds only characters laid out left to right among Latin text, and the
// bidirectional algorithm lays it, and the text after it up to the next right-to-left
// character, left to right, in a left-to-right paragraph and in a right-to-left one.
func checkShownAsSent(t *testing.T, msg string) {
	t.Helper()
	runes := []rune(msg)
	for _, dir := range []bidi.Direction{bidi.LeftToRight, bidi.RightToLeft} {
		rtl := layout(t, msg, dir)
		pos := 0
		for {
			i := strings.Index(msg[pos:], sentHead)
			if i < 0 {
				break
			}
			start := pos + i
			end := start + strings.Index(msg[start:], ")") + 1
			sent := msg[start+len(sentHead) : end-1]
			for _, r := range sent {
				if !leftToRightAmongLatin(r) {
					t.Errorf("second showing %q holds %U, not laid out left to right", sent, r)
				}
			}
			decoded := escapeRE.ReplaceAllStringFunc(sent, func(e string) string {
				n, _ := strconv.ParseInt(e[3:len(e)-1], 16, 32)
				return string(rune(n))
			})
			if decoded = strings.TrimSuffix(decoded, "…"); !strings.HasSuffix(msg[:start], decoded) && !strings.HasSuffix(sent, "…") {
				t.Errorf("second showing %q reads %q, not the piece before it in %q", sent, decoded, msg)
			}
			from, to := utf8.RuneCountInString(msg[:start]), utf8.RuneCountInString(msg[:end])
			if dir == bidi.LeftToRight {
				// The space before "(" stands between the piece and its second showing.
				from++
				for to < len(runes) && !pins.RightToLeft(runes[to]) {
					to++
				}
			} else {
				// In a right-to-left paragraph, the signs at the edges of left-to-right text
				// take the paragraph's direction: the second showing is checked from its first
				// letter to its last letter or digit.
				from += utf8.RuneCountInString(sentHead) - len("as sent, left to right: ")
				for to > from && !strong(runes[to-1]) {
					to--
				}
			}
			for k := from; k < to; k++ {
				if rtl[k] {
					t.Errorf("paragraph %v: %q laid out right to left in %q", dir, string(runes[from:to]), msg)
					break
				}
			}
			pos = end
		}
	}
}

// strong reports whether r is a left-to-right letter or a European digit.
func strong(r rune) bool {
	p, _ := bidi.LookupRune(r)
	return p.Class() == bidi.L || p.Class() == bidi.EN
}

// layout says for each rune of s whether the bidirectional algorithm lays it out in a
// right-to-left run, in a paragraph of direction dir.
func layout(t *testing.T, s string, dir bidi.Direction) []bool {
	t.Helper()
	var p bidi.Paragraph
	if _, err := p.SetString(s, bidi.DefaultDirection(dir)); err != nil {
		t.Fatal(err)
	}
	o, err := p.Order()
	if err != nil {
		t.Fatal(err)
	}
	var rtl []bool
	for i := range o.NumRuns() {
		r := o.Run(i)
		for range r.String() {
			rtl = append(rtl, r.Direction() == bidi.RightToLeft)
		}
	}
	if len(rtl) != utf8.RuneCountInString(s) {
		t.Fatalf("layout of %q covers %d runes", s, len(rtl))
	}
	return rtl
}
