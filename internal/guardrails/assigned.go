package guardrails

import (
	"bytes"
	"encoding/json"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

// A secret recognised by the name it is given is found by the assignment detectors in text
// ("aws_secret_access_key = …", `"password": "…"`), where the name and the value are one
// string. In JSON the name is a member's and the value a string or number of its own: the
// walker scans each on its own, so the same object read as text (a tool result's content,
// which serializes its structuredContent) and as JSON (the structuredContent itself, a
// client's arguments) would not agree: the text redacted, the member forwarded as it was.
// assigned reads a member whose name names a secret as that assignment.

// maxAssignedValue bounds the value an assignment reads in text: its first line, at most 512
// bytes (secrets.go's assignment).
const maxAssignedValue = 512

// assigned finds the value at raw[v] of the member key (raw, as in the JSON text) when key names
// a secret (assignedSecret, as in text) and the value is a string or a number that is a
// plausible secret of that kind. The whole value is the match: it is replaced whole.
func (w *walker) assigned(key []byte, v int) {
	raw := w.raw
	if w.sc.dir == nil || !secretKeyEnd(key, len(key)) && bytes.IndexByte(key, '\\') < 0 {
		return // most members: the name cannot name a secret, told from its last bytes
	}
	name := decodedKey(key)
	k := len(name)
	for k > 0 && len(name)-k < 40 && (isAlnum(name[k-1]) || name[k-1] == '_' || name[k-1] == '-' || name[k-1] == '.') {
		k--
	}
	name = name[k:]
	if !secretKeyEnd(name, len(name)) {
		return
	}
	det, ok := assignedSecret(name, ':')
	if !ok || w.sc.dir.actions[det] == Off {
		return
	}
	end := jsonrpc.ValueEnd(raw, v)
	s, e := v, end // a number: its literal
	val := raw[s:e]
	switch c := raw[v]; {
	case c == '"':
		s, e = v+1, end-1
		val = raw[s:e]
		if bytes.IndexByte(val, '\\') >= 0 {
			var dec string
			if json.Unmarshal(raw[v:end], &dec) != nil {
				return
			}
			val = []byte(dec)
		}
	case c == '-' || c >= '0' && c <= '9':
	default:
		return // an object, an array, a literal: no value of a secret's form
	}
	if i := bytes.IndexByte(val, '\n'); i >= 0 {
		val = val[:i]
	}
	val = val[:min(len(val), maxAssignedValue)]
	if s >= e || !plausibleValue(det, val) || workingDir(name, val) {
		return
	}
	rep := w.sc.rep
	before := len(rep.edits)
	w.sc.found(det, s, e, w)
	if raw[v] != '"' && len(rep.edits) > before {
		// A number is replaced with a string, as number does: a marker is not a number.
		rep.edits[before].text = []byte(`"` + Marker(det) + `"`)
	}
}
