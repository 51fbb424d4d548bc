package callerkey

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestSpellingIsStable: the key names state kept across processes and releases (pending
// approvals, used answers, consent callbacks, breaker and slot records); a replica of the
// previous release and this one must spell the same caller the same way, so this table is the
// format, not an example of it.
func TestSpellingIsStable(t *testing.T) {
	for _, tt := range []struct{ iss, sub, want string }{
		{"https://issuer.example", "alice", "https://issuer.example#alice"},
		{"https://issuer.example/realms/a", "a#b", "https://issuer.example/realms/a#a#b"},
		{"https://issuer.example", "#", "https://issuer.example##"},
		{"https://issuer.example", "ünïcode sub", "https://issuer.example#ünïcode sub"},
	} {
		if got := Of(tt.iss, tt.sub); got != tt.want {
			t.Errorf("Of(%q, %q) = %q, want %q", tt.iss, tt.sub, got, tt.want)
		}
	}
}

// TestFamily: every key Of writes for a verified caller (an issuer without "#", a subject that
// is not empty and may hold "#") splits back into the same caller, and keys Of never writes for
// one are refused.
func TestFamily(t *testing.T) {
	for _, tt := range []struct{ iss, sub string }{
		{"https://issuer.example", "alice"},
		{"https://issuer.example", "a#b"},
		{"https://issuer.example", "#"},
		{"https://issuer.example", "##"},
		{"https://issuer.example", "#alice"},
		{"https://issuer.example", "alice#"},
		{"urn:issuer", "x"},
	} {
		iss, sub, ok := Split(Of(tt.iss, tt.sub))
		if !ok || iss != tt.iss || sub != tt.sub {
			t.Errorf("Split(Of(%q, %q)) = %q, %q, %v", tt.iss, tt.sub, iss, sub, ok)
		}
	}
	for _, key := range []string{"", "#", "https://issuer.example", "https://issuer.example#", "#alice"} {
		if iss, sub, ok := Split(key); ok {
			t.Errorf("Split(%q) = %q, %q, true; want refused", key, iss, sub)
		}
	}
	// Why an issuer must not hold "#": two callers would share one key, and with it every
	// per-caller bound and record. The configuration refuses such an issuer (authz
	// TestIssuerURLHasNoQueryOrFragment), and a token without a subject (authz
	// TestAuthenticateAttacks, "no sub" and "empty sub").
	if Of("https://issuer.example#x", "y") != Of("https://issuer.example", "x#y") {
		t.Error("the ambiguity the configuration rule prevents is gone; update the package comment")
	}
}

// nulJoins are the files that join a caller's (or another) issuer and subject with NUL by hand,
// each for a reason TestOnePlace cannot see.
var nulJoins = map[string]bool{
	// vault.Caller.Owner names records kept in the store across releases; an issuer holds no
	// NUL, so issuer NUL subject is unambiguous (TestOwnerSpelling).
	"internal/vault/vault.go": true,
	// The issuer there is an authorization server's, in the key of a client registration: no
	// caller in it.
	"internal/useroauth/registration.go": true,
	// A private list's cache and flight keys: the caller key (or it NUL a token digest of fixed
	// length), then parts without NUL, in memory only.
	"upstreams/catalog/cache.go": true,
}

// TestOnePlace: outside this package no code spells or cuts a caller's key by hand (a "#"
// joined to or cut from something named issuer, subject or caller), so the spelling cannot
// drift from Of and Split; nor joins a caller with NUL, the other separator such keys were
// built with, outside the files nulJoins names (a subject may hold NUL, so such a join is
// unambiguous only where what follows the subject is known).
func TestOnePlace(t *testing.T) {
	root := filepath.Join("..", "..")
	named := regexp.MustCompile(`(?i)issuer|subject|caller|\biss\b|\bsub\b`)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(path, root+string(filepath.Separator)))
		if d.IsDir() {
			if name := d.Name(); name != ".." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor" || rel == "internal/callerkey") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		isHash := func(e ast.Expr) bool {
			l, ok := e.(*ast.BasicLit)
			return ok && l.Kind == token.STRING && l.Value == `"#"`
		}
		// A literal holding NUL joined to an issuer, subject or caller is a second spelling of
		// a caller (or of a key built on one), which may read two callers as one when a
		// subject holds NUL; the ones that must stay, and why, are listed in nulJoins.
		isNUL := func(e ast.Expr) bool {
			l, ok := e.(*ast.BasicLit)
			if !ok || l.Kind != token.STRING {
				return false
			}
			v, err := strconv.Unquote(l.Value)
			return err == nil && strings.Contains(v, "\x00")
		}
		text := func(n ast.Node) string {
			return string(src[fset.Position(n.Pos()).Offset:fset.Position(n.End()).Offset])
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BinaryExpr:
				if n.Op == token.ADD && (isHash(n.X) || isHash(n.Y)) && named.MatchString(text(n)) {
					t.Errorf("%s:%d: %s: use callerkey.Of", rel, fset.Position(n.Pos()).Line, text(n))
				}
				if n.Op == token.ADD && (isNUL(n.X) || isNUL(n.Y)) && named.MatchString(text(n)) && !nulJoins[rel] {
					t.Errorf("%s:%d: %s: a caller joined with NUL; start from callerkey.Of, or add the file to nulJoins saying why", rel, fset.Position(n.Pos()).Line, text(n))
				}
			case *ast.CallExpr:
				sel, ok := n.Fun.(*ast.SelectorExpr)
				if !ok || !slices.Contains([]string{"Cut", "Split", "SplitN", "Index", "IndexByte", "LastIndex"}, sel.Sel.Name) {
					return true
				}
				for _, a := range n.Args {
					if isHash(a) && named.MatchString(text(n)) {
						t.Errorf("%s:%d: %s: use callerkey.Split", rel, fset.Position(n.Pos()).Line, text(n))
					}
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

// TestClientKeys: a client address group has one key, two groups two keys, and no client key is
// ever a caller's (Split refuses every one, and none holds the "#" every key of Of holds), so
// an unauthenticated client's bounds never meet an authenticated caller's, whatever its issuer
// and subject.
func TestClientKeys(t *testing.T) {
	groups := []netip.Prefix{
		netip.MustParsePrefix("192.0.2.1/32"),
		netip.MustParsePrefix("192.0.2.2/32"),
		netip.MustParsePrefix("2001:db8::/64"),
		netip.MustParsePrefix("2001:db8:0:1::/64"),
		netip.MustParsePrefix("::ffff:192.0.2.1/128"),
		{},
	}
	seen := map[string]netip.Prefix{}
	for _, g := range groups {
		k := Client(g)
		if k == "" || strings.Contains(k, "#") {
			t.Errorf("Client(%v) = %q: empty or could be a caller's key", g, k)
		}
		if iss, sub, ok := Split(k); ok {
			t.Errorf("Split(Client(%v)) = %q, %q, true: a client taken for a caller", g, iss, sub)
		}
		if other, dup := seen[k]; dup {
			t.Errorf("Client(%v) = Client(%v) = %q", g, other, k)
		}
		seen[k] = g
		if Client(g) != k {
			t.Errorf("Client(%v) is not stable", g)
		}
	}
	if got, want := Client(netip.MustParsePrefix("192.0.2.1/32")), "client 192.0.2.1/32"; got != want {
		t.Errorf("Client spells %q, want %q (rate-limit buckets in a shared store are named by it)", got, want)
	}
	if got, want := Client(netip.Prefix{}), "client unknown"; got != want {
		t.Errorf("Client of an unknown address = %q, want %q", got, want)
	}
}
