package resuri

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	unorm "golang.org/x/text/unicode/norm"
)

// The dot-segment family: every spelling of a segment that some reader takes for "." or "..".
// A segment is one of them when, read the way some backend reads it, it comes out as dots only:
//
//   - percent-decoded ("%2E", "%2e": RFC 3986 §2.3, WHATWG URL, net/url, urllib);
//   - cut at a path parameter (';', Java servlet containers), also after decoding ("%3B",
//     a backend that decodes before it drops parameters), at an NTFS stream name (':',
//     "x::$DATA" is x), or at a query or fragment decoded and parsed again ("%3F", "%23");
//   - with trailing dots and spaces dropped (Windows; '+' is a space to form decoding), and
//     leading spaces to a reader that trims.
//
// "." and ".." themselves are removed (RFC 3986 §5.2.4); every other member is refused, in the
// path, the query and fragment and the literal text of a template alike.

// dotNames are the dot-only names: one to three dots, each spelled '.', "%2E" or "%2e".
func dotNames() []string {
	names := []string{""}
	var out []string
	for n := 0; n < 3; n++ {
		var next []string
		for _, p := range names {
			for _, d := range []string{".", "%2E", "%2e"} {
				next = append(next, p+d)
			}
		}
		out = append(out, next...)
		names = next
	}
	return out
}

// dotSuffixes are what may follow the dots of a member: each makes the segment a dot segment to
// some reader.
var dotSuffixes = []string{
	";", ";x", ";jsessionid=1", ";%2E",
	"%3B", "%3b", "%3Bx", "%3bjsessionid=1", "%2E%3B",
	":", "::$DATA", "::$INDEX_ALLOCATION", "%3A", "%3a$DATA",
	"%3F", "%3Fx", "%3f", "%23", "%23x",
	"%20", "%20%20", "+", "++", ".%20", "%20.", "%20;x", "%20%3Bx", "+%3A",
}

// dotPrefixes are blanks a trimming reader drops before the dots.
var dotPrefixes = []string{"%20", "+", "%20%20"}

// dotPlaces put a segment where a URI holds one: the middle and the end of a path, a rootless
// path, the query and the fragment.
var dotPlaces = []struct {
	name string
	uri  func(seg string) string
}{
	{"path", func(s string) string { return "file:///public/" + s + "/secret/key" }},
	{"last", func(s string) string { return "file:///public/" + s }},
	{"rootless", func(s string) string { return "mem:hr/" + s + "/x" }},
	{"query", func(s string) string { return "file:///x?p=" + s + "&q=1" }},
	{"fragment", func(s string) string { return "file:///x#" + s }},
}

// removed is the normal form of a URI whose only dot segment is "." (n=1) or ".." (n=2) at
// place, or "" where a plain dot segment is refused (the query and fragment).
func removed(place string, n int) string {
	return map[string][2]string{
		"path":     {"file:///public/secret/key", "file:///secret/key"},
		"last":     {"file:///public/", "file:///"},
		"rootless": {"mem:hr/x", "mem:x"},
	}[place][n-1]
}

func TestDotSegmentFamily(t *testing.T) {
	var members int
	for _, name := range dotNames() {
		n := strings.Count(name, ".") + strings.Count(strings.ToUpper(name), "%2E")
		var segs []string
		for _, s := range dotSuffixes {
			segs = append(segs, name+s)
		}
		for _, p := range dotPrefixes {
			segs = append(segs, p+name)
		}
		for _, seg := range append(segs, name) {
			for _, pl := range dotPlaces {
				members++
				in := pl.uri(seg)
				want := ""
				if seg == name && n <= 2 {
					want = removed(pl.name, n)
				}
				got, err := Normalize(in)
				switch {
				case want == "" && err == nil:
					t.Errorf("%s: Normalize(%q) = %q, want it refused", pl.name, in, got)
				case want != "" && (err != nil || got != want):
					t.Errorf("%s: Normalize(%q) = %q, %v; want %q", pl.name, in, got, err, want)
				case want != "":
					if again, err := Normalize(got); err != nil || again != got {
						t.Errorf("Normalize(%q) = %q, %v; not idempotent", got, again, err)
					}
				default:
					checkRefusal(t, in, err)
				}
				if pl.name == "path" {
					// A template's literal text: a dot segment there is refused, not removed.
					tmpl := "file:///public/" + seg + "/{x}"
					if got, err := NormalizeTemplate(tmpl); err == nil {
						t.Errorf("NormalizeTemplate(%q) = %q, want it refused", tmpl, got)
					}
				}
			}
		}
	}
	if members < 1000 {
		t.Fatalf("only %d members tried", members)
	}
}

// TestDotSegmentOtherSpellings: the members refused before their dots are read, for a
// character or an escape that parsers disagree on. Each is refused in a path segment.
func TestDotSegmentOtherSpellings(t *testing.T) {
	for _, seg := range []string{
		"%252E%252E", "%252e.", ".%252e", "%25%32%45%25%32%45", // double encoding: decoded twice, ".."
		"..%253B", "..%253Bx", "..%253A", "..%2520", // an encoded ';', ':' or ' ' encoded again
		"..%255C", "..%5C", "..%5c", "..\\", "%5C..", // '\', a separator to Windows and some servers
		"%C0%AE%C0%AE", "%E0%80%AE.", ".%F0%80%80%AE", "%C0%2E.", "\xc0\xae\xc0\xae", // overlong UTF-8 "."
		"%u002e%u002e", "%U002E.", // IIS %u escapes
		"\uff0e\uff0e", "%EF%BC%8E%EF%BC%8E", ".\uff0e", // full-width full stop, NFKC "."
		"\u2024\u2024", "\u2025", "\u2026", "\ufe19", "\ufe30", "\ufe52.", "%E2%80%A5", // dot leaders, small stops
		"\u3002\u3002", "%E3%80%82.", "\uff61.", // ideographic and half-width full stops (IDNA separators)
		"..\t", "..%09", "\t..", "..\x00", "..%00", "..\n", "..%0A", "..%0D", "..%0B", "..%0C", // controls
		".. ", " ..", "..\u00a0", "..%C2%A0", "..\u3000", "..%E3%80%80", "..\u2002", // spaces not escaped as %20
		".\u200b.", ".%E2%80%8B.", "..\u200d", "..\ufeff", // format characters
		"..\u037e", "..%CD%BE", // Greek question mark: canonically ';'
	} {
		in := "file:///public/" + seg + "/secret/key"
		got, err := Normalize(in)
		if err == nil {
			t.Errorf("Normalize(%q) = %q, want it refused", in, got)
			continue
		}
		checkRefusal(t, in, err)
	}
}

// TestDotSegmentNearMisses: segments that hold dots but that no reader takes for a dot segment
// keep their name.
func TestDotSegmentNearMisses(t *testing.T) {
	for _, tt := range []struct{ seg, want string }{
		{".hidden", ".hidden"},
		{"..x", "..x"},
		{"%2E%2Ex", "..x"},
		{"x..", "x.."},
		{"...txt", "...txt"},
		{"..%41", "..A"},
		{".%20x", ".%20x"},
		{"..+x", "..+x"},
		{"a;..", "a;.."},
		{"a%3B..", "a%3B.."},
		{"x:..", "x:.."},
		{";x", ";x"},
		{"%20", "%20"},
		{"v1.2;x", "v1.2;x"},
	} {
		in := "file:///public/" + tt.seg + "/a"
		want := "file:///public/" + tt.want + "/a"
		got, err := Normalize(in)
		if err != nil || got != want {
			t.Errorf("Normalize(%q) = %q, %v; want %q", in, got, err, want)
			continue
		}
		if again, err := Normalize(got); err != nil || again != got {
			t.Errorf("Normalize(%q) = %q, %v; not idempotent", got, again, err)
		}
		if hasDotSegment(got[len("file:"):]) {
			t.Errorf("reference reader takes %q for a dot segment", got)
		}
	}
}

// TestUnicodeDotsRefused: every character that compatibility normalisation (NFKC, which some
// file systems, IDNA and lenient decoders apply) turns into dots, alone or with delimiters, is
// refused in a segment, raw or percent-encoded, and after dots.
func TestUnicodeDotsRefused(t *testing.T) {
	var found int
	for r := rune(utf8.RuneSelf); r <= unicode.MaxRune; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		k := unorm.NFKC.String(string(r))
		if !strings.Contains(k, ".") || strings.Trim(k, ". ;:/\\") != "" {
			continue
		}
		found++
		enc := url.PathEscape(string(r))
		for _, seg := range []string{string(r), enc, "." + string(r), ".." + enc} {
			if got, err := Normalize("file:///public/" + seg + "/x"); err == nil {
				t.Errorf("%U (NFKC %q) in %q: normalised to %q, want it refused", r, k, seg, got)
			}
		}
	}
	if found == 0 {
		t.Fatal("no character folds to a dot")
	}
}

func checkRefusal(t *testing.T, in string, err error) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Reason == "" {
		t.Errorf("Normalize(%q): %v is not a refusal", in, err)
	}
	if strings.Contains(err.Error(), in) {
		t.Errorf("Normalize(%q): the error quotes the URI: %v", in, err)
	}
}

// referenceDotSegment reports whether a segment (of a path, or a run of the query or fragment)
// is a dot segment to some reader. It is written apart from the code under test: it decodes
// with net/url, cuts at the delimiters readers cut at, and trims what Windows and trimming
// readers drop.
func referenceDotSegment(seg string) bool {
	if d, err := url.PathUnescape(seg); err == nil {
		seg = d
	}
	if i := strings.IndexAny(seg, ";:?#"); i >= 0 {
		seg = seg[:i]
	}
	seg = strings.ReplaceAll(seg, "+", " ")
	return strings.Contains(seg, ".") && strings.Trim(seg, ". ") == ""
}
