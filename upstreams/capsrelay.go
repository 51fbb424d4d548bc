package upstreams

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/mcp-gateway/gateway/internal/configerr"
)

// tasksExtension is the MCP Tasks extension. The gateway does not relay it: a task result's
// taskId would have to route tasks/get, tasks/update and tasks/cancel back to the backend that
// created the task, and the gateway keeps no such state.
const tasksExtension = "io.modelcontextprotocol/tasks"

// maxRelayed bounds each RelayCapabilities list.
const maxRelayed = 64

// RelayCapabilities names the backend capabilities under `extensions` and `experimental` that
// the merged server/discover passes on to clients. Both are off by default: an extension or
// experimental capability may add methods, results or notifications that the gateway does not
// route, and advertising it would promise clients what the gateway cannot deliver. Name one
// here only when it works through the gateway as it stands: it changes only what a backend
// does with requests and results the gateway already forwards unchanged (for example extra
// `_meta` keys), and needs no new method.
//
// A named capability is advertised when at least one answering backend declares it and every
// backend that declares it does so with the same settings object; when backends disagree on
// the settings it is left out, since the gateway cannot speak for all of them with one.
type RelayCapabilities struct {
	// Extensions are names under ServerCapabilities.extensions, e.g. "com.example/audit".
	// io.modelcontextprotocol/tasks is refused (see above).
	Extensions []string `yaml:"extensions"`
	// Experimental are names under ServerCapabilities.experimental.
	Experimental []string `yaml:"experimental"`
}

func (c RelayCapabilities) validate() []error {
	var errs []error
	check := func(field string, names []string) {
		if len(names) > maxRelayed {
			errs = append(errs, configerr.At("relayCapabilities."+field, "at most %d names", maxRelayed))
		}
		for i, n := range names {
			switch {
			case n == "" || len(n) > 256 || strings.ContainsFunc(n, func(r rune) bool { return r <= ' ' || unicode.IsControl(r) }):
				errs = append(errs, configerr.At(fmt.Sprintf("relayCapabilities.%s[%d]", field, i), "want a name of 1 to 256 bytes without spaces or control characters"))
			case slices.Contains(names[:i], n):
				errs = append(errs, configerr.At(fmt.Sprintf("relayCapabilities.%s[%d]", field, i), "%q listed twice", n))
			case field == "extensions" && n == tasksExtension:
				errs = append(errs, configerr.At(fmt.Sprintf("relayCapabilities.extensions[%d]", i), "%s cannot be relayed: the gateway does not route tasks/get, tasks/update or tasks/cancel", n))
			}
		}
	}
	check("extensions", c.Extensions)
	check("experimental", c.Experimental)
	return errs
}

// namedCaps merges one map of named capabilities (extensions or experimental) across backends.
type namedCaps struct {
	settings map[string][]byte // compacted settings object per relayed name
	conflict map[string]bool   // names whose backends disagree
}

// add merges a backend's map, keeping only relayed names with an object for settings.
func (n *namedCaps) add(relay []string, src map[string]json.RawMessage) {
	for name, raw := range src {
		if !slices.Contains(relay, name) {
			continue
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, raw); err != nil || buf.Len() == 0 || buf.Bytes()[0] != '{' {
			continue // not a settings object: not something the gateway can vouch for
		}
		if n.settings == nil {
			n.settings, n.conflict = map[string][]byte{}, map[string]bool{}
		}
		if prev, ok := n.settings[name]; ok && !bytes.Equal(prev, buf.Bytes()) {
			n.conflict[name] = true
			continue
		}
		n.settings[name] = buf.Bytes()
	}
}

// render writes the agreed names as a JSON object member, or "" when there are none.
func (n *namedCaps) render(member string) string {
	var names []string
	for name := range n.settings {
		if !n.conflict[name] {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return ""
	}
	slices.Sort(names)
	var b strings.Builder
	b.WriteString(`"` + member + `":{`)
	for i, name := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		key, _ := json.Marshal(name)
		b.Write(key)
		b.WriteByte(':')
		b.Write(n.settings[name])
	}
	b.WriteByte('}')
	return b.String()
}
