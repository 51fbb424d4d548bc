package mrtr

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/bidi"
	"golang.org/x/text/unicode/norm"

	"github.com/mcp-gateway/gateway/internal/pins"
)

// Bounds of the confirmation message, in runes.
const (
	maxToolRunes    = 80
	maxArgNameRunes = 32
	maxValueRunes   = 48
	maxListedArgs   = 8
	maxMessageRunes = 600
	// maxSentRunes bounds the second showing of a piece holding right-to-left text (sentAsIs).
	maxSentRunes = 160
)

// confirmMessage names the tool and summarises its arguments for the user, and the other
// members of the call's params that reach the backend with them (forwarded: the client's own
// _meta members and members the gateway does not know, as one object; nil when there are
// none), which the confirmation binds as it binds the arguments: the person is never asked to
// approve a call part of whose request they were not told of.
// Argument values are untrusted text shown to a human deciding on approval,
// so every piece is one line, bounded, and free of control and format
// characters (bidi overrides could make the text read differently).
func confirmMessage(tool string, args, forwarded json.RawMessage) string {
	var b strings.Builder
	b.WriteString("Allow the tool ")
	name := strconv.Quote(clean(tool, maxToolRunes))
	b.WriteString(name)
	b.WriteString(sentAsIs(name))
	b.WriteString(" to run")
	// The arguments leave room for the forwarded members' heading and count, so that those are
	// never cut off unsaid either.
	reserve := 0
	if len(forwarded) > 0 {
		reserve = len(forwardedHeading) + len(", and 999 more")
	}
	names, values, more, ok := topLevelMembers(args, maxListedArgs)
	switch {
	case !ok:
		b.WriteString(" with arguments that cannot be displayed")
	case len(names) == 0:
		b.WriteString(" with no arguments")
	default:
		b.WriteString(" with: ")
		writeMembers(&b, names, values, more, reserve)
	}
	if len(forwarded) > 0 {
		b.WriteString(forwardedHeading)
		names, values, more, ok := topLevelMembers(forwarded, maxListedArgs)
		if !ok {
			b.WriteString("members that cannot be displayed")
		} else {
			writeMembers(&b, names, values, more, 0)
		}
	}
	b.WriteString("?")
	return clean(b.String(), maxMessageRunes)
}

// forwardedHeading introduces the params members the backend receives besides the arguments.
const forwardedHeading = ", and also sending the backend: "

// writeMembers writes name=value for each member that fits the message with room for reserve
// runes after it, and counts the rest.
func writeMembers(b *strings.Builder, names []string, values []json.RawMessage, more, reserve int) {
	used := utf8.RuneCountInString(b.String())
	for i := range names {
		arg := clean(argName(names[i]), maxArgNameRunes) + "=" + clean(compact(values[i]), maxValueRunes)
		arg += sentAsIs(arg)
		// An argument that would not fit beside the count of those that follow is counted
		// with them: none is cut off unsaid.
		if n := utf8.RuneCountInString(arg) + len(", "); used+n+len(", and 999 more?")+reserve > maxMessageRunes {
			more += len(names) - i
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(arg)
		used += utf8.RuneCountInString(arg) + len(", ")
	}
	if more > 0 {
		b.WriteString(", and " + strconv.Itoa(more) + " more")
	}
}

// sentAsIs is, for a piece of the message holding right-to-left text, the piece again in the
// order sent, as " (as sent, left to right: ...)"; "" for any other piece.
//
// The client shows the message as plain text, laid out by the bidirectional algorithm: a Hebrew
// or Arabic letter or an Arabic digit moves the digits and punctuation beside it, so
// account="ש 0532 0130" reads account="0130 0532 ש", and the move reaches past the value into
// the names and values after it (x="ש", 1="2" reads as x="2="1 ,"ש"). No character of the
// piece's own can be trusted to stop it, and the message holds no invisible character (no
// isolate nor mark: it shows none raw). So the piece is written a second time with every
// character that is not laid out left to right among Latin text (bidi classes R, AL, AN, and
// the marks and others that take their direction from a neighbour) as [U+XXXX], and every "["
// as [U+005B], so that the second showing reads one way only: it begins with a Latin letter,
// holds nothing that turns the direction, and its digits keep their order, whatever the
// direction of the client's paragraph. It also ends the move: what follows it starts after
// Latin text. The second showing is bounded (maxSentRunes), cut at a whole character and marked
// with an ellipsis when longer.
func sentAsIs(piece string) string {
	if !strings.ContainsFunc(piece, pins.RightToLeft) {
		return ""
	}
	const (
		head = " (as sent, left to right: "
		tail = ")"
	)
	var b strings.Builder
	b.WriteString(head)
	n := 0
	for _, r := range piece {
		w := string(r)
		if r == '[' || !leftToRightAmongLatin(r) {
			w = fmt.Sprintf("[U+%04X]", r)
		}
		k := utf8.RuneCountInString(w)
		if n+k > maxSentRunes-1 {
			b.WriteString("…")
			break
		}
		n += k
		b.WriteString(w)
	}
	b.WriteString(tail)
	return b.String()
}

// leftToRightAmongLatin reports whether r, after a Latin letter and before any other
// right-to-left character, is laid out left to right in its place: a left-to-right letter, a
// European digit or the separators and neutral signs beside them (bidi classes L, EN, ES, ET,
// CS, ON, WS).
func leftToRightAmongLatin(r rune) bool {
	p, _ := bidi.LookupRune(r)
	switch p.Class() {
	case bidi.L, bidi.EN, bidi.ES, bidi.ET, bidi.CS, bidi.ON, bidi.WS:
		return true
	}
	return false
}

// topLevelMembers returns up to limit member names and raw values of the
// args object in document order, and how many more there are. ok is false
// when args is neither absent nor an object.
func topLevelMembers(args json.RawMessage, limit int) (names []string, values []json.RawMessage, more int, ok bool) {
	t := bytes.TrimSpace(args)
	if len(t) == 0 || string(t) == "null" {
		return nil, nil, 0, true
	}
	dec := json.NewDecoder(bytes.NewReader(t))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil, 0, false
	}
	for dec.More() {
		tok, err := dec.Token()
		var v json.RawMessage
		if err != nil || dec.Decode(&v) != nil {
			return nil, nil, 0, false
		}
		if len(names) == limit {
			more++
			continue
		}
		key, _ := tok.(string)
		names = append(names, key)
		values = append(values, v)
	}
	return names, values, more, true
}

// argName is an argument's name as the message shows it: bare when it is a word (letters,
// digits, marks and "_-.:/@$"), which nothing in the message's own layout can be mistaken for,
// and as a JSON string otherwise. A bare name holding "=", ", " or a quote would let one
// argument pass for several: {"x=1, y": 2} read as x=1 and y=2.
func argName(name string) string {
	for _, r := range name {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.Is(unicode.M, r) && !strings.ContainsRune("_-.:/@$", r) {
			return string(appendString(nil, name))
		}
	}
	if name == "" {
		return `""`
	}
	return name
}

func compact(v json.RawMessage) string {
	var buf bytes.Buffer
	if json.Compact(&buf, v) != nil {
		return "?"
	}
	return buf.String()
}

// clean makes s a single line without invisible characters and truncates it to max runes,
// marking the cut with an ellipsis. Invisible is what pinning and the approval page judge
// invisible (pins.ClassifyRune: controls, format and default-ignorable characters, variation
// selectors used as carriers, tag characters, blank-rendering letters such as the Hangul filler
// and the braille blank), every space but ASCII's, which the page marks too, and the tabs and
// line breaks: each is shown as U+FFFD, so two values a person cannot tell apart in the message
// are never two different arguments without a mark where they differ. A space is kept as it
// is, never merged with its neighbours: "a  b" and "a b" are two values. Invalid UTF-8 already
// reads as U+FFFD when ranging over a string.
func clean(s string, max int) string {
	out := make([]rune, 0, min(len(s), max))
	prev := rune(-1)
	recomposed := notComposed(s)
	for i, r := range s {
		_, w := utf8.DecodeRuneInString(s[i:])
		_, invisible := pins.ClassifyRune(r, prev, nextRune(s, i+w))
		prev = r
		for len(recomposed) > 0 && recomposed[0][1] <= i {
			recomposed = recomposed[1:]
		}
		if len(recomposed) > 0 && recomposed[0][0] <= i && composes(s[i:]) {
			// Text not in composed form ("cafe" and a combining acute) reads as its composed
			// form ("café"), other characters to a backend that does not normalise, the same
			// to one that does: the characters composition would change are marked.
			r = '\uFFFD'
		}
		if r != ' ' && (invisible || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || unicode.IsSpace(r)) {
			// Spaces other than ASCII's (no-break, thin, ideographic, ...) read as a space but
			// are other characters to the backend: marked, as on the approval page; so are a
			// tab and a line break, which would read as a space on one line.
			r = '\uFFFD'
		}
		if len(out) == max {
			out[max-1] = '…'
			return string(out)
		}
		out = append(out, r)
	}
	return string(out)
}

// notComposed returns the spans of s (byte offsets, in order) that its composed form (NFC)
// writes otherwise; nil when s is in composed form, as nearly all text is.
func notComposed(s string) [][2]int {
	if norm.NFC.IsNormalString(s) {
		return nil
	}
	var spans [][2]int
	var it norm.Iter
	it.InitString(norm.NFC, s)
	for !it.Done() {
		start := it.Pos()
		seg := it.Next()
		if end := it.Pos(); string(seg) != s[start:end] {
			spans = append(spans, [2]int{start, end})
		}
	}
	return spans
}

// composes reports whether the first rune of s is one composition changes within a span
// notComposed found: a combining mark, a rune that joins the one before it (a Hangul vowel
// jamo) or one composition writes otherwise (the Angstrom sign as Å).
func composes(s string) bool {
	p := norm.NFC.PropertiesString(s)
	return p.CCC() != 0 || !p.BoundaryBefore() || p.Decomposition() != nil
}

// nextRune is the rune of s at byte i, -1 at the end.
func nextRune(s string, i int) rune {
	if i >= len(s) {
		return -1
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return r
}
