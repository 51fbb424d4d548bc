package toolsearch

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Tokens splits text into lower-case, stemmed terms: at every character that is not a letter or a
// digit (so snake_case, kebab-case, dotted and namespaced names such as github__create_issue fall
// apart), and inside words at a lower-to-upper case change and at the end of an upper-case run
// (camelCase, HTTPRequest). A word split at a case change is also kept whole (GitHub gives git,
// hub and github; CronJob cron, job and cronjob), as users write it either way. Stop words and
// one-letter terms are dropped: they match everything and rank nothing.
func Tokens(text string) []string {
	var out []string
	emit := func(w string) {
		if n := len(w); n > 2 && w[n-1] == 's' && strings.ToUpper(w[:n-1]) == w[:n-1] {
			w = w[:n-1] // PRs, URLs: the abbreviation's plural
		}
		w = strings.ToLower(w)
		if len(w) >= 2 && !stopWords[w] {
			out = append(out, Stem(w))
		}
	}
	run, runEnd, parts := -1, 0, 0
	joinRun := func() {
		if r := text[max(run, 0):runEnd]; parts == 2 && strings.ToUpper(r) != r {
			emit(r)
		}
	}
	eachWord(text, func(start, end, runStart int) {
		if runStart != run {
			joinRun()
			run, parts = runStart, 0
		}
		emit(text[start:end])
		runEnd = end
		parts++
	})
	joinRun()
	return out
}

// words cuts text into its alphanumeric runs and splits each at case changes.
func words(text string) []string {
	var out []string
	eachWord(text, func(start, end, _ int) { out = append(out, text[start:end]) })
	return out
}

// eachWord calls fn with the bounds of each word of text, and the start of the alphanumeric run
// it is part of: text is cut at every character that is not a letter or a digit, and each run at
// a lower-to-upper case change and at the end of an upper-case run (HTTPRequest).
func eachWord(text string, fn func(start, end, runStart int)) {
	start, runStart := -1, -1
	var prev rune
	flush := func(end int) {
		if start >= 0 && end > start {
			fn(start, end, runStart)
		}
		start = -1
	}
	for i, r := range text {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush(i)
			prev, runStart = 0, -1
			continue
		}
		if start < 0 {
			start, prev = i, r
			if runStart < 0 {
				runStart = i
			}
			continue
		}
		switch {
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			// fooBar: a new word at B.
			flush(i)
			start = i
		case unicode.IsLower(r) && unicode.IsUpper(prev) && i-start > 1 && !pluralS(text, i):
			// HTTPRequest: the new word starts at the R before "equest"; PRs and URLs stay whole.
			_, size := utf8.DecodeLastRuneInString(text[:i])
			flush(i - size)
			start = i - size
		}
		prev = r
	}
	flush(len(text))
}

// pluralS reports whether text[i] is an s that ends a word (the plural of an upper-case
// abbreviation: PRs, URLs).
func pluralS(text string, i int) bool {
	if text[i] != 's' {
		return false
	}
	next, _ := utf8.DecodeRuneInString(text[i+1:])
	return i+1 == len(text) || !unicode.IsLetter(next) && !unicode.IsDigit(next)
}

// Stem reduces an English word to a crude stem, so "files", "listing" and "listed" meet "file" and
// "list", and "create", "created" and "creating" meet at "creat". It only strips the commonest
// inflections and a final e: a full stemmer conflates more than it helps on the short texts of
// tool descriptions.
func Stem(w string) string {
	if s, ok := irregular[w]; ok {
		w = s
	}
	n := len(w)
	switch {
	case n > 4 && strings.HasSuffix(w, "ies"):
		w = w[:n-3] + "y"
	case n > 5 && strings.HasSuffix(w, "sses"):
		w = w[:n-2]
	case n > 5 && strings.HasSuffix(w, "ing"):
		w = undouble(w[:n-3])
	case n > 4 && strings.HasSuffix(w, "ed") && !strings.HasSuffix(w, "eed"):
		w = undouble(w[:n-2])
	case n > 4 && (strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "shes") || strings.HasSuffix(w, "xes")):
		w = w[:n-2]
	case n > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		w = w[:n-1]
	}
	if n := len(w); n > 3 && w[n-1] == 'e' {
		w = w[:n-1]
	}
	return w
}

// undouble turns "stopp" (from "stopped") into "stop", leaving short words such as "add" whole.
func undouble(w string) string {
	n := len(w)
	if n >= 4 && w[n-1] == w[n-2] && !strings.ContainsRune("lsz", rune(w[n-1])) {
		return w[:n-1]
	}
	return w
}

// irregular maps inflections the suffix rules get wrong.
var irregular = map[string]string{
	"children": "child", "indices": "index", "indexes": "index", "wrote": "write", "written": "write",
	"ran": "run", "running": "run", "got": "get", "sent": "send", "made": "make", "found": "find",
	"took": "take", "taken": "take", "read": "read", "does": "do", "doing": "do", "has": "have",
	"using": "use", "uses": "use", "used": "use", "entities": "entity", "queries": "query",
	"directories": "directory", "repositories": "repository", "messages": "message", "images": "image",
	"pages": "page", "files": "file", "notes": "note", "issues": "issue", "names": "name",
	"types": "type", "values": "value", "changes": "change", "resources": "resource",
}

// stopWords are the function words of task phrasings ("I want to see all of the files in a
// folder"): they carry no meaning about which tool fits.
var stopWords = map[string]bool{
	"a": true, "an": true, "the": true, "of": true, "to": true, "in": true, "on": true, "at": true,
	"for": true, "from": true, "by": true, "with": true, "and": true, "or": true, "is": true,
	"are": true, "be": true, "it": true, "its": true, "this": true, "that": true, "these": true,
	"those": true, "as": true, "into": true, "onto": true, "my": true, "me": true, "we": true,
	"our": true, "your": true, "you": true, "can": true, "could": true, "should": true,
	"would": true, "will": true, "please": true, "want": true, "need": true, "like": true,
	"some": true, "any": true, "all": true, "which": true, "what": true, "how": true, "do": true,
	"does": true, "if": true, "then": true, "so": true, "there": true, "here": true, "about": true,
	"i": true, "let": true, "let's": true, "up": true, "out": true, "via": true, "when": true,
	"was": true, "were": true, "been": true, "has": true, "have": true, "had": true, "not": true,
	"no": true, "yes": true, "also": true, "just": true, "one": true, "current": true,
	"given": true, "specified": true, "optional": true, "default": true, "true": true,
	"false": true, "called": true, "use": true, "using": true, "everything": true, "anything": true, "something": true, "named": true, "them": true, "they": true, "their": true, "whether": true, "e.g": true,
}
