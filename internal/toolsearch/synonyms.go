package toolsearch

import "slices"

// The word table. A user and a tool's author seldom use the same word: the user says "remove a
// folder", the tool "delete_directory"; the user says "my coworker", the tool "relations". The
// table is general English about asking a computer for something, written from general knowledge
// of the language and of software, not from any catalog or task set. A query word also looks for
// the words its entries give, at a lower weight than its own, so an exact word still ranks first.

// synonymGroups are words used for the same action or thing: each looks for the others at
// synonymWeight. A word may be in several groups.
var synonymGroups = [][]string{
	// Actions.
	{"create", "make", "new", "add", "insert", "generate", "open", "submit", "raise", "register", "draft", "compose", "spawn", "init", "initialize", "establish", "build"},
	{"delete", "remove", "erase", "drop", "destroy", "discard", "clear", "purge", "nuke", "trash", "scrap", "eliminate", "prune", "zap", "uninstall", "wipe"},
	{"get", "fetch", "retrieve", "read", "show", "view", "display", "obtain", "see", "look", "inspect", "detail", "info", "describe", "grab", "print", "check", "peek", "pull"},
	{"list", "enumerate", "browse", "index", "ls", "all", "overview"},
	{"update", "edit", "modify", "change", "set", "patch", "alter", "replace", "rewrite", "tweak", "adjust", "amend", "revise", "fix", "correct", "sync", "synchronize", "refresh", "swap"},
	{"search", "find", "query", "lookup", "locate", "look", "grep", "match", "filter", "seek", "hunt", "discover", "scan"},
	{"run", "execute", "invoke", "start", "launch", "call", "trigger", "fire", "kick", "boot"},
	{"stop", "kill", "terminate", "cancel", "end", "halt", "abort", "interrupt", "quit", "shutdown"},
	{"move", "rename", "relocate", "transfer", "shift", "shove", "archive"},
	{"copy", "duplicate", "clone", "fork", "replicate", "mirror"},
	{"write", "save", "store", "persist", "put", "record", "dump"},
	{"navigate", "go", "visit", "open", "browse", "goto", "load"},
	{"click", "press", "tap", "hit", "tick", "check"},
	{"type", "fill", "enter", "input", "key"},
	{"screenshot", "capture", "snapshot", "picture", "image", "photo", "snap", "pic"},
	{"directory", "folder", "dir"},
	{"file", "document", "doc"},
	{"repository", "repo", "project"},
	{"issue", "ticket", "bug", "problem"},
	{"pull", "merge", "pr", "mr"},
	{"comment", "reply", "note", "remark", "respond", "answer"},
	{"message", "post", "chat", "send", "say", "said", "tell", "told", "notify", "announce", "announcement", "ping", "inform", "broadcast", "dm"},
	{"user", "person", "people", "member", "account", "profile", "someone", "contact", "handle", "guy", "individual"},
	{"location", "place", "address", "geocode", "map", "coordinate", "gps", "position"},
	{"direction", "route", "distance", "travel", "far", "drive", "driving", "car", "walk", "walking", "transit", "commute", "trip"},
	{"duration", "time", "long"},
	{"review", "rating", "approve"},
	{"forget", "delete", "remove", "unlearn"},
	{"remember", "memory", "recall", "knowledge", "memorize", "know", "note", "stored"},
	{"fact", "observation", "note", "detail"},
	{"entity", "node", "item", "object", "entry", "thing"},
	{"relation", "link", "connection", "edge", "relationship", "related"},
	{"log", "console", "output", "print", "stdout", "stderr"},
	{"page", "tab", "website", "site", "web", "url", "webpage"},
	{"size", "length", "dimension", "resize", "big", "small", "shrink", "grow"},
	{"wait", "sleep", "pause", "delay", "until", "await"},
	{"database", "db", "collection", "table"},
	{"pod", "container"},
	{"deployment", "deploy", "rollout", "redeploy", "release", "ship"},
	{"script", "javascript", "js", "evaluate", "eval", "code", "snippet"},
	{"upload", "attach"},
	{"download", "export", "save"},
	{"summary", "summarize", "overview", "stats", "statistic", "usage"},
	{"environment", "env", "variable", "config", "configuration", "setting", "option", "preference"},
	{"commit", "change", "diff"},
	{"branch", "ref"},
	{"tree", "hierarchy", "structure", "recursive", "nested"},
	{"sum", "add", "total", "plus", "calculate", "math"},
	{"echo", "repeat", "return"},
	{"timezone", "time", "clock"},
	{"performance", "trace", "profile", "speed", "slow", "fast", "optimize", "optimizer", "latency", "vitals"},
	{"network", "request", "http", "traffic", "xhr", "response"},
	{"emulate", "simulate", "throttle", "pretend", "fake", "mock", "spoof", "impersonate"},
	{"dialog", "alert", "prompt", "popup", "modal", "confirm"},
	{"hover", "mouse", "mouseover", "tooltip", "point"},
	{"drag", "drop"},
	{"key", "keyboard", "keystroke", "shortcut", "hotkey", "ctrl", "escape", "esc"},
	{"element", "selector", "button", "field", "checkbox", "link", "box", "textbox", "input"},
	{"think", "reason", "plan", "reflect", "step", "ponder"},
	{"process", "command", "terminal", "shell", "program", "repl", "session", "console"},
	{"metadata", "attribute", "property", "info", "detail", "stat"},
	{"label", "tag"},
	{"member", "collaborator", "contributor"},
	{"permission", "access", "allow", "reach", "allowed"},
	{"schema", "structure", "column", "field", "shape"},
	{"namespace", "cluster"},
	{"library", "package", "dependency", "framework", "module", "sdk"},
	{"documentation", "doc", "docs", "reference", "manual", "guide", "tutorial", "example"},
	{"big", "biggest", "large", "largest", "huge", "size", "space", "heavy"},
	{"several", "multiple", "many", "batch", "bulk", "every", "each", "two", "three"},
	{"machine", "computer", "system", "host", "device"},
	{"program", "app", "application", "software", "process", "server"},
	{"whole", "entire", "full", "complete", "dump"},
	{"aggregate", "aggregation", "group", "average", "pipeline"},
	{"close", "shut", "quit", "exit", "dismiss"},
	{"dialog", "modal", "confirm"},
	{"window", "viewport", "screen"},
	{"video", "screencast", "recording", "movie", "film", "record"},
	{"who", "user", "person"},
	{"channel", "room"},
	{"thread", "conversation", "discussion"},
	{"emoji", "reaction", "react", "upvote", "thumb", "like"},
	{"workspace", "team", "organization", "org"},
	{"approve", "review", "accept", "lgtm"},
	{"status", "check", "passing", "failing", "result", "state", "green", "red", "pass", "fail", "broken"},
	{"build", "pipeline", "ci", "workflow", "job"},
	{"rerun", "retry", "restart", "again"},
	{"rollback", "revert", "undo", "restore", "previous"},
	{"replica", "instance", "copy"},
	{"forward", "tunnel", "proxy"},
	{"execute", "exec", "run"},
	{"row", "record", "document", "entry"},
	{"sql", "query", "select"},
	{"count", "number", "total", "tally"},
	{"connect", "connection", "login", "authenticate"},
	{"disconnect", "logout", "detach"},
	{"paragraph", "block", "section", "bullet", "todo", "checklist", "line"},
	{"append", "add", "extend", "end", "bottom", "stick"},
	{"title", "heading", "headline"},
	{"ask", "elicit", "elicitation", "question", "prompt"},
	{"compress", "zip", "gzip", "archive"},
	{"audio", "sound", "voice", "music"},
	{"image", "photo", "picture", "icon", "logo"},
	{"coordinate", "latitude", "longitude", "lat", "lng", "gps"},
	{"nearby", "near", "local", "around", "nearest", "closest"},
	{"place", "business", "shop", "store", "restaurant", "cafe", "bar", "hotel", "station", "museum", "pharmacy", "hospital", "venue", "spot"},
	{"web", "internet", "online", "google", "bing", "news"},
	{"news", "article", "headline", "latest"},
	{"accessibility", "a11y", "aria"},
	{"content", "body", "text", "contents"},
	{"html", "dom", "markup", "source"},
	{"select", "choose", "option", "dropdown", "combobox", "pick"},
	{"back", "previous", "history"},
	{"recent", "latest", "last", "lately", "newest"},
	{"kubernetes", "k8s", "kubectl", "kube"},
	{"mongodb", "mongo", "mongod"},
	{"postgres", "postgresql", "psql", "pg"},
	{"typescript", "ts"},
	{"elevation", "altitude", "height", "high", "tall"},
	{"command", "cli", "npm", "npx", "yarn", "pip", "cargo", "bash", "zsh"},
	{"resource", "configmap", "ingress", "statefulset", "daemonset", "replicaset", "cronjob"},
	{"flaky", "flake", "intermittent", "unstable", "unreliable", "sometimes", "random", "randomly"},
	{"install", "setup", "deploy"},
	{"upgrade", "update", "bump"},
	{"analyze", "analyse", "analysis", "measure", "audit", "assess", "diagnose", "debug", "investigate", "benchmark"},
	{"explain", "documentation", "describe", "definition", "spec"},
	{"enable", "disable", "toggle", "switch"},
	{"heap", "memory", "ram", "leak"},
	{"agent", "useragent", "bot", "crawler"},
	{"modified", "modify", "timestamp", "date", "when", "age"},
	{"port", "localhost"},
	{"email", "mail", "inbox"},
	{"test", "spec", "unit"},
	{"mobile", "device", "iphone", "ipad", "android", "tablet", "phone", "emulate", "viewport"},
	{"cordon", "drain", "unschedulable", "maintenance", "schedule"},
	{"resource", "secret", "service", "event"},
	{"cost", "money", "pay", "paying", "price", "spend", "expensive", "waste", "saving", "oversized", "underused"},
	{"artifact", "output", "produce", "produced"},
	{"scale", "bump", "increase", "decrease", "grow", "shrink", "replica"},
	{"alive", "running", "responsive", "up", "health", "healthy"},
}

// closeSynonyms are words that mean the same action or thing in nearly every sentence a user
// writes (find and search, folder and directory): each looks for the others at closeWeight.
var closeSynonyms = [][]string{
	{"create", "make", "new", "add"},
	{"delete", "remove", "erase"},
	{"get", "fetch", "retrieve", "read"},
	{"list", "enumerate"},
	{"update", "edit", "modify", "change"},
	{"search", "find", "lookup", "locate"},
	{"run", "execute", "exec"},
	{"stop", "terminate", "kill"},
	{"directory", "folder", "dir"},
	{"repository", "repo"},
	{"issue", "ticket"},
	{"user", "people", "person", "member"},
	{"picture", "image", "photo"},
	{"screenshot", "snapshot", "capture"},
	{"message", "post"},
}

// broaderTerms are words that name a kind of a broader thing the tools speak of: a coworker or a
// spouse is a relation between people, a cafe is a place. A word looks for its broader terms at
// broaderWeight (one way: "relation" does not look for "spouse").
var broaderTerms = map[string][]string{
	// Relations between people.
	"married": {"relation"}, "marry": {"relation"}, "spouse": {"relation"}, "wife": {"relation"},
	"husband": {"relation"}, "partner": {"relation"}, "friend": {"relation"}, "colleague": {"relation"},
	"coworker": {"relation"}, "manager": {"relation"}, "manage": {"relation"}, "boss": {"relation"},
	"employee": {"relation"}, "sibling": {"relation"}, "brother": {"relation"},
	"sister": {"relation"}, "parent": {"relation"}, "mother": {"relation"}, "father": {"relation"},
	"son": {"relation"}, "daughter": {"relation"}, "cousin": {"relation"}, "neighbor": {"relation"},
	"mentor": {"relation"}, "teammate": {"relation"}, "roommate": {"relation"}, "dating": {"relation"},
	"related": {"relation"}, "knows": {"relation"}, "between": {"relation"},
	// Facts about someone or something.
	"favorite": {"observation", "fact"}, "likes": {"observation"},
	"prefers": {"observation"}, "lives": {"observation"},
	"age": {"observation"}, "hobby": {"observation"}, "allergic": {"observation"},
	// Places.
	"restaurant": {"place"}, "cafe": {"place"}, "coffee": {"place"}, "bar": {"place"}, "hotel": {"place"},
	"station": {"place"}, "airport": {"place"}, "museum": {"place"}, "pharmacy": {"place"},
	"hospital": {"place"}, "school": {"place"}, "park": {"place"}, "gym": {"place"}, "shop": {"place"},
	"store": {"place"}, "supermarket": {"place"}, "bakery": {"place"}, "pizza": {"place"},
	"gas": {"place"}, "bank": {"place"}, "atm": {"place"}, "library": {"place"},
	"hours": {"place", "detail"}, "phone": {"place", "detail"},
	// The web at large: news, facts of the world.
	"news": {"web"}, "weather": {"web"}, "won": {"web"}, "winner": {"web"}, "score": {"web"},
	"election": {"web"}, "release": {"news"}, "wikipedia": {"web"},
	// Kinds of request a browser or a client makes.
	"get": {"http"}, "post": {"http"}, "put": {"http"}, "patch": {"http"}, "api": {"http", "request"},
	"endpoint": {"http", "request"}, "rest": {"http"},
	// Running programs.
	"server": {"process"}, "daemon": {"process"}, "script": {"process"}, "repl": {"process", "session"},
	"python": {"process"}, "node": {"process"}, "cpu": {"process", "usage"}, "pid": {"process"},
	// Kinds of file.
	"readme": {"file"}, "makefile": {"file"}, "dockerfile": {"file"}, "pdf": {"file"}, "csv": {"file"},
	"json": {"file"}, "yaml": {"file"}, "log": {"file"},
	// Data.
	"record": {"document"}, "table": {"sql"}, "row": {"sql"}, "revenue": {"sum", "aggregate"},
	// Days and times of a place.
	"monday": {"hours", "place"}, "tuesday": {"hours", "place"}, "wednesday": {"hours", "place"},
	"thursday": {"hours", "place"}, "friday": {"hours", "place"}, "saturday": {"hours", "place"},
	"sunday": {"hours", "place"}, "weekend": {"hours", "place"},
	// Parts of a street address.
	"street": {"address"}, "avenue": {"address"}, "ave": {"address"}, "road": {"address"},
	"rd": {"address"}, "blvd": {"address"}, "boulevard": {"address"}, "lane": {"address"},
	"zip": {"address"}, "postcode": {"address"},
	"birthday": {"observation", "fact"},
	// Trouble with a running thing: its logs and its state say why.
	"crash": {"log", "describe"}, "crashing": {"log", "describe"}, "restarting": {"log", "describe"},
	"crashloop": {"log", "describe"}, "error": {"log"},
	// Commands of a Unix shell, for what they do.
	"mkdir": {"create", "directory"}, "ls": {"list", "directory"}, "cat": {"read", "file"},
	"less": {"read", "file"}, "head": {"read", "file"}, "tail": {"read", "log"}, "rm": {"delete", "file"},
	"rmdir": {"delete", "directory"}, "mv": {"move", "file"}, "cp": {"copy", "file"}, "touch": {"create", "file"},
	"ps": {"list", "process"}, "top": {"process"}, "pkill": {"kill", "process"}, "chmod": {"permission"},
	"curl": {"http", "request"}, "wget": {"download", "http"}, "ssh": {"shell", "exec"}, "du": {"size", "disk"},
	"df": {"disk", "size"}, "hog": {"size", "usage"}, "hogging": {"size", "usage"},
	"eating": {"usage", "size"}, "consuming": {"usage", "size"}, "push": {"apply", "deploy"},
	// Changing the state of a thing is updating it; ending a thing that is not a program deletes it.
	"close": {"update", "state"}, "assign": {"update"}, "label": {"update"},
	"tag": {"update"}, "mark": {"update"}, "rename": {"update"}, "kill": {"delete"},
	"send": {"create"}, "google": {"search", "web"}, "bing": {"search", "web"},
	// Kinds of media file.
	"png": {"image", "file"}, "jpg": {"image", "file"}, "jpeg": {"image", "file"}, "gif": {"image", "file"},
	"svg": {"image", "file"}, "webp": {"image", "file"}, "mp3": {"audio", "file"}, "wav": {"audio", "file"},
	"mp4": {"video", "file"}, "mov": {"video", "file"},
}

// synonymWeight is the weight of a synonym against the word the user wrote; broaderWeight that
// of a broader term.
const (
	closeWeight   = 0.55
	synonymWeight = 0.4
	broaderWeight = 0.35
)

// synonym is one word a query word also looks for, and its weight.
type synonym struct {
	term   string
	weight float64
}

// synonyms maps a stemmed word to the stems it also looks for, built once.
var synonyms = buildSynonyms()

func buildSynonyms() map[string][]synonym {
	m := map[string][]synonym{}
	add := func(a, b string, w float64) {
		if a == b {
			return
		}
		if i := slices.IndexFunc(m[a], func(s synonym) bool { return s.term == b }); i >= 0 {
			m[a][i].weight = max(m[a][i].weight, w)
			return
		}
		m[a] = append(m[a], synonym{b, w})
	}
	groups := func(gs [][]string, weight float64) {
		for _, g := range gs {
			stems := make([]string, 0, len(g))
			for _, w := range g {
				stems = append(stems, Stem(w))
			}
			for _, a := range stems {
				for _, b := range stems {
					add(a, b, weight)
				}
			}
		}
	}
	groups(closeSynonyms, closeWeight)
	groups(synonymGroups, synonymWeight)
	for w, bs := range broaderTerms {
		for _, b := range bs {
			add(Stem(w), Stem(b), broaderWeight)
		}
	}
	return m
}
