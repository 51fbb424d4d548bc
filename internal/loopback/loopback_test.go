package loopback

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestFamily is the whole family of spellings in one table, each asked three ways: as a bare
// host (a URL's Hostname), as a Host header or authority (port optional), and as a listen
// address (port required).
func TestFamily(t *testing.T) {
	for _, tt := range []struct {
		host string
		want bool
		why  string
	}{
		{"localhost", true, "reserved name"},
		{"LOCALHOST", true, "ASCII case folds"},
		{"LocalHost", true, "ASCII case folds"},
		{"localhost.", false, "a trailing dot asks DNS"},
		{"sub.localhost", false, "DNS decides"},
		{"localhost.evil.com", false, "a name that starts with localhost"},
		{"localhostx", false, "another name"},
		{"xlocalhost", false, "another name"},
		{"localhoſt", false, "U+017F folds to s in Unicode, not in ASCII"},
		{"LOCALHOſT", false, "U+017F folds to s in Unicode, not in ASCII"},
		{"ｌｏｃａｌｈｏｓｔ", false, "fullwidth: IDNA maps it, resolvers may not"},
		{"xn--localhost-", false, "punycode is a DNS name"},
		// Dialled as localhost or 127.0.0.1 (IDNA maps them) by net/http, but not by every client.
		{"ℓocalhost", false, "IDNA maps U+2113 to l; resolvers without IDNA do not"},
		{"ⓛocalhost", false, "IDNA maps U+24DB to l; resolvers without IDNA do not"},
		{"①②⑦.0.0.1", false, "IDNA maps circled digits; a name elsewhere"},
		{"１２７.０.０.１", false, "IDNA maps fullwidth digits; a name elsewhere"},
		{"127.0.0.1", true, "127/8"},
		{"127.255.255.254", true, "127/8"},
		{"127.0.0.2", true, "127/8"},
		{"127.1", false, "inet_aton shorthand"},
		{"2130706433", false, "inet_aton integer"},
		{"0x7f.1", false, "inet_aton hex"},
		{"0x7f000001", false, "inet_aton hex"},
		{"0177.0.0.1", false, "octal in inet_aton, refused by Go"},
		{"127.0.0.01", false, "leading zero"},
		{"127.0.0.1.evil.com", false, "a name"},
		{"128.0.0.1", false, "not 127/8"},
		{"::1", true, "IPv6 loopback"},
		{"0:0:0:0:0:0:0:1", true, "IPv6 loopback, long form"},
		{"0000:0000:0000:0000:0000:0000:0000:0001", true, "IPv6 loopback, zero-padded"},
		{"::ffff:127.0.0.1", false, "IPv4-mapped: parsers disagree"},
		{"::FFFF:127.0.0.1", false, "IPv4-mapped: parsers disagree"},
		{"::127.0.0.1", false, "IPv4-compatible, deprecated and not ::1"},
		{"::1%lo", false, "zoned"},
		{"fe80::1%lo", false, "link-local, zoned"},
		{"fe80::1", false, "link-local"},
		{"0.0.0.0", false, "unspecified: every interface"},
		{"::", false, "unspecified: every interface"},
		{"", false, "empty: every interface"},
		{" localhost", false, "space"},
		{"localhost\x00", false, "NUL"},
	} {
		if got := Host(tt.host); got != tt.want {
			t.Errorf("Host(%q) = %v, want %v (%s)", tt.host, got, tt.want, tt.why)
		}
		bracket := tt.host
		if strings.Contains(tt.host, ":") {
			bracket = "[" + tt.host + "]"
		}
		if got := HostPort(bracket); got != tt.want {
			t.Errorf("HostPort(%q) = %v, want %v (%s)", bracket, got, tt.want, tt.why)
		}
		if got := HostPort(bracket + ":8080"); got != tt.want {
			t.Errorf("HostPort(%q) = %v, want %v (%s)", bracket+":8080", got, tt.want, tt.why)
		}
		if got := Addr(bracket + ":8080"); got != tt.want {
			t.Errorf("Addr(%q) = %v, want %v (%s)", bracket+":8080", got, tt.want, tt.why)
		}
		if got := Addr(bracket); got && tt.host != "" {
			t.Errorf("Addr(%q) = true; a listen address needs a port", bracket)
		}
	}
}

// TestMaybe is the refusing side: every spelling some resolver or parser could take to loopback
// is a maybe, and Maybe is never narrower than Host.
func TestMaybe(t *testing.T) {
	for _, tt := range []struct {
		host string
		want bool
	}{
		{"localhost", true}, {"LOCALHOST", true}, {"localhost.", true}, {"LocalHost.", true},
		{"sub.localhost", true}, {"a.b.LOCALHOST.", true}, {"localhoſt", true}, {"ｌｏｃａｌｈｏｓｔ", true},
		{"127.0.0.1", true}, {"127.255.255.254", true}, {"127.1", true}, {"2130706433", true},
		{"0x7f.1", true}, {"0x7f000001", true}, {"0177.0.0.1", true}, {"0x7F.0.0.0xb", true},
		{"127.0.0.01", true}, {"127.0.1", true},
		{"::1", true}, {"0:0:0:0:0:0:0:1", true}, {"::ffff:127.0.0.1", true}, {"::FFFF:7f00:1", true},
		{"::1%lo", true},
		// Unicode spellings net/http dials (IDNA, UTS #46) as a loopback name or literal, or as
		// one of the forms above.
		{"ℓocalhost", true}, {"ⓛocalhost", true}, {"ⓁⓄⒸⒶⓁⒽⓄⓈⓉ", true}, {"ℓocalhost。", true},
		{"sub.ⓛocalhost", true}, {"①②⑦.0.0.1", true}, {"１２７.０.０.１", true}, {"①②⑦.①", true},
		{"①②⑦。0。0。1", true}, {"ℓocalhost.evil.com", false}, {"①②⑧.0.0.1", false}, {"ⓔⓥⓘⓛ.com", false},
		{"localhost.evil.com", false}, {"localhostx", false}, {"xlocalhost", false},
		{"evil.com", false}, {"128.0.0.1", false}, {"126.255.255.255", false}, {"2147483648", false}, {"2130706432", true},
		{"1.127.0.0", false}, {"0x80.1", false}, {"0b1111111.1", false}, {"1_27.0.0.1", false},
		{"127.0.0.1.2", false}, {"4294967296", false}, {"256.0.0.1", false},
		{"fe80::1%lo", false}, {"::", false}, {"0.0.0.0", false}, {"", false}, {"::ffff:10.0.0.1", false},
	} {
		if got := Maybe(tt.host); got != tt.want {
			t.Errorf("Maybe(%q) = %v, want %v", tt.host, got, tt.want)
		}
		if Host(tt.host) && !Maybe(tt.host) {
			t.Errorf("Host(%q) but not Maybe", tt.host)
		}
	}
}

// TestHostPortAllocs: the Host check runs on every request to a loopback listener.
func TestHostPortAllocs(t *testing.T) {
	for _, h := range []string{"localhost", "127.0.0.1:8080", "[::1]:443", "evil.example:80"} {
		if n := testing.AllocsPerRun(100, func() { HostPort(h) }); n != 0 {
			t.Errorf("HostPort(%q) allocates %v times", h, n)
		}
	}
}

// TestSyntax covers the host:port spellings that are wrong whatever the host.
func TestSyntax(t *testing.T) {
	for _, tt := range []struct {
		s                string
		hostPort, listen bool
	}{
		{"[::1]", true, false},
		{"[::1]:8080", true, true},
		{"[::1]:", true, true},
		{"localhost:", true, true},
		{"::1", false, false},         // IPv6 without brackets is not a Host
		{"::1:8080", false, false},    // nor this
		{"[::1]x:80", false, false},   // junk after the bracket
		{"[::1]:80:80", false, false}, // two ports
		{"localhost:80:80", false, false},
		{"localhost:http", false, true}, // a service name: net.Listen resolves it, a Host never carries it
		{"localhost:8o", false, true},
		{"[localhost]:80", false, false}, // brackets hold IPv6 literals only
		{"[127.0.0.1]:80", false, false},
		{"[::1", false, false},
		{"::1]", false, false},
		{"localhost]", false, false},
		{":8080", false, false}, // every interface
		{"[::]:8080", false, false},
		{"0.0.0.0:8080", false, false},
	} {
		if got := HostPort(tt.s); got != tt.hostPort {
			t.Errorf("HostPort(%q) = %v, want %v", tt.s, got, tt.hostPort)
		}
		if got := Addr(tt.s); got != tt.listen {
			t.Errorf("Addr(%q) = %v, want %v", tt.s, got, tt.listen)
		}
	}
}

// TestOnePlace keeps the decision here: outside this package, no code outside tests compares a
// host with "localhost" or asks an IP whether it is loopback. Each exception is a different
// question, named here with why.
func TestOnePlace(t *testing.T) {
	root := filepath.Join("..", "..")
	exceptions := map[string]string{
		// Resolves names and checks every address a load generator may dial: it asks "where
		// does this go", not "is this spelling loopback".
		"internal/tools/loadgen/loopback.go": "resolves",
		// Judges the address a connection is made to, after resolution: "where does this go",
		// with loopback.Host deciding the URL's host.
		"internal/egress/egress.go": "dialled address",
		// "localhost" there is RFC 8089's empty host of a file: URI, not a network address.
		"internal/resuri/resuri.go": "file URI",
		// Tokenising search queries: "localhost:3000" looks like a host:port term.
		"internal/toolsearch/query.go":    "search text",
		"internal/toolsearch/synonyms.go": "search text",
	}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(path, root+string(filepath.Separator)))
		if d.IsDir() {
			if name := d.Name(); name != ".." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor" || rel == "internal/loopback" || rel == "internal/testsupport") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || exceptions[rel] != "" {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BasicLit:
				if v, err := strconv.Unquote(n.Value); n.Kind == token.STRING && err == nil && strings.EqualFold(v, "localhost") {
					t.Errorf("%s: compares with %q; use loopback.Host", rel, v)
				}
			case *ast.SelectorExpr:
				if n.Sel.Name == "IsLoopback" {
					t.Errorf("%s: calls IsLoopback; use loopback.Host", rel)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
