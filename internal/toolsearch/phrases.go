package toolsearch

import (
	"strings"
	"unicode/utf8"
)

// A user asks in phrases: "throw away the release", "kick off a build", "note down that...", "X
// is no longer there". The words of a phrasal verb say little alone ("throw", "away", "kick",
// "off") and often the opposite of what it means ("set up" holds "set", which is an update). A
// query's phrases are therefore read first, as the plain words they mean, before its words are
// looked up. The table is general English about asking a computer for something, written from
// general knowledge of the language, not from any catalog or task set.

// phrases maps a phrase (lower case, words separated by one space) to the plain words it means.
// A phrase is matched on whole words of the query, longest first, its punctuation ignored.
var phrases = map[string]string{
	// Making and starting.
	"set up": "create", "spin up": "create start", "start up": "start", "boot up": "start",
	"fire up": "start launch", "kick off": "start run trigger", "put together": "create",
	"write up": "write create", "draw up": "create",
	"add up": "sum total", "act like": "pretend emulate", "turn into": "generate convert",
	// Removing and stopping.
	"get rid of": "delete remove", "throw away": "delete", "throw out": "delete",
	"clean up": "cleanup delete", "tear down": "delete destroy", "take down": "delete stop",
	"rip out": "remove", "cut out": "remove",
	"shut down": "stop close", "shut off": "stop", "turn off": "disable toggle set",
	"switch off": "disable toggle set", "turn on": "enable toggle set", "switch on": "enable toggle set",
	"no longer": "remove delete", "not anymore": "remove delete", "anymore": "remove delete", "cancel out": "cancel",
	// Reading, showing, finding.
	"look up": "search find", "look for": "search find", "search for": "search",
	"hunt for": "search find", "dig up": "search find", "find out": "get", "figure out": "get",
	"look at": "view show", "look into": "inspect", "look through": "search",
	"pull up": "show get", "bring up": "show", "read out": "read", "print out": "print",
	"what's in": "content list show", "whats in": "content list show", "what is in": "content list show",
	"what's inside": "content list show", "what is inside": "content list show",
	"what's on": "content show", "what is on": "content show",
	"contents of": "content", "is there": "search find", "are there": "search find list",
	"the latest on": "news web", "news on": "news web", "what's new with": "news web",
	"slow connection": "network throttle", "bad connection": "network throttle",
	"slow network": "network throttle", "poor connection": "network throttle", "offline mode": "network throttle", "what's written": "content read", "what is written": "content read",
	"who am i": "self user", "logged in as": "self user login", "signed in as": "self user login", "list out": "list", "show off": "show",
	// Changing.
	"fill in": "fill", "fill out": "fill", "switch over": "switch",
	"tidy up": "edit", "fix up": "edit fix", "bring up to date": "update", "up to date": "update latest",
	"catch up": "update", "roll back": "rollback", "roll out": "rollout", "scale up": "scale",
	"scale down": "scale", "log in": "login", "logged in": "login", "sign in": "login",
	"signed in": "login", "log out": "logout", "sign out": "logout", "hook up": "connect",
	"file a": "create", "file an": "create", "drop a note": "send message", "drop a line": "send message",
	"drop a message": "send message", "reports to": "relation manager", "report to": "relation manager",
	"dark mode": "color scheme emulate media", "light mode": "color scheme emulate media",
	// Commands of common command-line tools.
	"go test": "command run test", "go build": "command run build", "go run": "command run",
	"npm run": "command run", "npm test": "command run test", "npm install": "command run install",
	"pip install": "command run install", "cargo build": "command run build", "make build": "command run build",
	// Keeping in memory: what the assistant itself knows.
	"you know": "memory knowledge", "you remember": "memory remember", "you stored": "memory remember",
	"you saved": "memory remember", "you have stored": "memory remember", "you've stored": "memory remember",
	"you have saved": "memory remember", "you've saved": "memory remember", "your memory": "memory",
	"stop remembering": "forget delete", "note that": "remember observation",
	"record that": "remember observation", "remember that": "remember observation",
	"note down": "note remember add", "write down": "write note",
	"jot down": "note remember add", "keep in mind": "remember", "take note": "note remember", "make a note": "note remember", "bear in mind": "remember", "keep track of": "remember track",
	// Moving about.
	"go back": "back previous", "go forward": "forward", "go to": "navigate", "head to": "navigate",
	"scroll down": "scroll", "scroll up": "scroll", "zoom in": "zoom", "zoom out": "zoom",
	"try again": "retry again", "once more": "again", "one more time": "again",
	"go away": "disappear", "goes away": "disappear", "show up": "appear", "shows up": "appear",
	"pointed at": "context", "pointing at": "context", "pointed to": "context",
	"hang on": "wait", "hold on": "wait", "wait for": "wait",
}

// maxPhraseWords is the most words a phrase of the table has.
const maxPhraseWords = 4

// readPhrases replaces the phrases of fields with the words they mean, longest first. A field's
// leading and trailing punctuation is ignored for matching.
func readPhrases(fields []string) []string {
	out := make([]string, 0, len(fields))
	for i := 0; i < len(fields); {
		n, means := phraseAt(fields[i:])
		if n == 0 {
			out = append(out, fields[i])
			i++
			continue
		}
		for w := range strings.FieldsSeq(means) {
			out = append(out, w)
		}
		i += n
	}
	return out
}

// phraseAt is the longest phrase that fields begin with: how many fields it takes and what it
// means (0, "" when none). A phrase does not run past a field that ends in punctuation. The
// candidate keys are the prefixes of one buffer on the stack, so a query whose words begin
// phrases ("what", "is", "go") costs no allocation per candidate.
func phraseAt(fields []string) (int, string) {
	first := strings.ToLower(strings.Trim(fields[0], phrasePunct))
	if !phraseStarts[first] {
		return 0, "" // most words begin no phrase: no string is built for them
	}
	n := min(maxPhraseWords, len(fields))
	for i := range n - 1 {
		if strings.ContainsAny(fields[i][len(fields[i])-1:], ",.;:!?") {
			n = i + 1
			break
		}
	}
	var buf [64]byte
	var ends [maxPhraseWords]int
	key := append(buf[:0], first...)
	ends[0] = len(key)
	for i := 1; i < n; i++ {
		key = appendLower(append(key, ' '), strings.Trim(fields[i], phrasePunct))
		ends[i] = len(key)
	}
	for ; n > 0; n-- {
		if means, ok := phrases[string(key[:ends[n-1]])]; ok { // no copy: a map lookup's key
			return n, means
		}
	}
	return 0, ""
}

// appendLower appends s in lower case to b, as strings.ToLower writes it.
func appendLower(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return append(b, strings.ToLower(s)...)
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b = append(b, c)
	}
	return b
}

// phrasePunct is the punctuation around a word that a phrase ignores.
const phrasePunct = ",.;:!?()\""

// phraseStarts are the first words of the phrases of the table.
var phraseStarts = func() map[string]bool {
	m := map[string]bool{}
	for p := range phrases {
		first, _, _ := strings.Cut(p, " ")
		m[first] = true
	}
	return m
}()
