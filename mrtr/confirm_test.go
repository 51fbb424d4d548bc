package mrtr

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/mcp-gateway/gateway/internal/pins"
)

func TestEvaluate(t *testing.T) {
	const k = ConfirmKey
	wrap := func(v string) string { return `{"` + k + `":` + v + `}` }
	tests := []struct {
		name      string
		responses string
		want      Outcome
	}{
		{"approved", wrap(`{"action":"accept","content":{"approve":true}}`), OutcomeApproved},
		{"approved with whitespace", "{ \"" + k + "\" : { \"action\" : \"accept\" , \"content\" : { \"approve\" : true } } }", OutcomeApproved},
		{"accept but not approved", wrap(`{"action":"accept","content":{"approve":false}}`), OutcomeDeclined},
		{"decline", wrap(`{"action":"decline"}`), OutcomeDeclined},
		{"cancel", wrap(`{"action":"cancel"}`), OutcomeCancelled},
		{"absent inputResponses", ``, OutcomeMissing},
		{"null inputResponses", `null`, OutcomeMissing},
		{"other keys only", `{"gh_user":{"action":"accept","content":{"name":"x"}}}`, OutcomeMissing},
		{"approve as string", wrap(`{"action":"accept","content":{"approve":"true"}}`), OutcomeMalformed},
		{"approve missing", wrap(`{"action":"accept","content":{}}`), OutcomeMalformed},
		{"content missing", wrap(`{"action":"accept"}`), OutcomeMalformed},
		{"content not object", wrap(`{"action":"accept","content":true}`), OutcomeMalformed},
		{"unknown action", wrap(`{"action":"approve"}`), OutcomeMalformed},
		{"action case", wrap(`{"action":"ACCEPT","content":{"approve":true}}`), OutcomeMalformed},
		{"field case", wrap(`{"Action":"accept","Content":{"approve":true}}`), OutcomeMalformed},
		{"approve case", wrap(`{"action":"accept","content":{"Approve":true}}`), OutcomeMalformed},
		{"no action", wrap(`{"content":{"approve":true}}`), OutcomeMalformed},
		{"null answer", wrap(`null`), OutcomeMalformed},
		{"answer not object", wrap(`"accept"`), OutcomeMalformed},
		{"responses not object", `[1]`, OutcomeMalformed},
		{"invalid JSON", `{`, OutcomeMalformed},
		{"duplicate answer", `{"` + k + `":{"action":"decline"},"` + k + `":{"action":"accept","content":{"approve":true}}}`, OutcomeMalformed},
		{"duplicate approve", wrap(`{"action":"accept","content":{"approve":false,"approve":true}}`), OutcomeMalformed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Evaluate(json.RawMessage(tc.responses), k)
			if got != tc.want {
				t.Fatalf("got %v (%v), want %v", got, err, tc.want)
			}
			if (err != nil) != (tc.want == OutcomeMalformed) || (err != nil && !errors.Is(err, ErrMalformedResponse)) {
				t.Fatalf("error %v does not fit outcome %v", err, got)
			}
		})
	}
}

func TestDeclaresFormElicitation(t *testing.T) {
	tests := []struct {
		caps string
		want bool
	}{
		{`{"elicitation":{}}`, true},
		{`{"elicitation":{"form":{}}}`, true},
		{`{"elicitation":{"form":{},"url":{}}}`, true},
		{`{"elicitation":{"url":{}}}`, false},
		{`{"elicitation":{"form":null}}`, false},
		{`{"elicitation":null}`, false},
		{`{"elicitation":true}`, false},
		{`{"Elicitation":{}}`, false},
		{`{"sampling":{}}`, false},
		{`{}`, false},
		{``, false},
		{`[]`, false},
	}
	for _, tc := range tests {
		t.Run(tc.caps, func(t *testing.T) {
			if got := DeclaresFormElicitation(json.RawMessage(tc.caps)); got != tc.want {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestConfirmationResultShape(t *testing.T) {
	b, err := json.Marshal(ConfirmationResult("github__create_issue", json.RawMessage(`{"title":"bug"}`), nil, "v1.k.x"))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"resultType":"input_required","inputRequests":{"io.mcp-gateway/confirm":{"method":"elicitation/create",` +
		`"params":{"mode":"form","message":"Allow the tool \"github__create_issue\" to run with: title=\"bug\"?",` +
		`"requestedSchema":{"type":"object","properties":{"approve":{"type":"boolean","title":"Approve",` +
		`"description":"Allow this tool call to run."}},"required":["approve"]}}}},"requestState":"v1.k.x"}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
	// An approval shaped by a client from this schema must evaluate as approved.
	if o, _ := Evaluate(json.RawMessage(`{"`+ConfirmKey+`":{"action":"accept","content":{"approve":true}}}`), ConfirmKey); o != OutcomeApproved {
		t.Fatalf("approval evaluates as %v", o)
	}
}

func TestConfirmMessage(t *testing.T) {
	long := strings.Repeat("x", 500)
	tests := []struct {
		name, tool, args string
		contains         []string
		absent           []string
	}{
		{"no args", "t", ``, []string{`"t"`, "no arguments"}, nil},
		{"null args", "t", `null`, []string{"no arguments"}, nil},
		{"order kept", "t", `{"b":1,"a":[true,null]}`, []string{`b=1, a=[true,null]`}, nil},
		{"long value truncated", "t", `{"body":"` + long + `"}`, []string{"body=\"xxx", "…"}, []string{long}},
		{"newline and bidi", "t", "{\"s\":\"a\u202eb\",\"n\":\"line1\\nline2\"}", []string{`s="a` + "\uFFFD" + `b"`, `n="line1\nline2"`}, []string{"\u202e"}},
		{"many args", "t", `{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10}`, []string{"h=8", "and 2 more"}, []string{"i=9"}},
		{"hostile tool name", "evil\n\x1b[31mtool", ``, []string{`"evil` + "\uFFFD\uFFFD" + `[31mtool"`}, []string{"\n", "\x1b"}},
		{"not an object", "t", `[1,2]`, []string{"cannot be displayed"}, []string{"1,2"}},
		{"long key", "t", `{"` + long + `":1}`, []string{"…=1"}, []string{long}},
		// Characters that render as nothing or as blank space, though no control or format
		// character: "report" and "report" with one of them are two files to the backend.
		{"blank-rendering", "t", "{\"f\":\"report\u3164.txt\",\"g\":\"a\u2800b\",\"h\":\"c\uffa0d\"}",
			[]string{`f="report` + "\uFFFD" + `.txt"`, `g="a` + "\uFFFD" + `b"`, `h="c` + "\uFFFD" + `d"`}, []string{"\u3164", "\u2800", "\uffa0"}},
		{"default-ignorable", "t", "{\"f\":\"a\u034fb\u115fc\u180bd\"}", []string{`f="a` + "\uFFFD" + `b` + "\uFFFD" + `c` + "\uFFFD" + `d"`}, nil},
		{"variation selectors", "t", "{\"f\":\"ab\ufe01c\U000e0101\",\"e\":\"\u2764\ufe0f\"}",
			[]string{`f="ab` + "\uFFFD" + `c` + "\uFFFD" + `"`, `e="` + "\u2764\ufe0f" + `"`}, nil},
		{"invisible key", "t", "{\"pa\u3164th\":1}", []string{"pa\uFFFDth=1"}, []string{"\u3164"}},
		// Spaces other than the ASCII ones read as a space but are other characters to the
		// backend ("my file" and "my file" with a no-break space are two files), as the approval
		// page marks them.
		{"non-ASCII spaces", "t", "{\"f\":\"my\u00a0file\",\"g\":\"a\u3000b\u2009c\",\"file\u202fname\":1}",
			[]string{`f="my` + "\uFFFD" + `file"`, `g="a` + "\uFFFD" + `b` + "\uFFFD" + `c"`, `"file` + "\uFFFD" + `name"=1`}, []string{"\u00a0", "\u3000", "\u2009", "\u202f"}},
		// A name that is not a word is shown as a JSON string: one holding the message's own
		// separators would otherwise pass for several arguments ({"x=1, y":2} as x=1 and y=2),
		// or for the end of the list.
		{"name with separators", "t", `{"x=1, y":2}`, []string{`"x=1, y"=2`}, []string{"with: x=1"}},
		{"name with quotes", "t", `{"a\"=\"b":"c"}`, []string{`"a\"=\"b"="c"`}, []string{`with: a"`}},
		{"name like the count", "t", `{"a":1,", and 2 more?":0}`, []string{`a=1, ", and 2 more?"=0?`}, nil},
		{"empty name", "t", `{"":1}`, []string{`with: ""=1`}, nil},
		{"word names bare", "t", `{"snake_case":1,"kebab-case":2,"dotted.name":3,"ünïcode":4}`,
			[]string{`snake_case=1, kebab-case=2, dotted.name=3, ünïcode=4`}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			msg := confirmMessage(tc.tool, json.RawMessage(tc.args), nil)
			for _, s := range tc.contains {
				if !strings.Contains(msg, s) {
					t.Errorf("message %q lacks %q", msg, s)
				}
			}
			for _, s := range tc.absent {
				if strings.Contains(msg, s) {
					t.Errorf("message %q contains %q", msg, s)
				}
			}
			checkClean(t, msg, maxMessageRunes)
		})
	}
}

// TestConfirmMessageCountsWhatItLeavesOut: when the arguments do not fit the message, the ones
// left out are counted in "and N more", never cut off unsaid: every argument is either named
// or counted, whatever the lengths of the tool's name, the names and the values.
func TestConfirmMessageCountsWhatItLeavesOut(t *testing.T) {
	for _, n := range []int{3, 8, 10} {
		var b strings.Builder
		b.WriteString("{")
		for i := range n {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `"%s%02d":"%s"`, strings.Repeat("k", 40), i, strings.Repeat("v", 60))
		}
		b.WriteString("}")
		msg := confirmMessage(strings.Repeat("t", 100), json.RawMessage(b.String()), nil)
		checkClean(t, msg, maxMessageRunes)
		named := strings.Count(msg, "=\"")
		more := 0
		if i := strings.LastIndex(msg, ", and "); i >= 0 {
			_, _ = fmt.Sscanf(msg[i:], ", and %d more?", &more)
		}
		if named+more != n || !strings.HasSuffix(msg, "?") {
			t.Errorf("%d arguments: %d named and %d counted in %q", n, named, more, msg)
		}
	}
}

func TestConfirmMessageBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString("{")
	for i := range 200 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"` + strings.Repeat("k", 40) + string(rune('a'+i%26)) + `":"` + strings.Repeat("\u00e9\n\t", 100) + `"`)
	}
	b.WriteString("}")
	msg := confirmMessage(strings.Repeat("t", 300), json.RawMessage(b.String()), nil)
	checkClean(t, msg, maxMessageRunes)
}

func checkClean(t *testing.T, msg string, max int) {
	t.Helper()
	if n := utf8.RuneCountInString(msg); n > max {
		t.Fatalf("message has %d runes, more than %d", n, max)
	}
	runes := []rune(msg)
	for i, r := range runes {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			t.Fatalf("message %q contains control or format rune %U", msg, r)
		}
		prev, next := rune(-1), rune(-1)
		if i > 0 {
			prev = runes[i-1]
		}
		if i+1 < len(runes) {
			next = runes[i+1]
		}
		if kind, ok := pins.ClassifyRune(r, prev, next); ok {
			t.Fatalf("message %q contains invisible rune %U (%s)", msg, r, kind)
		}
	}
}

func TestClean(t *testing.T) {
	tests := []struct {
		in   string
		max  int
		want string
	}{
		{"abc", 3, "abc"},
		{"abcd", 3, "ab…"},
		// Spaces are kept as they are; tabs and line breaks are marked, never read as spaces.
		{"a  \n\t b", 10, "a  \uFFFD\uFFFD b"},
		{"a\tb", 5, "a\uFFFDb"},
		{"a\r\nb", 5, "a\uFFFD\uFFFDb"},
		{"\xff", 5, "\uFFFD"},
		{"a\u200bb", 5, "a\uFFFDb"},
		{"ééé", 2, "é…"},
	}
	for _, tc := range tests {
		if got := clean(tc.in, tc.max); got != tc.want {
			t.Errorf("clean(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
	}
}

// TestConfirmMessageTellsSpacesApart: two calls whose arguments differ only in their spaces or
// other white space ("a  b" and "a b" are two files to the backend) get two different
// messages, whatever is told apart: a value, a name or the tool's name.
func TestConfirmMessageTellsSpacesApart(t *testing.T) {
	pairs := []struct{ toolA, argsA, toolB, argsB string }{
		{"t", `{"f":"a  b"}`, "t", `{"f":"a b"}`},
		{"t", `{"f":" a"}`, "t", `{"f":"a"}`},
		{"t", `{"f":"a    "}`, "t", `{"f":"a "}`},
		{"t", `{"f":"a\tb"}`, "t", `{"f":"a b"}`},
		{"t", `{"a  b":1}`, "t", `{"a b":1}`},
		{"t", `{"a\nb":1}`, "t", `{"a b":1}`},
		{"a  b", ``, "a b", ``},
		{"a\tb", ``, "a b", ``},
		{"a\nb", ``, "a b", ``},
	}
	for _, p := range pairs {
		a, b := confirmMessage(p.toolA, json.RawMessage(p.argsA), nil), confirmMessage(p.toolB, json.RawMessage(p.argsB), nil)
		if a == b {
			t.Errorf("%q %s and %q %s both read %q", p.toolA, p.argsA, p.toolB, p.argsB, a)
		}
		checkClean(t, a, maxMessageRunes)
	}
}

// TestConfirmMessageNamesForwarded: the members the backend receives beside the arguments are
// listed after them, and however long the arguments, the heading that introduces them and
// their count are never cut off.
func TestConfirmMessageNamesForwarded(t *testing.T) {
	fwd := json.RawMessage(`{"_meta":{"com.example/dryRun":false},"x-mode":"force"}`)
	msg := confirmMessage("t", json.RawMessage(`{"a":1}`), fwd)
	if want := `with: a=1` + forwardedHeading + `_meta={"com.example/dryRun":false}, x-mode="force"?`; !strings.HasSuffix(msg, want) {
		t.Errorf("message %q does not end with %q", msg, want)
	}
	var b strings.Builder
	b.WriteString("{")
	for i := range 20 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"%s%02d":"%s"`, strings.Repeat("k", 40), i, strings.Repeat("v", 60))
	}
	b.WriteString("}")
	msg = confirmMessage(strings.Repeat("t", 100), json.RawMessage(b.String()), fwd)
	checkClean(t, msg, maxMessageRunes)
	if !strings.Contains(msg, forwardedHeading) || !strings.HasSuffix(msg, "?") || strings.Contains(msg, "…?") {
		t.Errorf("the forwarded members are cut off: %q", msg)
	}
}

// TestConfirmMessageMarksNotComposed: text not in composed form (NFC) reads as its composed
// form, which a backend that does not normalise takes for other characters: the characters
// composition would change are marked, in values and names, and composed text is shown as it
// is. Two calls that differ only so get two messages.
func TestConfirmMessageMarksNotComposed(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"cafe\u0301", "cafe\uFFFD"},
		{"caf\u00e9", "caf\u00e9"},
		{"\u212bngstr\u00f6m", "\uFFFDngstr\u00f6m"},
		{"a\u0301\u0323", "a\uFFFD\uFFFD"},
		{"\u1100\u1161", "\u1100\uFFFD"},
		{"\u1ea1\u0301", "\u1ea1\u0301"},
	} {
		if got := clean(tc.in, 20); got != tc.want {
			t.Errorf("clean(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	// Raw characters, not JSON escapes: the message shows a value's escapes as written.
	pairs := [][2]string{
		{"{\"f\":\"caf\u00e9.txt\"}", "{\"f\":\"cafe\u0301.txt\"}"},
		{"{\"caf\u00e9\":1}", "{\"cafe\u0301\":1}"},
		{"{\"u\":\"\u00c5\"}", "{\"u\":\"\u212b\"}"},
	}
	for _, p := range pairs {
		a, b := confirmMessage("t", json.RawMessage(p[0]), nil), confirmMessage("t", json.RawMessage(p[1]), nil)
		// Canonically equivalent text renders alike: the messages must differ beyond it.
		if norm.NFC.String(a) == norm.NFC.String(b) {
			t.Errorf("%s and %s both read %q", p[0], p[1], norm.NFC.String(a))
		}
	}
}
