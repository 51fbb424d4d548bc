package toolsearch

import (
	"path"
	"slices"
	"strings"
)

// parsed is what a query asks for: its terms, each once, in order, and the actions it asks for.
type parsed struct {
	terms []string
	acts  action
	redo  []string // verbs in their plain form that may do another again (reopen)
}

// queryTerms are the terms of query (readQuery).
func queryTerms(query string) []string { return readQuery(query).terms }

// readQuery reads a query. Its phrases are read as the words they mean (phrases.go) and each
// concrete value a user names is replaced by the kind of thing it is: a URL, a domain or
// host:port by "url", a file name by "file", a path on disk by "path", a dotted expression by
// "script", #name by "channel" and #123 by "issue", @name by "user", an e-mail address by
// "email", :name: by "emoji", a pair of decimal numbers by "coordinate", an upper-case HTTP
// method by itself and "http request", "how many" by "count", "which" before a plural by "list";
// an identifier (createdAt), a number and a quoted value are dropped. Tools speak of "a URL" and
// "a file"; the words inside https://example.com or config.yaml name no tool, and "config" would
// rank the configuration tools for a task about reading a file. Words that only make a request
// polite or casual ("hey", "quickly") are dropped too.
//
// The actions asked for are those of the verbs of a request written in their plain form
// ("delete", not "deleted" or "deleting", which describe rather than ask: "when was it
// created"); a question ("what did the page make") asks for none. A plural object asked for in a
// question or to be shown ("show me the open issues", "what collections are in the db") asks for
// a list.
func readQuery(query string) parsed {
	var p parsed
	plural, every := false, false
	fields := readPhrases(unquoted(strings.Fields(query)))
	question := len(fields) > 0 && questionWords[strings.ToLower(strings.Trim(fields[0], ",.;:!?"))]
	for i := 0; i < len(fields); i++ {
		kind := kindOf(fields[i])
		switch next := ""; {
		case i+1 < len(fields) && strings.EqualFold(fields[i], "how") && strings.EqualFold(fields[i+1], "many"):
			kind, i = "count", i+1 // "how many rows": a count, not many rows
		case i+1 < len(fields) && strings.EqualFold(fields[i], "which"):
			if next = strings.Trim(fields[i+1], ",.;:!?"); len(next) > 2 && next[len(next)-1] == 's' && !strings.HasSuffix(next, "ss") {
				kind, plural = "list", true // "which databases are there": a list of them
			}
		case i+1 < len(fields) && isDecimal(fields[i]) && isDecimal(fields[i+1]):
			kind, i = "coordinate", i+1 // 48.85, 2.29
		case i+1 < len(fields) && isState(fields[i]) && isPlural(strings.ToLower(fields[i+1]), Stem(strings.ToLower(strings.Trim(fields[i+1], ",.;:!?")))):
			kind, plural = "state", true // "the open issues": which ones, not a thing to open
		case i > 0 && beVerbs[strings.ToLower(fields[0])] && (strings.EqualFold(fields[i], "open") || strings.EqualFold(fields[i], "closed")):
			kind = "state hours" // "is the museum open", "is the issue closed": asked about, not done
		}
		terms := Tokens(kind)
		every = every || allWords[strings.ToLower(fields[i])]
		if kind == fields[i] && len(terms) == 1 {
			w := strings.ToLower(strings.Trim(kind, ",.;:!?()"))
			if !question && plainVerb(w) && (!queryOnlyNot[terms[0]] || i == 0) {
				p.acts |= actionWords[terms[0]]
				if redone(terms[0]) != "" {
					p.redo = append(p.redo, terms[0])
				}
			}
			plural = plural || isPlural(w, terms[0])
		}
		for _, t := range terms {
			if !fillers[t] && !isDigits(t) && !slices.Contains(p.terms, t) {
				p.terms = append(p.terms, t)
			}
		}
	}
	if plural && (question && p.acts == 0 || p.acts != 0 && p.acts&^actionFamilies[0] == 0) {
		p.acts |= actList
	}
	if question && p.acts == 0 {
		p.acts = actRead // a question asks to be told something
	}
	if every && p.acts&(actCreate|actUpdate|actDelete|actWrite) != 0 && !slices.Contains(p.terms, "many") {
		p.terms = append(p.terms, "many") // "delete all old orders": many at once
	}
	return p
}

// plainVerb reports whether w, a query word, is not an inflected form that describes rather than
// asks (created, running, wrote).
func plainVerb(w string) bool {
	if len(w) > 4 && (strings.HasSuffix(w, "ed") || strings.HasSuffix(w, "ing")) {
		return false
	}
	return !pastForms[w]
}

// questionWords begin a question, whose verbs describe what is asked about rather than ask for
// an action. "How" is not one: "how do I create a branch" asks to create one.
var questionWords = map[string]bool{
	"what": true, "what's": true, "whats": true, "which": true, "who": true, "who's": true,
	"whose": true, "where": true, "where's": true, "when": true, "why": true, "is": true,
	"are": true, "was": true, "were": true, "did": true, "does": true, "has": true, "have": true,
	"any": true,
}

// keyChord is what a key combination stands for: ctrl-c interrupts a program, the others are
// keys to press ("" if v is none).
func keyChord(v string) string {
	mod, key, ok := strings.Cut(strings.ToLower(v), "-")
	if !ok {
		mod, key, ok = strings.Cut(strings.ToLower(v), "+")
	}
	switch {
	case !ok || key == "":
		return ""
	case mod != "ctrl" && mod != "control" && mod != "cmd" && mod != "alt" && mod != "shift" && mod != "option":
		return ""
	case mod != "shift" && (key == "c" || key == "d" || key == "z") && mod != "cmd":
		return "interrupt stop key"
	}
	return "key press"
}

// beVerbs begin a question about what a thing is.
var beVerbs = map[string]bool{"is": true, "are": true, "was": true, "were": true}

// allWords say a task is about every thing of a kind.
var allWords = map[string]bool{"all": true, "every": true, "each": true}

// isState reports an adjective that says which of a kind of thing a task is about (the open
// issues, the closed pull requests), not an action.
func isState(f string) bool {
	switch strings.ToLower(f) {
	case "open", "closed", "active", "running", "failed", "failing", "pending", "merged", "stale":
		return true
	}
	return false
}

// pastForms are the irregular past forms of common verbs.
var pastForms = map[string]bool{
	"wrote": true, "written": true, "made": true, "sent": true, "ran": true, "found": true,
	"took": true, "taken": true, "got": true, "gotten": true, "did": true, "done": true,
}

// isPlural reports whether w, a query word whose stem is stem, is a plural noun: its stem drops
// a final s, and it is no action word.
func isPlural(w, stem string) bool {
	return len(w) > 2 && w[len(w)-1] == 's' && !strings.HasSuffix(w, "ss") && stem != w && actionWords[stem] == 0
}

// kindOf is what a field of a query stands for (queryTerms), or field itself.
func kindOf(field string) string {
	v := strings.Trim(field, "\"'`()[]{}<>,;:!?")
	ext := path.Ext(v)
	switch {
	case strings.Contains(v, "://") || strings.HasPrefix(v, "www."):
		return "url"
	case isHostPort(v):
		return "url port" // localhost:3000
	case strings.Count(v, "@") == 1 && v[0] != '@' && strings.Contains(v, "."):
		return "email"
	case fileExtensions[strings.ToLower(strings.TrimPrefix(ext, "."))] && len(v) > len(ext):
		return mediaKinds[strings.ToLower(strings.TrimPrefix(ext, "."))] + "file"
	case isDomain(v):
		return "url" // example.com, github.com/trending
	case len(v) > 1 && v[0] == '.' && isIdentifier(v[1:]) || isFileWord(v):
		return "file" // .env, Makefile, Dockerfile
	case len(ext) > 1 && len(v) > len(ext) && isIdentifier(v[:len(v)-len(ext)]) && isIdentifier(ext[1:]):
		return "script" // document.title, window.location.href
	case len(v) > 1 && v[0] == '#' && isDigits(v[1:]):
		return "issue" // #42
	case len(v) > 1 && v[0] == '#':
		return "channel"
	case len(v) > 1 && v[0] == '@':
		return "user"
	case len(field) > 2 && field[0] == ':' && strings.HasSuffix(field, ":"):
		return "emoji" // :tada:
	case httpMethods[v]:
		return v + " http request"
	case len(v) > 1 && (v[0] == '~' || strings.HasPrefix(v, "./") || strings.HasPrefix(v, "../")):
		return "path" // ~/notes, ./build
	case strings.Count(v, "/") >= 2 && v[0] != '/':
		return "path" // src/components/buttons
	case len(v) > 1 && v[0] == '/' && !strings.ContainsAny(v, " "):
		if diskRoots[strings.SplitN(v[1:], "/", 2)[0]] {
			return "path" // /var/log, /etc/hosts
		}
		return "url path" // /users
	case keyChord(v) != "":
		return keyChord(v)
	case len(v) > 1 && v[0] == '$':
		return "" // $lookup, $100: a value, not a word of the task
	case isCodeName(v):
		return "" // createdAt, parse_config: a value the task names, not a word of it
	}
	return field
}

// unquoted drops the quoted spans of a query ('connection reset by peer', "Done"): they are
// the value the task works on (text to search for, to type, to wait for), not words about which
// tool does it. A quote opens a span at the start of a field and closes it at the end of one,
// so the apostrophes of what's and Bob's are left alone.
//
// Each field is read at most once per quote character: once a quotation of one character was
// never closed, no later field closes one either (the opening field is held to more than the
// fields after it), so a query of many unmatched quotes costs no more than one of words.
func unquoted(fields []string) []string {
	out := fields[:0:0]
	var open [3]bool // a quotation of quoteChars[k] was opened and never closed
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		q := f[0]
		k := strings.IndexByte(quoteChars, q)
		if k < 0 || open[k] {
			out = append(out, f)
			continue
		}
		end := i
		for end < len(fields) && !closes(fields[end], q, end == i) {
			end++
		}
		if end == len(fields) { // never closed: not a quotation
			open[k] = true
			out = append(out, f)
			continue
		}
		i = end
	}
	return out
}

// quoteChars are the characters that open and close a quotation in a query.
const quoteChars = "\"'`"

// closes reports whether f ends a quotation opened by q (f being the opening field itself when
// first): its last character, bar punctuation, is q.
func closes(f string, q byte, first bool) bool {
	f = strings.TrimRight(f, ".,;:!?)")
	return len(f) > 0 && f[len(f)-1] == q && (!first || len(f) > 1)
}

// isCodeName reports a camelCase or snake_case identifier: a lower-case letter followed by an
// upper-case one, or a letter, an underscore and a letter. A word that begins upper-case (CronJob,
// GitHub) names a kind of thing or a product, not a value, and is kept.
func isCodeName(s string) bool {
	if s != "" && s[0] >= 'A' && s[0] <= 'Z' && !strings.Contains(s, "_") {
		return false
	}
	for i := 1; i < len(s); i++ {
		if isLower(s[i-1]) && s[i] >= 'A' && s[i] <= 'Z' {
			return true
		}
		if s[i-1] == '_' && i >= 2 && isLetter(s[i-2]) && isLetter(s[i]) {
			return true
		}
	}
	return false
}

func isLower(c byte) bool  { return c >= 'a' && c <= 'z' }
func isLetter(c byte) bool { return isLower(c) || c >= 'A' && c <= 'Z' }

// httpMethods are the upper-case method names a task quotes when it means an HTTP request.
var httpMethods = map[string]bool{"GET": true, "POST": true, "PUT": true, "PATCH": true, "DELETE": true, "HEAD": true, "OPTIONS": true}

func isIdentifier(s string) bool {
	for i, r := range s {
		if !(r == '_' || r == '.' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return s != "" && !strings.Contains(s, "..")
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// fileExtensions are extensions common enough that "name.ext" is a file name, not a dotted
// expression such as document.title.
var fileExtensions = map[string]bool{
	"txt": true, "md": true, "json": true, "yaml": true, "yml": true, "toml": true, "ini": true,
	"xml": true, "csv": true, "tsv": true, "log": true, "pdf": true, "doc": true, "docx": true,
	"xls": true, "xlsx": true, "png": true, "jpg": true, "jpeg": true, "gif": true, "svg": true,
	"webp": true, "mp3": true, "mp4": true, "wav": true, "zip": true, "tar": true, "gz": true,
	"tgz": true, "html": true, "css": true, "js": true, "ts": true, "tsx": true, "jsx": true,
	"go": true, "py": true, "rb": true, "rs": true, "java": true, "c": true, "h": true,
	"cpp": true, "sh": true, "sql": true, "env": true, "lock": true, "conf": true, "cfg": true,
}

// mediaKinds are what a file of a media extension holds, said before "file": a tool that reads
// images is the one for logo.png.
var mediaKinds = map[string]string{
	"png": "image ", "jpg": "image ", "jpeg": "image ", "gif": "image ", "svg": "image ", "webp": "image ",
	"mp3": "audio ", "wav": "audio ", "mp4": "video ", "pdf": "pdf ",
}

// diskRoots are the top directories of a Unix file system: /var/log is a path on disk, /users
// is more likely a URL's.
var diskRoots = map[string]bool{
	"bin": true, "boot": true, "dev": true, "etc": true, "home": true, "lib": true, "mnt": true,
	"opt": true, "proc": true, "root": true, "run": true, "srv": true, "sys": true, "tmp": true,
	"usr": true, "var": true, "Users": true, "Volumes": true, "private": true,
}

// topLevelDomains are the domain endings common enough that name.tld is a host name, not a
// dotted expression.
var topLevelDomains = map[string]bool{
	"com": true, "org": true, "net": true, "io": true, "dev": true, "app": true, "ai": true,
	"co": true, "edu": true, "gov": true, "uk": true, "de": true, "fr": true, "eu": true,
	"me": true, "info": true, "cloud": true, "site": true, "tech": true,
}

// isDomain reports a host name with a common top-level domain, with or without a path:
// example.com, docs.github.com/en.
func isDomain(v string) bool {
	host, _, _ := strings.Cut(v, "/")
	dot := strings.LastIndexByte(host, '.')
	return dot > 0 && topLevelDomains[strings.ToLower(host[dot+1:])] && !strings.Contains(host, "..")
}

// isHostPort reports host:port (localhost:3000, 127.0.0.1:8080, db:5432).
func isHostPort(v string) bool {
	host, port, ok := strings.Cut(v, ":")
	if !ok || host == "" || !isDigits(strings.SplitN(port, "/", 2)[0]) {
		return false
	}
	return strings.EqualFold(host, "localhost") || strings.Count(host, ".") == 3 || isIdentifier(host)
}

// isFileWord reports a file named by convention without an extension: Makefile, Dockerfile,
// README, LICENSE.
func isFileWord(v string) bool {
	l := strings.ToLower(v)
	switch l {
	case "readme", "license", "changelog", "makefile", "dockerfile", "gemfile", "procfile", "jenkinsfile", "vagrantfile", "rakefile", "brewfile", "justfile", "containerfile":
		return v != l // README, Makefile: as a file's name is written
	}
	return false
}

// isDecimal reports a decimal number with a fractional part, as coordinates are written (48.85,
// -0.1246).
func isDecimal(f string) bool {
	f = strings.TrimRight(f, ",;")
	f = strings.TrimPrefix(f, "-")
	whole, frac, ok := strings.Cut(f, ".")
	return ok && isDigits(whole) && isDigits(frac)
}

// fillers are words that make a request polite, casual or vague, and say nothing about which
// tool does it ("hey, could you quickly grab..."), and light verbs that lean on their object
// ("take a screenshot", "give me the logs"): dropped from queries only (a tool's text keeps them).
var fillers = stemSet(
	"hey", "hi", "pls", "plz", "thanks", "thank", "quick", "quickly", "real", "really", "actually",
	"maybe", "kinda", "stuff", "thing", "bit", "lot", "way", "too", "very", "still", "now",
	"currently", "anywhere", "somewhere", "else", "okay", "ok", "gonna", "wanna", "don", "doesn",
	"isn", "aren", "didn", "ll", "ve", "re", "im", "something", "mine", "am", "is", "being", "did",
	"yet", "probably", "basically", "just", "take", "give",
)

// stemSet is the set of the stems of words.
func stemSet(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[Stem(w)] = true
	}
	return m
}
