package guardrails

import (
	"bufio"
	"encoding/json"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcp-gateway/gateway/internal/testsupport/racetest"
)

// The scanner passes over most of a text without handing it to the detectors (the prefilters of
// text.go and tables.go). These tests hold it to the reference loop (scan_ref_test.go), which
// hands every token and anchor to them: on every text, with any set of detectors on, both must
// make the same matches at the same places.

// rawMatch is one match as the scanner emits it.
type rawMatch struct {
	det        Detector
	start, end int
}

// scanBoth runs the scanner and the reference loop over text with the detectors on.
func scanBoth(tb *tables, hosts *hostSet, text []byte, on detSet) (got, want []rawMatch) {
	for k, run := range []func(*textScan){(*textScan).run, (*textScan).refRun} {
		var out []rawMatch
		s := textScan{t: text, tb: tb, on: on, hosts: hosts, limit: len(text)}
		s.emit = func(det Detector, start, end int) { out = append(out, rawMatch{det, start, end}) }
		run(&s)
		if k == 0 {
			got = out
		} else {
			want = out
		}
	}
	return got, want
}

// diffSets are the detector sets the differential tests scan with: all, each guardrail's (as
// rules turn them on), the arguments' default (secrets and personal data), and each detector
// alone.
func diffSets() []detSet {
	var secrets, pii, inj detSet
	for d := range numDetectors {
		switch d.Guardrail() {
		case Secrets:
			secrets = secrets.with(d)
		case PII:
			pii = pii.with(d)
		case Injection:
			inj = inj.with(d)
		}
	}
	sets := []detSet{allOn(), secrets, pii, inj, secrets | pii, 0}
	for d := range numDetectors {
		if d.Guardrail() != Schema {
			sets = append(sets, setOf(d))
		}
	}
	return sets
}

// checkSame fails t when the scanner and the reference differ on text under any set.
func checkSame(t testing.TB, tb *tables, hosts *hostSet, text []byte, sets []detSet) {
	t.Helper()
	for _, on := range sets {
		got, want := scanBoth(tb, hosts, text, on)
		if !slices.Equal(got, want) {
			t.Fatalf("detectors %b on %q:\n got %v\nwant %v", on, text, got, want)
		}
	}
}

// diffTexts are the texts of the detector corpus, of the corpus of real tool results, and the
// typical call's prose.
func diffTexts(t testing.TB) [][]byte {
	t.Helper()
	var out [][]byte
	f, err := os.Open("testdata/detectors.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.SplitN(sc.Text(), "\t", 3)
		if len(fields) == 3 && !strings.HasPrefix(fields[0], "#") {
			if s, err := strconv.Unquote(fields[2]); err == nil {
				out = append(out, []byte(s))
			}
		}
	}
	files, _ := filepath.Glob(resultsGlob)
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			var v any
			if json.Unmarshal([]byte(line), &v) == nil {
				out = appendStrings(out, v)
			}
		}
	}
	out = append(out, builtTexts()...)
	return append(out, []byte(strings.Repeat(benchProse, 3)))
}

// builtTexts are texts made from what the detectors look for: every phrase's first word before
// each word a phrase can go on with, in three cases, and every prefixed format's prefix before a
// body of each length its format takes and one more.
func builtTexts() [][]byte {
	var out [][]byte
	var nexts []string
	for _, ws := range [][]string{overrideFill, overrideNouns, hideVerbs, hideFill, withoutVerbs, userWords,
		modelWords, {"not", "instructions:", "instruction:", ":"}} {
		nexts = append(nexts, ws...)
	}
	for _, ws := range phraseStarts() {
		for _, w := range ws {
			for _, n := range nexts {
				p := w + " " + n + " the user"
				for _, c := range []string{p, strings.ToUpper(p), strings.ToUpper(p[:1]) + p[1:], "\n\n" + w + ":"} {
					out = append(out, []byte("x "+c+" y"))
				}
			}
		}
	}
	body := "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0U1v2W3x4Y5z6" + strings.Repeat("Ab3", 30)
	for _, fs := range [][]prefixed{lowerFormats, upperFormats} {
		for _, f := range fs {
			for _, n := range []int{f.min - 1, f.min, f.max, f.max + 1} {
				if n >= 0 && n <= len(body) {
					out = append(out, []byte("key "+f.prefix+body[:n]+" end"))
				}
			}
		}
	}
	return out
}

// appendStrings appends every string value in v.
func appendStrings(out [][]byte, v any) [][]byte {
	switch x := v.(type) {
	case string:
		return append(out, []byte(x))
	case []any:
		for _, e := range x {
			out = appendStrings(out, e)
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			out = appendStrings(out, x[k])
		}
	}
	return out
}

func diffHosts() *hostSet { return newHostSet([]string{"example.com", "*.example.com"}) }

// Every text of both corpora, under every set of detectors.
func TestScanMatchesReferenceOnCorpora(t *testing.T) {
	racetest.SkipPureComputation(t)
	tb, hosts, sets := newTables(), diffHosts(), diffSets()
	texts := diffTexts(t)
	if len(texts) < 1000 {
		t.Fatalf("%d texts: the corpora were not read", len(texts))
	}
	for _, text := range texts {
		checkSame(t, tb, hosts, text, sets)
	}
}

// Texts stitched from pieces of the corpora and the bytes the scanner's filters look at, cut
// and joined anywhere: every filter is met on both of its sides.
func TestScanMatchesReferenceOnStitchedTexts(t *testing.T) {
	racetest.SkipPureComputation(t)
	tb, hosts, sets := newTables(), diffHosts(), diffSets()
	texts := diffTexts(t)
	seps := []string{" ", "", "\n\n", "-", "_", "'", ":", "=", "@", "(", "<", "[", ".", "/", "+", "1", "A", "a", "\u200b", "é", "\t", "\"", "://"}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		var b []byte
		for range 1 + rng.IntN(4) {
			x := texts[rng.IntN(len(texts))]
			s := rng.IntN(len(x) + 1)
			e := s + rng.IntN(min(len(x)-s, 64)+1)
			b = append(b, x[s:e]...)
			b = append(b, seps[rng.IntN(len(seps))]...)
		}
		checkSame(t, tb, hosts, b, sets)
	}
}

// Every code point, in the places of a text the filters treat apart: between spaces, inside a
// word, after a phrase's first word, inside a card number, before a key, doubled before a bidi
// override. The code points go 256 to a text, each in its own copy of the place; the
// unassigned planes (3 to 13) in the first two places only.
func TestScanMatchesReferenceOnEveryCodePoint(t *testing.T) {
	racetest.SkipPureComputation(t)
	tb, hosts := newTables(), diffHosts()
	sets := []detSet{allOn()}
	places := [][2]string{{"", " "}, {"ab", "cd "}, {"ignore", "all previous instructions. "},
		{"4111", "1111 1111 1111 "}, {"x ", "AKIAIOSFODNN7EXAMPLE "}, {"", "%[1]s\u202e "}}
	for lo := rune(0); lo <= utf8.MaxRune; lo += 256 {
		ps := places
		if lo >= 0x30000 && lo < 0xE0000 {
			ps = places[:2]
		}
		for _, pl := range ps {
			var b []byte
			for r := lo; r < lo+256; r++ {
				c := string(r)
				post := pl[1]
				if strings.HasPrefix(post, "%[1]s") {
					post = c + post[len("%[1]s"):]
				}
				b = append(append(append(b, pl[0]...), c...), post...)
			}
			checkSame(t, tb, hosts, b, sets)
		}
	}
}

// FuzzScanMatchesReference: any text, all detectors on and each guardrail's alone.
func FuzzScanMatchesReference(f *testing.F) {
	for _, text := range diffTexts(f)[:200] {
		f.Add(text)
	}
	tb, hosts, sets := newTables(), diffHosts(), diffSets()[:5]
	f.Fuzz(func(t *testing.T, text []byte) {
		checkSame(t, tb, hosts, text, sets)
	})
}

// A text may end anywhere: in the middle of a key, a number, a phone number's first group, a
// URL. Every detector looks past a token only within the text: each text of the detector corpus
// cut at every length is scanned with every detector on.
func TestScanEveryPrefix(t *testing.T) {
	tb, hosts := newTables(), diffHosts()
	texts := diffTexts(t)
	for _, text := range texts[:150] {
		for n := range len(text) + 1 {
			checkSame(t, tb, hosts, text[:n], []detSet{allOn()})
		}
	}
	for _, text := range []string{"pages 1-", "call 1-(", "+1", "AKIA", "-----BEGIN ", "x@", "https://", "DE89 3704"} {
		checkSame(t, tb, hosts, []byte(text), []detSet{allOn()})
	}
}

// Formats glued inside a token: a key, a card, an IBAN, a phone number after each separator (and
// after no separator, which is no place to start; a percent-encoded byte is one separator, an
// escape written out in text ends the token before it),
// behind a run of word bytes of every length from 0 to 40 (so the separator falls at every
// offset of textScan.inner's eight-byte reads), with and without more of the token after it.
func TestScanMatchesReferenceInsideTokens(t *testing.T) {
	racetest.SkipPureComputation(t)
	tb, hosts, sets := newTables(), diffHosts(), diffSets()
	formats := []string{"AKIA" + "IOSFODNN7EXAMPLE", "ghp_" + "16C7e42F292c6912E7710c838347Ae178B4a", "4111111111111111",
		"4242 4242 4242 4242", "4242\u00a04242\u202f4242\u00a04242", "DE89370400440532013000", "maria%40contoso.com", "555-123-4567", "1-800-555-0199", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig"}
	heads := "abcdefghijklmnopqrstuvwxyzABCDEFGH0123456789"
	for _, sep := range []string{"/", ".", "-", "_", "+", "~", "%", "//", "/-", "", "%2F", "%3d", "%2", "%%41", `\n`, `\u0022`, `\x`} {
		for n := 0; n <= 40; n++ {
			for _, f := range formats {
				for _, tail := range []string{"", ".txt", "/x", " and more", "_9"} {
					checkSame(t, tb, hosts, []byte(heads[:n]+sep+f+tail), sets)
				}
			}
		}
	}
}
