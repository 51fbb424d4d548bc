package resuri

import (
	"errors"
	"net/url"
	"path"
	"strings"
	"testing"

	unorm "golang.org/x/text/unicode/norm"
)

// normalized are URIs with their normal form.
var normalized = []struct{ in, want string }{
	{"file:///public/a.txt", "file:///public/a.txt"},
	{"file:///public/../secret/key", "file:///secret/key"},
	{"file:///public/%2e%2e/secret/key", "file:///secret/key"},
	{"file:///public/%2E./secret/key", "file:///secret/key"},
	{"file:///public/.%2E/secret/key", "file:///secret/key"},
	{"file:///public/./a", "file:///public/a"},
	{"file:///public/%2e/a", "file:///public/a"},
	{"file:///public//a", "file:///public/a"},
	{"file:////secret/key", "file:///secret/key"},
	{"file:///public/a/", "file:///public/a/"},
	{"file:///public/a/.", "file:///public/a/"},
	{"file:///public/a/..", "file:///public/"},
	{"file:///", "file:///"},
	{"file:/secret/key", "file:///secret/key"},
	{"file://localhost/secret/key", "file:///secret/key"},
	{"file://LOCALHOST/secret/key", "file:///secret/key"},
	{"FILE:///public/a", "file:///public/a"},
	{"File:///public/a", "file:///public/a"},
	{"mem://HR/Salaries", "mem://hr/Salaries"},
	{"mem://%48R/x", "mem://hr/x"},
	{"mem://hr:/x", "mem://hr/x"},
	{"mem://hr:8080/x", "mem://hr:8080/x"},
	{"mem://User@hr/x", "mem://User@hr/x"},
	{"mem://[::1]:80/x", "mem://[::1]:80/x"},
	{"mem:hr/x", "mem:hr/x"},
	{"mem:hr/../x", "mem:x"},
	{"mem:hr//x", "mem:hr/x"},
	{"urn:isbn:0451450523", "urn:isbn:0451450523"},
	{"file:///a%7eb", "file:///a~b"},
	{"file:///a%7Eb%41", "file:///a~bA"},
	{"file:///a%3fb", "file:///a%3Fb"},
	{"file:///a%20b", "file:///a%20b"},
	{"file:///100%25", "file:///100%25"},
	{"file:///caf%C3%A9", "file:///café"},
	{"file:///caf%c3%a9", "file:///café"},
	{"file:///café", "file:///café"},
	{"file:///cafe\u0301", "file:///café"},
	{"file:///cafe%CC%81", "file:///café"},
	{"file:///A\u030a/x?q=a\u0308#o\u0308", "file:///\u00c5/x?q=\u00e4#\u00f6"},
	{"mem:cafe\u0301/x", "mem:café/x"},
	{"file:///x/\u0301", "file:///x/\u0301"},
	{"file:///日本/x", "file:///日本/x"},
	{"file:///x?", "file:///x"},
	{"file:///x#", "file:///x"},
	{"file:///x?a=1&b=%7e", "file:///x?a=1&b=~"},
	{"file:///x?v=1.2", "file:///x?v=1.2"},
	{"file:///x?a=1#sec", "file:///x?a=1#sec"},
	{"http://Example.COM/A/../b", "http://example.com/b"},
	{"s3+x.y-z://b/k", "s3+x.y-z://b/k"},
	// The authority as RFC 3986 §6.2.3 and WHATWG parsers read it: default, empty and
	// zero-led ports, empty user information, IPv6 addresses compressed.
	{"http://h:80/x", "http://h/x"},
	{"http://h:080/x", "http://h/x"},
	{"https://h:443/x", "https://h/x"},
	{"https://h:0443/x", "https://h/x"},
	{"ws://h:80/x", "ws://h/x"},
	{"wss://h:443/x", "wss://h/x"},
	{"ftp://h:21/x", "ftp://h/x"},
	{"http://h:443/x", "http://h:443/x"},
	{"https://h:80/x", "https://h:80/x"},
	{"http://h:8080/x", "http://h:8080/x"},
	{"http://h:0/x", "http://h:0/x"},
	{"http://h:00/x", "http://h:0/x"},
	{"mem://hr:080/x", "mem://hr:80/x"},
	{"mem://hr:80/x", "mem://hr:80/x"},
	{"http://@h/x", "http://h/x"},
	{"http://:@h/x", "http://h/x"},
	{"http://u:@h/x", "http://u@h/x"},
	{"http://u:p@h/x", "http://u:p@h/x"},
	{"mem://@hr/x", "mem://hr/x"},
	{"http://127.0.0.1/x", "http://127.0.0.1/x"},
	{"http://10.0.0.255:80/x", "http://10.0.0.255/x"},
	{"http://a1/x", "http://a1/x"},
	{"http://1a/x", "http://1a/x"},
	{"http://0xg/x", "http://0xg/x"},
	{"mem://0x7f.1/x", "mem://0x7f.1/x"},
	{"http://[0:0:0:0:0:0:0:1]/x", "http://[::1]/x"},
	{"http://[::0001]:80/x", "http://[::1]/x"},
	{"http://[FE80::A]/x", "http://[fe80::a]/x"},
	{"mem://[0::1]:80/x", "mem://[::1]:80/x"},
	{"http://[::ffff:1.2.3.4]/x", "http://[::ffff:102:304]/x"},
	{"http://[::FFFF:102:304]/x", "http://[::ffff:102:304]/x"},
	{"http://[::1.2.3.4]/x", "http://[::102:304]/x"},
}

// refused are URIs some parser reads differently from others, or that are malformed.
var refused = []string{
	"",
	"secret/key",
	"/secret/key",
	":x",
	"1file:///x",
	"fi le:///x",
	"file:///public/..%2fsecret/key",
	"file:///public/..%2Fsecret/key",
	"file:///public%2f..%2fsecret",
	"file:///public/..\\secret\\key",
	"file:///public\\..\\secret",
	"file:///public/..%5csecret",
	"file:///public/..%5Csecret",
	"file:///../secret",
	"file:///public/../../secret",
	"mem:../secret",
	"mem:a/../../secret",
	"file:///public/.../secret",
	"file:///public/..;/secret",
	"file:///public/.;/secret",
	"file:///public/%252e%252e/secret",
	"file:///public/%252F",
	"file:///x%00",
	"file:///x\x00",
	"file:///x\n",
	"file:///x\r\n",
	"file:///x\t",
	"file:///x y",
	"file:///x\x7f",
	"file:///x%7f",
	"file:///x%0a",
	"file:///x%",
	"file:///x%4",
	"file:///x%zz",
	"file:///x%C3",
	"file:///x%FF",
	"file:///x%C0%AE%C0%AE/secret", // overlong UTF-8 for ".."
	"file:///x%E2%80%8B",           // zero-width space, encoded
	"file:///x\u200b",
	"file:///x\u202e",
	"file:///x\u00a0",
	"file:///x\u2028",
	"file:///x\u0085",
	"file:///public\uff0f..\uff0fsecret", // full-width solidus
	"file:///public/\uff0e\uff0e/secret", // full-width full stop
	"file:///public/\u2024\u2024/secret", // one dot leader
	"file:///public/\ufe52\ufe52/secret", // small full stop
	"file:///public\u2215..\u2215secret", // division slash
	"file:///public\uff3c..\uff3csecret", // full-width reverse solidus
	"file:///x\ufffd",
	"file:///x\xff",
	"file:///x\"",
	"file:///x<y>",
	"file:///x{y}",
	"file:///x|y",
	"file:///x^y",
	"file:///x`y",
	"file:secret/key",
	"http:/example.com/x",
	"http:example.com/x",
	"HTTPS:x",
	"mem://a@b@hr/x",
	"mem://h%20r/x",
	"mem://h%2Fr/x",
	"mem://hr./x",
	"mem://hr:8o/x",
	"mem://[::1/x",
	"mem://[::1]x/x",
	"mem://h[r]/x",
	"mem://hr\u00e9/x",
	"http://h:65536/x",
	"http://h:99999999999999999999/x",
	"http://0x7f.0.0.1/x",
	"http://0X7F.0.0.1/x",
	"http://0177.0.0.1/x",
	"http://127.1/x",
	"http://127.0.1/x",
	"http://2130706433/x",
	"http://0x7f000001/x",
	"http://127.0.0.01/x",
	"http://127.0.0.0x1/x",
	"http://1.2.3.256/x",
	"http://1.2.3.4.5/x",
	"http://a.1/x",
	"http://09/x",
	"http://0x/x",
	"https://a.b.0x10/x",
	"file://0x7f.1/x",
	"ws://127.1/x",
	"http://a.0x/x",
	"http:///h/x",
	"https:////h/x",
	"ws:///h/x",
	"wss:///h/x",
	"ftp:///h/x",
	"http://@/x",
	"http://:80/x",
	"HTTP:///h/x",
	"http://[v1.x]/x",
	"http://[1.2.3.4]/x",
	"http://[::1::2]/x",
	"file:///x?p=../secret",
	"file:///x?p=..",
	"file:///x?..",
	"file:///x?a=1&b=%2e",
	"file:///x?a/%2e%2e/b",
	"file:///x#/../secret",
	"file:///x#..",
	"file:///x?a%2Fb",
	"file:///x?a=\u0338b", // "=" and a combining long solidus overlay compose to "≠"
	"file:///x?a=%CC%B8b", // the same, encoded
	"file:///x%2A%CC%80",  // a grave accent after an escape composes with its last digit ("%2À")
	"file:///x%2a\u0300",  // the same, the mark written out and the digit in lower case
	"A:%2A%CC%80",         // the fuzzer's input
	"file:///" + strings.Repeat("a", MaxLen),
}

func TestNormalize(t *testing.T) {
	for _, tt := range normalized {
		got, err := Normalize(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("Normalize(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			continue
		}
		if again, err := Normalize(got); err != nil || again != got {
			t.Errorf("Normalize(%q) = %q, %v; not idempotent", got, again, err)
		}
	}
}

func TestNormalizeRefuses(t *testing.T) {
	for _, in := range refused {
		got, err := Normalize(in)
		if err == nil {
			t.Errorf("Normalize(%q) = %q, want an error", in, got)
			continue
		}
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("Normalize(%q): error %v does not wrap ErrInvalid", in, err)
		}
		if in != "" && len(in) < 200 && strings.Contains(err.Error(), in) {
			t.Errorf("Normalize(%q): error quotes the URI: %v", in, err)
		}
	}
}

func TestNormalizeTemplate(t *testing.T) {
	ok := []struct{ in, want string }{
		{"file:///public/{name}", "file:///public/{name}"},
		{"FILE:///public/{+path}", "file:///public/{+path}"},
		{"repo://{owner}/{repo}/contents{/path*}", "repo://{owner}/{repo}/contents{/path*}"},
		{"mem://HR/{id}{?q,lang}", "mem://hr/{id}{?q,lang}"},
		{"file:///a%7e/{x}", "file:///a~/{x}"},
		{"file:///a//{x}", "file:///a/{x}"},
		{"db://{host}:5432/{table}", "db://{host}:5432/{table}"},
	}
	for _, tt := range ok {
		got, err := NormalizeTemplate(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("NormalizeTemplate(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			continue
		}
		if again, err := NormalizeTemplate(got); err != nil || again != got {
			t.Errorf("NormalizeTemplate(%q) = %q, %v; not idempotent", got, again, err)
		}
	}
	for _, in := range []string{
		"file:///public/../{x}",
		"file:///public/{x}/../secret",
		"file:///public/%2e%2e/{x}",
		"file:///{x",
		"file:///x}",
		"file:///{}",
		"file:///{a b}",
		"file:///{a/b}",
		"file:///{x}\\y",
		"{scheme}://x",
		"file:///\ue000",
		"file:///%EE%80%80",
	} {
		if got, err := NormalizeTemplate(in); err == nil {
			t.Errorf("NormalizeTemplate(%q) = %q, want an error", in, got)
		}
	}
}

// goPath is what a Go backend reads: net/url, then path.Clean of the decoded path.
func goPath(s string) (string, bool) {
	u, err := url.Parse(s)
	if err != nil || u.Opaque != "" || u.Path == "" {
		return "", false
	}
	return path.Clean(u.Path), true
}

// TestNormalizePreservesGoReading: for every URI of the tables that Go's parser reads as a
// path, the normal form reads as the same path in its composed form (NFC: the one spelling of
// a name a file system comparing by canonical equivalence reads as the other), and its path
// needs no cleaning.
func TestNormalizePreservesGoReading(t *testing.T) {
	for _, tt := range normalized {
		checkGoReading(t, tt.in, tt.want)
	}
}

func checkGoReading(t *testing.T, in, norm string) {
	t.Helper()
	before, ok1 := goPath(in)
	after, ok2 := goPath(norm)
	if ok1 && ok2 && unorm.NFC.String(before) != after {
		t.Errorf("Go reads %q as %q but its normal form %q as %q", in, before, norm, after)
	}
	if !unorm.NFC.IsNormalString(norm) {
		t.Errorf("normal form %q is not composed (NFC)", norm)
	}
	if u, err := url.Parse(norm); err == nil && u.Opaque == "" && u.Path != "" {
		clean := path.Clean(u.Path)
		if strings.HasSuffix(u.Path, "/") && clean != "/" {
			clean += "/"
		}
		if clean != u.Path {
			t.Errorf("normal form %q has path %q, which cleans to %q", norm, u.Path, clean)
		}
	}
}

// hasDotSegment reports a path segment, or a stand-alone run in the query or fragment, of a URI
// without its scheme that some reader takes for a dot segment (referenceDotSegment).
func hasDotSegment(s string) bool {
	p, qf, _ := strings.Cut(s, "?")
	if i := strings.IndexByte(p, '#'); i >= 0 {
		p, qf = p[:i], p[i+1:]+"#"+qf
	}
	if rest, ok := strings.CutPrefix(p, "//"); ok { // the authority is no segment
		_, p, _ = strings.Cut(rest, "/")
	}
	for _, seg := range strings.Split(p, "/") {
		if referenceDotSegment(seg) {
			return true
		}
	}
	for _, seg := range strings.FieldsFunc(qf, func(r rune) bool { return strings.ContainsRune("/?#&=;,:@!$'()*+[]", r) }) {
		if referenceDotSegment(seg) {
			return true
		}
	}
	return false
}

func FuzzNormalize(f *testing.F) {
	for _, tt := range normalized {
		f.Add(tt.in)
	}
	for _, in := range refused[:len(refused)-1] {
		f.Add(in)
	}
	for _, s := range dotSuffixes {
		f.Add("file:///public/.." + s + "/secret")
		f.Add("file:///x?p=.." + s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := Normalize(in)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Normalize(%q): %v does not wrap ErrInvalid", in, err)
			}
			return
		}
		again, err := Normalize(got)
		if err != nil || again != got {
			t.Fatalf("Normalize(%q) = %q; again: %q, %v", in, got, again, err)
		}
		if hasDotSegment(got[strings.IndexByte(got, ':')+1:]) {
			t.Fatalf("Normalize(%q) = %q holds a dot segment", in, got)
		}
		if strings.ContainsAny(got, "\\\x00") || strings.Contains(strings.ToUpper(got), "%2F") ||
			strings.Contains(strings.ToUpper(got), "%5C") {
			t.Fatalf("Normalize(%q) = %q holds a '\\', NUL, or encoded '/' or '\\'", in, got)
		}
		checkGoReading(t, in, got)
		checkURIForm(t, got)
	})
}

// checkURIForm checks that the URI form of the normal form n is ASCII and reads back as n.
func checkURIForm(t *testing.T, n string) {
	t.Helper()
	u := URIForm(n)
	if !IsASCII(u) {
		t.Fatalf("URIForm(%q) = %q is not ASCII", n, u)
	}
	if back, err := Normalize(u); err != nil || back != n {
		t.Fatalf("Normalize(URIForm(%q)) = %q, %v", n, back, err)
	}
	if IsASCII(n) != (u == n) {
		t.Fatalf("URIForm(%q) = %q", n, u)
	}
	if !SpellsAs(u, n) || !SpellsAs(n, n) {
		t.Fatalf("SpellsAs(URIForm(%q)) is false", n)
	}
}

func TestSpellsAs(t *testing.T) {
	const n = "mem://x/café/日"
	for _, s := range []string{n, "mem://x/caf%C3%A9/%E6%97%A5", "mem://x/caf%c3%a9/日", "mem://x/cafe\u0301/%E6%97%A5", "mem://x/cafe%CC%81/日"} {
		if !SpellsAs(s, n) {
			t.Errorf("SpellsAs(%q, %q) = false", s, n)
		}
	}
	// Each of these has the normal form n, or nearly, but differs in more than its non-ASCII
	// text: a backend may read it as another resource.
	for _, s := range []string{"MEM://x/café/日", "mem://X/café/日", "mem://x/y/../café/日", "mem://x/./café/日", "mem://x//café/日",
		"mem://x/caf%65%CC%81/日", "mem://x/café/日?", "mem://x/caf%C3/日", "mem://x/caf%C3%A9%/日", "mem://x/cafè/日", "mem://x/café/日/"} {
		if SpellsAs(s, n) {
			t.Errorf("SpellsAs(%q, %q) = true", s, n)
		}
	}
}

func TestURIForm(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"file:///café", "file:///caf%C3%A9"},
		{"mem://x/%C3%A9", "mem://x/%C3%A9"},
		{"mem://x/é?q=ü#ö", "mem://x/%C3%A9?q=%C3%BC#%C3%B6"},
		{"file:///日本/x", "file:///%E6%97%A5%E6%9C%AC/x"},
		{"mem://x/🚀", "mem://x/%F0%9F%9A%80"},
		{"mem://x/a%20b", "mem://x/a%20b"},
		{"file:///x/\u0301", "file:///x/%CC%81"},
	} {
		n, err := Normalize(tt.in)
		if err != nil {
			t.Fatalf("Normalize(%q): %v", tt.in, err)
		}
		if got := URIForm(n); got != tt.want {
			t.Errorf("URIForm(%q) = %q, want %q", n, got, tt.want)
		}
	}
	for _, tt := range normalized {
		checkURIForm(t, tt.want)
	}
}

func FuzzNormalizeTemplate(f *testing.F) {
	f.Add("file:///public/{name}")
	f.Add("repo://{owner}/{repo}/contents{/path*}")
	f.Add("mem://HR/{id}{?q,lang}")
	f.Fuzz(func(t *testing.T, in string) {
		got, err := NormalizeTemplate(in)
		if err != nil {
			return
		}
		again, err := NormalizeTemplate(got)
		if err != nil || again != got {
			t.Fatalf("NormalizeTemplate(%q) = %q; again: %q, %v", in, got, again, err)
		}
	})
}

func TestEnclosing(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want []string
	}{
		{"mem://hr/a/b", []string{"mem://hr/a/", "mem://hr/a", "mem://hr/", "mem://hr"}},
		{"mem://hr/a/b/", []string{"mem://hr/a/b", "mem://hr/a/", "mem://hr/a", "mem://hr/", "mem://hr"}},
		{"file:///secret/key?x=1#f", []string{"file:///secret/key", "file:///secret/", "file:///secret", "file:///", "file://"}},
		{"mem://hr", nil},
		{"mem:hr/x", []string{"mem:hr/", "mem:hr"}},
		{"urn:a:b", nil},
		{"https://ada@h/a?q", []string{"https://ada@h/a", "https://ada@h/", "https://ada@h", "https://h/a?q", "https://h/a", "https://h/", "https://h"}},
		{"mem://u:p@hr", []string{"mem://hr"}},
		{"mem://hr/a@b", []string{"mem://hr/", "mem://hr"}},
	} {
		var got []string
		Enclosing(tt.in, func(s string) bool { got = append(got, s); return false })
		if strings.Join(got, " ") != strings.Join(tt.want, " ") {
			t.Errorf("Enclosing(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestMayExpand: every expression reads as any text, literal runs in order and anchored at
// both ends; whatever an RFC 6570 expansion of the template gives is matched.
func TestMayExpand(t *testing.T) {
	cases := []struct {
		tmpl, uri string
		want      bool
	}{
		{"mem://items/{id}", "mem://items/1", true},
		{"mem://items/{id}", "mem://items/", true},
		{"mem://items/{id}", "mem://items/a/b?x=1#f", true},
		{"mem://items/{id}", "mem://item/1", false},
		{"mem://items/{id}", "mem://other/items/1", false},
		{"mem://items/{id}.txt", "mem://items/a.txt", true},
		{"mem://items/{id}.txt", "mem://items/a.txt.bak", false},
		{"mem://items/{id}/raw", "mem://items/a/b/raw", true},
		{"file:///{+path}", "file:///etc/passwd", true},
		{"file:///docs{/path*}{?q,lang}", "file:///docs/a/b?q=x&lang=en", true},
		{"file:///docs{/path*}{?q,lang}", "file:///doc", false},
		{"{scheme}://x/{y}", "mem://x/1", true},
		{"mem://a{x}a{y}a", "mem://aa", false},
		{"mem://a{x}a{y}a", "mem://aaa", true},
		{"mem://static", "mem://static", true},
		{"mem://static", "mem://static/x", false},
		{"mem://{a}b{c}b", "mem://xbybzb", true},
	}
	for _, c := range cases {
		if got := MayExpand(c.tmpl, c.uri); got != c.want {
			t.Errorf("MayExpand(%q, %q) = %v, want %v", c.tmpl, c.uri, got, c.want)
		}
	}
}
