package toolsearch

import "strings"

// Actions. A tool's name is mostly an action and a thing: create_issue, list_issues, get_issue,
// update_issue. Words for the thing rank the four alike, and a synonym of the action ("show",
// "open") often matches a sibling as well as the right one, so the action the query asks for
// decides among them. Each tool is given the actions its name (or, for a name without one, the
// opening words of its description) says it does; a query the actions its words ask for. A tool
// whose action the query asks for is ranked up, one whose action it does not ask for down; a
// tool or a query that says no action is left alone. The words are general English verbs.

// action is a bit set of kinds of action.
type action uint16

const (
	actRead action = 1 << iota
	actList
	actCreate
	actDelete
	actUpdate
	actSearch
	actRun
	actStop
	actWrite
	actMove
	actCopy
)

// actionWords are the verbs of each kind of action, as Stem leaves them.
var actionWords = buildActionWords(map[action][]string{
	actRead:   {"get", "fetch", "retrieve", "read", "show", "view", "display", "see", "inspect", "describe", "print", "obtain", "grab"},
	actList:   {"list", "enumerate", "ls", "browse"},
	actCreate: {"create", "make", "add", "insert", "generate", "submit", "register", "init", "initialize", "compose", "draft", "spawn"},
	actDelete: {"delete", "remove", "erase", "drop", "destroy", "discard", "purge", "nuke", "uninstall", "forget", "trash", "cleanup", "kill"},
	actUpdate: {"update", "edit", "modify", "change", "set", "patch", "alter", "replace", "rewrite", "tweak", "adjust", "amend", "fix", "sync", "upgrade"},
	actSearch: {"search", "find", "lookup", "locate", "grep", "seek", "hunt", "scan", "query"},
	actRun:    {"run", "execute", "exec", "start", "launch", "trigger", "invoke", "kick"},
	actStop:   {"stop", "kill", "terminate", "cancel", "halt", "abort", "interrupt", "quit", "end"},
	actWrite:  {"write", "save", "store", "persist"},
	actMove:   {"move", "rename", "relocate", "transfer", "shove"},
	actCopy:   {"copy", "duplicate", "clone", "fork"},
})

// actionFamilies are kinds of action close enough that a query asking for one is served by a
// tool doing another, without ranking either up or down: show and look up ask for one thing or
// for all of them; start a new branch makes one, as writing a new page does; stopping a thing
// that is no program removes it.
var actionFamilies = [...]action{
	actRead | actList | actSearch,
	actCreate | actWrite | actRun | actCopy,
	actUpdate | actMove,
	actDelete | actStop,
}

// family is the union of the families of a.
func family(a action) action {
	var f action
	for _, fam := range actionFamilies {
		if a&fam != 0 {
			f |= fam
		}
	}
	return f
}

// queryOnlyNot are verbs that, in a query, are as often nouns ("this query is slow", "my fix-typo
// branch"): they say no action there, though a tool named with them does it.
var queryOnlyNot = map[string]bool{"query": true, "fix": true, "end": true, "set": true}

func buildActionWords(m map[action][]string) map[string]action {
	out := map[string]action{}
	for a, ws := range m {
		for _, w := range ws {
			out[Stem(w)] |= a
		}
	}
	return out
}

// Factors by which a tool's score is scaled: its action asked for, or another action asked for.
const (
	actionMatch    = 1.3
	actionMismatch = 0.75
)

// unaskedDestructive scales a tool that only deletes or stops when the query asks for no
// action: a task that does not say "delete" or "stop" seldom means it ("film what happens on
// the page" starts a recording; it does not stop one).
const unaskedDestructive = 0.85

// actionFactor is how a tool that does act fits a query that asks for q.
func actionFactor(q, act action) float64 {
	switch {
	case q == 0 && act != 0 && act&^(actDelete|actStop) == 0:
		return unaskedDestructive
	case q == 0 || act == 0:
		return 1
	case q&act != 0:
		return actionMatch
	case family(q)&act != 0:
		return 1
	}
	return actionMismatch
}

// actionsOf are the actions of a tool's words.
func actionsOf(terms []string) action {
	var a action
	for _, t := range terms {
		a |= actionWords[t]
	}
	return a
}

// toolAction is what a tool says it does: the actions of the words of its name after its
// backend's (the first backendWords), or, if they say none, of the first three words of its
// description's lead sentence.
func toolAction(nameTerms []string, backendWords int, leadTerms []string) action {
	if a := actionsOf(nameTerms[min(backendWords, len(nameTerms)):]); a != 0 {
		return a
	}
	return actionsOf(leadTerms[:min(3, len(leadTerms))])
}

// redone is the verb that w, a word the word table does not know, does again (reopen: open,
// retitle: title), when the table knows it; "" for any other word. Words the table knows
// (remove, review, report) are not read so.
func redone(w string) string {
	if len(w) < 6 || !strings.HasPrefix(w, "re") || known(w) {
		return ""
	}
	if rest := w[2:]; known(rest) {
		return rest
	}
	return ""
}

// known reports whether the word table or the actions know the stem w.
func known(w string) bool { return len(synonyms[w]) > 0 || actionWords[w] != 0 }
