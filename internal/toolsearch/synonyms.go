package toolsearch

import "slices"

// synonymGroups are words a user and a tool's author use for the same action or thing. A query
// term also looks for the other words of its groups, at synonymWeight of its own weight, so
// "remove a folder" finds delete_directory while an exact word still ranks first. The groups are
// general English about software, not tuned to one catalog.
var synonymGroups = [][]string{
	{"create", "make", "new", "add", "insert", "generate", "open"},
	{"delete", "remove", "erase", "drop", "destroy", "discard", "clear"},
	{"get", "fetch", "retrieve", "read", "show", "view", "display", "obtain", "see", "look", "inspect", "detail", "info", "describe", "grab"},
	{"list", "enumerate", "browse", "index"},
	{"update", "edit", "modify", "change", "set", "patch", "alter", "replace", "rewrite"},
	{"search", "find", "query", "lookup", "locate", "look", "grep", "match", "filter"},
	{"run", "execute", "invoke", "start", "launch", "call", "trigger"},
	{"stop", "kill", "terminate", "cancel", "end", "halt", "abort"},
	{"move", "rename", "relocate"},
	{"copy", "duplicate", "clone", "fork"},
	{"write", "save", "store", "persist", "put", "record"},
	{"navigate", "go", "visit", "open", "browse", "goto", "load"},
	{"click", "press", "tap"},
	{"type", "fill", "enter", "input"},
	{"screenshot", "capture", "snapshot", "picture", "image"},
	{"directory", "folder", "dir"},
	{"file", "document", "doc"},
	{"repository", "repo", "project"},
	{"issue", "ticket", "bug"},
	{"pull", "merge", "pr"},
	{"comment", "reply", "note", "remark"},
	{"message", "post", "chat", "send", "say", "said", "tell", "told"},
	{"user", "person", "people", "member", "account", "profile"},
	{"location", "place", "address", "geocode", "map", "coordinate"},
	{"direction", "route", "distance", "travel", "far", "drive", "car"},
	{"duration", "time", "long"},
	{"review", "rating"},
	{"forget", "delete", "remove"},
	{"remember", "memory", "recall", "knowledge"},
	{"fact", "observation", "note"},
	{"entity", "node", "item", "object"},
	{"relation", "link", "connection", "edge", "relationship"},
	{"log", "console", "output", "print", "stdout"},
	{"page", "tab", "website", "site", "web", "url"},
	{"size", "length", "dimension", "resize"},
	{"wait", "sleep", "pause", "delay"},
	{"database", "db", "collection", "table"},
	{"pod", "container"},
	{"deployment", "deploy", "rollout"},
	{"script", "javascript", "js", "evaluate", "eval", "code"},
	{"upload", "attach"},
	{"download", "export", "save"},
	{"summary", "summarize", "overview", "stats", "statistic"},
	{"environment", "env", "variable", "config", "configuration", "setting"},
	{"commit", "change", "diff"},
	{"branch", "ref"},
	{"tree", "hierarchy", "structure"},
	{"sum", "add", "total", "plus"},
	{"echo", "repeat", "return"},
	{"timezone", "time", "clock"},
	{"performance", "trace", "profile", "speed", "slow", "optimize", "optimizer"},
	{"network", "request", "http", "traffic"},
	{"emulate", "simulate", "throttle"},
	{"dialog", "alert", "prompt", "popup"},
	{"hover", "mouse"},
	{"drag", "drop"},
	{"key", "keyboard", "keystroke"},
	{"element", "selector", "button", "field"},
	{"think", "reason", "plan", "reflect", "step"},
	{"process", "command", "terminal", "shell", "program"},
	{"metadata", "attribute", "property", "info", "detail", "stat"},
	{"label", "tag"},
	{"member", "collaborator"},
	{"permission", "access", "allow", "reach"},
	{"schema", "structure", "column", "field"},
	{"namespace", "cluster"},
	{"library", "package", "dependency"},
	{"documentation", "doc", "docs", "reference", "manual", "guide", "tutorial", "example"},
	{"big", "biggest", "large", "largest", "huge", "size"},
	{"several", "multiple", "many", "batch", "bulk", "every", "each", "two", "three"},
	{"machine", "computer", "system", "host", "device"},
	{"program", "app", "application", "software", "process"},
	{"whole", "entire", "full", "complete", "dump"},
	{"aggregate", "aggregation", "group", "average", "pipeline"},
	{"close", "shut", "quit", "exit"},
	{"dialog", "modal", "confirm"},
	{"hover", "mouseover", "tooltip"},
	{"window", "viewport", "screen"},
	{"video", "screencast", "recording", "movie"},
	{"who", "user", "person"},
	{"channel", "room"},
	{"thread", "conversation", "discussion"},
	{"emoji", "reaction", "react"},
	{"workspace", "team", "organization", "org"},
	{"approve", "review", "accept"},
	{"status", "check", "passing", "failing", "result", "state"},
	{"build", "pipeline", "ci", "workflow", "job"},
	{"rerun", "retry", "restart", "again"},
	{"rollback", "revert", "undo", "restore", "previous"},
	{"replica", "instance", "copy"},
	{"forward", "tunnel", "proxy"},
	{"execute", "exec", "run"},
	{"row", "record", "document", "entry"},
	{"sql", "query", "select"},
	{"count", "number", "total"},
	{"connect", "connection", "login", "authenticate"},
	{"paragraph", "block", "section"},
	{"append", "add", "extend"},
	{"title", "heading", "headline"},
	{"library", "package", "dependency", "framework", "module", "sdk"},
	{"ask", "elicit", "elicitation", "question", "prompt"},
	{"compress", "zip", "gzip", "archive"},
	{"audio", "sound", "voice", "music"},
	{"image", "photo", "picture", "icon", "logo"},
	{"coordinate", "latitude", "longitude", "lat", "lng"},
	{"nearby", "near", "local", "around"},
	{"place", "business", "shop", "restaurant", "cafe", "venue"},
	{"web", "internet", "online", "google"},
	{"news", "article", "headline"},
	{"accessibility", "a11y", "aria"},
	{"content", "body", "text"},
	{"html", "dom", "markup"},
	{"select", "choose", "option", "dropdown", "combobox"},
	{"back", "previous", "history"},
	{"kubernetes", "k8s", "kubectl"},
	{"mongodb", "mongo"},
	{"postgres", "postgresql", "psql"},
	{"typescript", "ts"},
	{"elevation", "altitude", "height"},
	{"command", "cli", "npm", "npx", "yarn", "pip", "cargo", "bash", "zsh"},
	{"resource", "configmap", "ingress", "statefulset", "daemonset", "replicaset", "cronjob"},
}

// synonymWeight is the weight of a synonym against the word the user wrote.
const synonymWeight = 0.4

// synonyms maps a stemmed word to the stems of its synonyms, built once.
var synonyms = buildSynonyms()

func buildSynonyms() map[string][]string {
	m := map[string][]string{}
	for _, g := range synonymGroups {
		stems := make([]string, 0, len(g))
		for _, w := range g {
			stems = append(stems, Stem(w))
		}
		for _, a := range stems {
			for _, b := range stems {
				if a != b && !slices.Contains(m[a], b) {
					m[a] = append(m[a], b)
				}
			}
		}
	}
	return m
}
