package guardrails

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The corpus of real tools/call results (testdata/results, recorded by
// internal/tools/resultcorpus from the official reference servers run over this repository's
// files) and the judgement of every match the detectors make on it (testdata/results/findings.txt).
const (
	resultsGlob  = "testdata/results/*.jsonl"
	findingsFile = "testdata/results/findings.txt"
)

// maxResultFalsePositives holds each detector to the number of the corpus's results it flags
// with a match judged a false positive, as measured (docs/guardrails.md reports them): a change
// that makes a detector flag one more result falsely fails. Detectors not listed flag none (none
// is listed since checksums, names, code reading a password, prose about the model and a lone
// JOSE header stopped being findings).
var maxResultFalsePositives = map[Detector]int{}

// verdict is the judgement of one match: true (the text is what the detector names: a key,
// a test key included, an address, a card number...) or a false positive.
type verdict struct {
	real bool
	why  string
}

// corpusResult is one recorded tools/call.
type corpusResult struct {
	Server string          `json:"server"`
	Tool   string          `json:"tool"`
	Result json.RawMessage `json:"result"`
}

// TestResultFalsePositiveRate scans every recorded result as the gateway scans a tools/call
// result and sorts each detector's matches into real findings and false positives by
// findings.txt. It fails on a match nobody has judged (a detector that finds something new on
// the corpus needs a verdict), on a verdict no match needs, and on a detector whose false
// positives exceed its measured figure.
func TestResultFalsePositiveRate(t *testing.T) {
	results := loadResults(t)
	verdicts := loadVerdicts(t)
	r := testEngine(t, everything("redact")).Rule(KindTool, "x", "x")
	var falseRes, realRes, falseMatches [numDetectors]int
	used := map[string]bool{}
	var bytesTotal int
	for _, res := range results {
		bytesTotal += len(res.Result)
		rep := r.ScanResult(res.Result)
		if rep.Err != nil {
			t.Fatalf("%s %s: %v", res.Server, res.Tool, rep.Err)
		}
		var isFalse, isReal [numDetectors]bool
		for _, e := range rep.edits {
			if e.det == DetLink {
				continue // a policy: every host off the allowlist is a finding
			}
			key := verdictKey(e.det, res.Result[e.start:e.end])
			v, ok := verdicts[key]
			if !ok {
				t.Errorf("%s %s: unjudged %s match %s: add a verdict to %s", res.Server, res.Tool, e.det, strconv.Quote(string(res.Result[e.start:e.end])), findingsFile)
				continue
			}
			used[key] = true
			isReal[e.det] = isReal[e.det] || v.real
			isFalse[e.det] = isFalse[e.det] || !v.real
			if !v.real {
				falseMatches[e.det]++
			}
		}
		for d := range numDetectors {
			if isFalse[d] {
				falseRes[d]++
			} else if isReal[d] {
				realRes[d]++
			}
		}
		if rep.Counts[DetLink] > 0 {
			realRes[DetLink]++
		}
	}
	for k := range verdicts {
		if !used[k] {
			t.Errorf("%s: the verdict on %s matches nothing in the corpus", findingsFile, k)
		}
	}
	reportResultRates(t, len(results), bytesTotal, falseRes, realRes, falseMatches)
	checkResultDocs(t, len(results), falseRes)
}

// checkResultDocs checks that docs/guardrails.md reports the corpus's size and, for every
// detector with false positives, the number of results it flags falsely, and that every detector
// it holds to a figure is reported.
func checkResultDocs(t *testing.T, n int, falseRes [numDetectors]int) {
	raw, err := os.ReadFile("../../docs/guardrails.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	if want := fmt.Sprintf("holds %d real `tools/call` results", n); !strings.Contains(doc, want) {
		t.Errorf("docs/guardrails.md does not say it %s", want)
	}
	for d := range numDetectors {
		if falseRes[d] == 0 && maxResultFalsePositives[d] == 0 {
			continue
		}
		want := fmt.Sprintf("| `%s` | %d (%.2f%%) |", d, falseRes[d], pct(falseRes[d], n))
		if !strings.Contains(doc, want) {
			t.Errorf("docs/guardrails.md has no row %q", want)
		}
	}
}

// reportResultRates logs the table docs/guardrails.md reports and holds each detector to its
// measured false positives.
func reportResultRates(t *testing.T, n, size int, falseRes, realRes, falseMatches [numDetectors]int) {
	t.Logf("%d results, %d bytes; per detector, the results it flags falsely (and its false matches), and those it flags with real findings only", n, size)
	t.Logf("%-20s %22s %14s", "detector", "false positives", "real")
	for d := range numDetectors {
		if d.Guardrail() == Schema {
			continue
		}
		t.Logf("%-20s %4d  %6.2f%% (%3d) %4d  %6.2f%%", d, falseRes[d], pct(falseRes[d], n), falseMatches[d], realRes[d], pct(realRes[d], n))
		if bound := maxResultFalsePositives[d]; falseRes[d] > bound {
			t.Errorf("%s flags %d of the corpus's results falsely; at most %d", d, falseRes[d], bound)
		}
	}
}

// pct is k of n in percent.
func pct(k, n int) float64 { return 100 * float64(k) / float64(n) }

// verdictKey names a match: its detector and its text as it stands in the JSON of the result.
func verdictKey(d Detector, raw []byte) string { return d.String() + " " + strconv.Quote(string(raw)) }

// loadResults reads every recorded result, in file order.
func loadResults(t testing.TB) []corpusResult {
	t.Helper()
	files, err := filepath.Glob(resultsGlob)
	if err != nil || len(files) == 0 {
		t.Fatalf("no result corpus: %v", err)
	}
	sort.Strings(files)
	var out []corpusResult
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for n, line := range bytes.Split(bytes.TrimSpace(raw), []byte("\n")) {
			var res corpusResult
			if err := json.Unmarshal(line, &res); err != nil || len(res.Result) == 0 {
				t.Fatalf("%s:%d: %v", f, n+1, err)
			}
			out = append(out, res)
		}
	}
	return out
}

// loadVerdicts reads findings.txt: per line a detector, real or fp, the match's text as a
// quoted Go string (as it stands in the result's JSON) and why.
func loadVerdicts(t *testing.T) map[string]verdict {
	t.Helper()
	f, err := os.Open(findingsFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]verdict{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, v, err := parseVerdict(line)
		if err != nil {
			t.Fatalf("%s:%d: %v", findingsFile, n, err)
		}
		if _, dup := out[key]; dup {
			t.Fatalf("%s:%d: %s judged twice", findingsFile, n, key)
		}
		out[key] = v
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// parseVerdict parses one line of findings.txt.
func parseVerdict(line string) (string, verdict, error) {
	fields := strings.Split(line, "\t")
	if len(fields) != 4 {
		return "", verdict{}, fmt.Errorf("want detector, real or fp, quoted text and why, tab-separated: %q", line)
	}
	det, ok := detectorByName(fields[0])
	text, err := strconv.Unquote(fields[2])
	if !ok || err != nil || (fields[1] != "real" && fields[1] != "fp") || fields[3] == "" {
		return "", verdict{}, fmt.Errorf("bad verdict %q (%v)", line, err)
	}
	return verdictKey(det, []byte(text)), verdict{real: fields[1] == "real", why: fields[3]}, nil
}
