package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// synset is one WordNet synset: its words (lower case, multi-word lemmas joined by '_') and its
// pointers to other synsets or to words of them.
type synset struct {
	words []string
	ptrs  []pointer
}

// pointer is one relation: its symbol (@ hypernym, ~ hyponym or troponym, + derivationally
// related form, * entailment...), the synset it points to, and for a lexical pointer the source
// and target word numbers (1-based; 0 for a relation between whole synsets).
type pointer struct {
	symbol         string
	target         synsetID
	source, toWord int
}

// synsetID names a synset: its part of speech (n, v, a, r; a satellite s is read as a) and its
// byte offset in that part's data file.
type synsetID struct {
	pos    byte
	offset int
}

// wordnet is the part of the database the generator reads: every synset, and per part of speech
// each lemma's senses, most frequent first, with their tag counts.
type wordnet struct {
	synsets map[synsetID]*synset
	senses  map[byte]map[string][]sense
}

// sense is one sense of a lemma: its synset and how often it was tagged in the semantic
// concordances WordNet's sense order comes from.
type sense struct {
	synset synsetID
	tags   int
}

// files of the database, per part of speech.
var dataFiles = map[byte]string{'n': "data.noun", 'v': "data.verb", 'a': "data.adj", 'r': "data.adv"}

// readWordNet reads the data, index and index.sense files of dir.
func readWordNet(dir string) (*wordnet, error) {
	wn := &wordnet{synsets: map[synsetID]*synset{}, senses: map[byte]map[string][]sense{}}
	for pos, name := range dataFiles {
		if err := eachLine(filepath.Join(dir, name), func(line string) error { return wn.readSynset(pos, line) }); err != nil {
			return nil, err
		}
	}
	tags := map[string]int{} // lemma, part of speech and synset → tag count
	err := eachLine(filepath.Join(dir, "index.sense"), func(line string) error {
		f := strings.Fields(line)
		if len(f) != 4 {
			return fmt.Errorf("index.sense: %q", line)
		}
		lemma, rest, ok := strings.Cut(f[0], "%")
		if !ok || rest == "" {
			return fmt.Errorf("index.sense: no sense key in %q", line)
		}
		pos := map[byte]byte{'1': 'n', '2': 'v', '3': 'a', '4': 'r', '5': 'a'}[rest[0]]
		n, err := strconv.Atoi(f[3])
		tags[lemma+" "+string(pos)+" "+f[1]] = n
		return err
	})
	if err != nil {
		return nil, err
	}
	for _, pos := range []byte{'n', 'v'} {
		wn.senses[pos] = map[string][]sense{}
		name := map[byte]string{'n': "index.noun", 'v': "index.verb"}[pos]
		err := eachLine(filepath.Join(dir, name), func(line string) error {
			f := strings.Fields(line)
			if len(f) < 6 {
				return fmt.Errorf("%s: %q", name, line)
			}
			ptrs, err := strconv.Atoi(f[3])
			if err != nil || len(f) < 6+ptrs {
				return fmt.Errorf("%s: %q", name, line)
			}
			for _, off := range f[6+ptrs:] {
				o, err := strconv.Atoi(off)
				if err != nil {
					return fmt.Errorf("%s: %q", name, line)
				}
				wn.senses[pos][f[0]] = append(wn.senses[pos][f[0]], sense{synsetID{pos, o}, tags[f[0]+" "+string(pos)+" "+off]})
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return wn, nil
}

// readSynset reads one line of a data file.
func (wn *wordnet) readSynset(pos byte, line string) error {
	f := strings.Fields(line)
	bad := fmt.Errorf("%s: %.60q", dataFiles[pos], line)
	if len(f) < 4 {
		return bad
	}
	off, err := strconv.Atoi(f[0])
	if err != nil {
		return bad
	}
	n, err := strconv.ParseInt(f[3], 16, 32)
	if err != nil || len(f) < 5+2*int(n) {
		return bad
	}
	s := &synset{}
	for i := range int(n) {
		w := strings.ToLower(f[4+2*i])
		if j := strings.IndexByte(w, '('); j > 0 { // adjective markers: (a), (p), (ip)
			w = w[:j]
		}
		s.words = append(s.words, w)
	}
	i := 4 + 2*int(n)
	np, err := strconv.Atoi(f[i])
	if err != nil || len(f) < i+1+4*np {
		return bad
	}
	for k := range np {
		p := f[i+1+4*k : i+5+4*k]
		o, err1 := strconv.Atoi(p[1])
		st, err2 := strconv.ParseUint(p[3], 16, 16)
		if err1 != nil || err2 != nil || len(p[2]) != 1 {
			return bad
		}
		tpos := p[2][0]
		if tpos == 's' {
			tpos = 'a'
		}
		s.ptrs = append(s.ptrs, pointer{symbol: p[0], target: synsetID{tpos, o}, source: int(st >> 8), toWord: int(st & 0xff)})
	}
	wn.synsets[synsetID{pos, off}] = s
	return nil
}

// eachLine calls fn with each line of a database file, skipping the licence at its head (lines
// that begin with two spaces).
func eachLine(path string, fn func(line string) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "  ") {
			continue
		}
		if err := fn(line); err != nil {
			return err
		}
	}
	return sc.Err()
}
