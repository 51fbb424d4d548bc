package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeDict writes a small database in WordNet's formats: evict (a verb with a derived noun and
// hypernyms two levels up), run (a frequent verb sense, a rare one and a rare noun sense).
func writeDict(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	licence := "  1 Permission to use, copy, modify and distribute.  \n  2 WordNet 3.1 Copyright 2011 by Princeton University.  \n"
	files := map[string]string{
		"data.verb": licence +
			"00000010 35 v 02 evict 0 force_out 0 002 @ 00000020 v 0000 + 00000100 n 0101 01 + 08 00 | expel from a property\n" +
			"00000020 35 v 02 expel 0 eject 0 001 @ 00000030 v 0000 01 + 08 00 | force to leave\n" +
			"00000030 35 v 01 remove 0 000 01 + 08 00 | take away\n" +
			"00000040 38 v 02 run 0 sprint 0 000 01 + 01 00 | move fast on foot\n" +
			"00000050 41 v 02 run 0 operate 0 000 01 + 08 00 | direct or control\n",
		"data.noun": licence +
			"00000100 04 n 01 eviction 0 001 + 00000010 v 0101 | the act of evicting\n" +
			"00000200 04 n 02 run 0 tally 0 000 | a score in baseball\n",
		"data.adj":    licence,
		"data.adv":    licence,
		"index.verb":  licence + "evict v 1 2 @ + 1 0 00000010  \nrun v 2 0 2 2 00000040 00000050  \n",
		"index.noun":  licence + "eviction n 1 1 + 1 0 00000100  \nrun n 1 0 1 0 00000200  \n",
		"index.sense": "evict%2:41:00:: 00000010 1 0\nrun%2:38:00:: 00000040 1 100\nrun%2:41:00:: 00000050 2 1\nrun%1:04:00:: 00000200 1 0\neviction%1:04:00:: 00000100 1 0\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestDerive: the table holds a verb's synonyms and derived forms, its broader verbs two levels
// up, the senses users mean only, the licence at its head, and is the same on every run.
func TestDerive(t *testing.T) {
	dir := writeDict(t)
	table := func() []byte {
		wn, err := readWordNet(dir)
		if err != nil {
			t.Fatal(err)
		}
		licence, err := readLicence(dir)
		if err != nil {
			t.Fatal(err)
		}
		return encode(licence, derive(wn, defaults))
	}
	got := table()
	for _, want := range []string{
		"# Permission to use, copy, modify and distribute.\n# WordNet 3.1 Copyright 2011 by Princeton University.\n",
		"\nevict\teviction\teject expel remov\n", // force_out is two words
		"\neviction\tevict\n",
		"\nrun\tsprint\n", // not operate (a rare sense) nor tally (an untagged noun sense)
	} {
		if !bytes.Contains(got, []byte(want)) {
			t.Errorf("the table lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(string(got), "operat") || strings.Contains(string(got), "tally") {
		t.Errorf("the table holds a rare sense:\n%s", got)
	}
	if again := table(); !bytes.Equal(got, again) {
		t.Errorf("two runs differ:\n%s\n%s", got, again)
	}
}

// TestReadErrors: a malformed line is an error that names its file, not a table missing words.
func TestReadErrors(t *testing.T) {
	dir := writeDict(t)
	if err := os.WriteFile(filepath.Join(dir, "data.verb"), []byte("00000010 35 v zz evict\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readWordNet(dir); err == nil || !strings.Contains(err.Error(), "data.verb") {
		t.Errorf("a malformed synset: %v, want an error naming data.verb", err)
	}
}
