package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// writePackage writes a vectors file shaped as the package's: words most frequent first, each
// vector followed by its length and its index. Its vectors vary most along (1, 1, 0, 0), then
// along (0, 0, 1, -1), and little along the rest.
func writePackage(t *testing.T, words []string) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(5, 6))
	vecs := map[string][]float64{}
	for i, w := range words {
		a, b, c := 10*rng.NormFloat64(), 3*rng.NormFloat64(), 0.1*rng.NormFloat64()
		v := []float64{a + 1 + c, a + 1 - c, b + 2, -b + 2}
		vecs[w] = append(v, 0, float64(i))
	}
	b, err := json.Marshal(map[string]any{"dimensions": 4, "words": words, "vectors": vecs})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "vectors.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func sampleWords() []string {
	words := []string{"the", "Paris", "files", "file", "2024", "e-mail", "folder"}
	for i := range 200 {
		words = append(words, fmt.Sprintf("w%c%c", 'a'+i/26, 'a'+i%26))
	}
	return words
}

// TestDeterministic: two runs write the same bytes.
func TestDeterministic(t *testing.T) {
	in := writePackage(t, sampleWords())
	dir := t.TempDir()
	for _, name := range []string{"a", "b"} {
		if err := run(in, filepath.Join(dir, name), 1000, 2, 0); err != nil {
			t.Fatal(err)
		}
	}
	a, _ := os.ReadFile(filepath.Join(dir, "a"))
	b, _ := os.ReadFile(filepath.Join(dir, "b"))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Fatalf("two runs wrote %d and %d bytes that differ", len(a), len(b))
	}
}

// TestTable: only lower-case alphabetic words are kept, one per stem (the first), within the
// first n such words; the principal components come out in order of variance.
func TestTable(t *testing.T) {
	in := writePackage(t, sampleWords())
	out := filepath.Join(t.TempDir(), "table")
	if err := run(in, out, 4, 1, 0); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(out)
	n, dims := binary.LittleEndian.Uint32(b[8:]), binary.LittleEndian.Uint32(b[12:])
	words := "the\nfiles\nfolder\n" // "file" is files' stem; Paris, 2024 and e-mail are not lower-case alphabetic
	if string(b[:8]) != "wordvec1" || n != 3 || dims != 1 || string(b[16:16+len(words)]) != words {
		t.Fatalf("header %q, %d words of %d dims, words %q", b[:8], n, dims, b[16:min(len(b), 16+len(words))])
	}
	if len(b) != 16+len(words)+3 {
		t.Fatalf("%d bytes, want %d", len(b), 16+len(words)+3)
	}
	// Projected on one component, every word is at +127 or -127.
	for _, x := range b[16+len(words):] {
		if int8(x) != 127 && int8(x) != -127 {
			t.Errorf("a one-dimensional unit vector of %d", int8(x))
		}
	}
	// The first component of the whole sample is (1, 1, 0, 0)/√2, the second (0, 0, 1, -1)/√2.
	src, err := readPackage(in)
	if err != nil {
		t.Fatal(err)
	}
	sel, err := selectWords(src, 1000)
	if err != nil {
		t.Fatal(err)
	}
	cov := covariance(sel.vecs)
	comps := principal(cov, 2)
	want := [][]float64{{1, 1, 0, 0}, {0, 0, 1, -1}}
	for k, c := range comps {
		if cos := math.Abs(dot(c, want[k])) / math.Sqrt2; cos < 0.99 {
			t.Errorf("component %d is %v, want ±%v/√2 (cosine %.3f)", k, c, want[k], cos)
		}
	}
}

// TestBadInput: a missing file, a file that is not the package's, and bad flags are errors.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	notVectors := filepath.Join(dir, "x.json")
	os.WriteFile(notVectors, []byte(`{"name":"wink"}`), 0o644)
	good := writePackage(t, sampleWords())
	for name, err := range map[string]error{
		"no file":     run(filepath.Join(dir, "none.json"), filepath.Join(dir, "o"), 10, 2, 0),
		"not vectors": run(notVectors, filepath.Join(dir, "o"), 10, 2, 0),
		"no output":   run(good, "", 10, 2, 0),
		"too many":    run(good, filepath.Join(dir, "o"), 10, 4, 1),
		"no words":    run(good, filepath.Join(dir, "o"), 0, 2, 0),
	} {
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
