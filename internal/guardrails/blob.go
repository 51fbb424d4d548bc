package guardrails

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

// Binary content in a result (a resource's "blob", an image's or audio's "data"; opaque.go) is
// base64, but what it decodes to is not always binary: a resource whose mimeType is text/plain,
// application/json or image/svg+xml is text to the client that decodes it, and so is an image
// whose mimeType lies and whose bytes are text (a client that sniffs what it shows, or hands the
// bytes to a model as text, reads it so). A secret, an address or an instruction in such a blob
// is the same finding it would be in a "text". So every blob is decoded, as the widest decoder
// reads base64 (either alphabet, padding or none, white space passed over), and:
//
//   - a blob that is not base64 under that reading fails the check (blocked): a lenient decoder
//     (Python's b64decode, Node's Buffer) still reads something out of it, which the gateway
//     could not have checked;
//   - a textual mimeType with a charset other than UTF-8 (or ASCII), or whose bytes are not
//     UTF-8, fails the check: the client reads it in an encoding the detectors do not;
//   - bytes that are UTF-8 without a NUL, whatever the mimeType says, are scanned as text, by
//     the same detectors and rules as a "text"; any other bytes (an image, audio, an archive)
//     are binary and pass unscanned.
//
// The decoded text is scanned in the windows an escaped string is (walk.go): the memory a check
// holds does not grow with the blob, and its work is the blob's length, as for text. A redaction
// is the exception: it decodes the whole blob (bounded by the size of the message it is in) and
// re-encodes it, as standard base64 with padding, with the markers in place of the matches. The second reading without default-ignorable characters (ignorable.go) reads the
// decoded text too.

// blobState is the state of the blob the walker is scanning (on), or of none.
type blobState struct {
	on bool
	// base is the decoded offset of the window's first byte.
	base int
	// edits are the redactions of the blob, at offsets of its decoded text.
	edits []edit
}

// ErrUnreadableContent is a check that failed on binary content the guardrails cannot read as
// its client does: not base64, or text in a charset other than UTF-8, or text whose bytes are
// not UTF-8. The error names which, and where, never the content.
var ErrUnreadableContent = errors.New("guardrails: binary content that cannot be read as its client reads it")

// Why a blob is ErrUnreadableContent.
const (
	whyNotBase64 = "not base64"
	whyCharset   = "text in a charset other than UTF-8"
	whyNotUTF8   = "text whose bytes are not UTF-8"
)

// blob checks the base64 string at raw[v], the member key of the object that starts at
// raw[obj], which the walker then passes over (true).
func (w *walker) blob(key []byte, obj, v int) bool {
	if w.sc.dir == nil {
		return true
	}
	s, e := v+1, jsonrpc.StringEnd(w.raw, v)-1
	w.path = append(w.path, pathElem{key: key})
	defer func() { w.path = w.path[:len(w.path)-1] }()
	mime := mimeOf(w.raw, obj)
	why := ""
	switch text, ok := w.sniff(s, e); {
	case !ok:
		why = whyNotBase64
	case mime.badCharset:
		why = whyCharset
	case text:
		w.scanBlob(s, e)
	case mime.textual:
		why = whyNotUTF8
	}
	if why != "" && w.sc.rep.Err == nil {
		w.sc.rep.Err = fmt.Errorf("%w (%s) at %s", ErrUnreadableContent, why, w.pointer())
	}
	return true
}

// mime is what an object's mimeType says of its blob.
type mime struct{ textual, badCharset bool }

// mimeOf reads the mimeType of the object at raw[obj], in every spelling a case-folding decoder
// reads as it (jsonrpc.FoldEqual), the strictest of them: textual if one says so, a charset the
// detectors do not read if one names it.
func mimeOf(raw []byte, obj int) mime {
	var m mime
	_ = jsonrpc.Members(raw[obj:jsonrpc.ValueEnd(raw, obj)], func(k, v []byte) error {
		if !jsonrpc.FoldEqual(k, []byte("mimeType")) || v[0] != '"' {
			return nil
		}
		t, cs := parseMIME(string(decodedKey(v[1 : len(v)-1])))
		if textualMIME(t) {
			m.textual = true
			m.badCharset = m.badCharset || !(cs == "" || cs == "utf-8" || cs == "utf8" || cs == "us-ascii" || cs == "ascii")
		}
		return nil
	})
	return m
}

// parseMIME returns a media type's type/subtype and its charset parameter, lower-cased.
func parseMIME(s string) (typ, charset string) {
	s = strings.ToLower(s)
	typ, params, _ := strings.Cut(s, ";")
	for p := range strings.SplitSeq(params, ";") {
		if k, v, ok := strings.Cut(p, "="); ok && strings.TrimSpace(k) == "charset" {
			charset = strings.Trim(strings.TrimSpace(v), `"'`)
		}
	}
	return strings.TrimSpace(typ), charset
}

// textualMIME reports whether a media type (lower case, no parameters) is text: text/*,
// message/*, the structured-syntax suffixes of text formats (+json, +xml, +yaml) and the
// application types of text formats and scripts.
func textualMIME(t string) bool {
	if strings.HasPrefix(t, "text/") || strings.HasPrefix(t, "message/") {
		return true
	}
	for _, suf := range [...]string{"+json", "+xml", "+yaml", "+json-seq", "+text"} {
		if strings.HasSuffix(t, suf) {
			return true
		}
	}
	switch strings.TrimPrefix(t, "application/") {
	case "json", "xml", "javascript", "ecmascript", "x-javascript", "x-ecmascript", "yaml", "x-yaml",
		"toml", "x-toml", "sql", "graphql", "x-sh", "x-shellscript", "x-www-form-urlencoded", "csv",
		"x-ndjson", "ndjson", "jsonl", "x-jsonlines", "x-httpd-php", "x-python", "x-perl", "x-ruby",
		"rtf", "x-tex", "x-latex", "xhtml", "html", "x-markdown", "markdown", "jwt", "x-pem-file":
		return t != strings.TrimPrefix(t, "application/")
	}
	return false
}

// sniff decodes the blob raw[s:e] without keeping it and reports whether it is base64 (ok) and
// whether its bytes are text (UTF-8 without a NUL).
func (w *walker) sniff(s, e int) (text, ok bool) {
	var carry [utf8.UTFMax]byte
	nc := 0
	text = true
	ok = decodeBase64(w.raw[s:e], func(chunk []byte) {
		if !text {
			return
		}
		for len(chunk) > 0 {
			if nc > 0 {
				// A rune split between chunks: complete it a byte at a time.
				carry[nc] = chunk[0]
				nc++
				chunk = chunk[1:]
				if utf8.FullRune(carry[:nc]) {
					if r, n := utf8.DecodeRune(carry[:nc]); r == utf8.RuneError && n == 1 {
						text = false
						return
					}
					nc = 0
				}
				continue
			}
			i := 0
			for i < len(chunk) && chunk[i] != 0 && chunk[i] < utf8.RuneSelf {
				i++
			}
			if i == len(chunk) {
				return
			}
			if chunk[i] == 0 {
				text = false
				return
			}
			if !utf8.FullRune(chunk[i:]) {
				nc = copy(carry[:], chunk[i:])
				return
			}
			if r, n := utf8.DecodeRune(chunk[i:]); r != utf8.RuneError || n > 1 {
				chunk = chunk[i+n:]
				continue
			}
			text = false
			return
		}
	})
	if nc > 0 {
		text = false
	}
	return text, ok
}

// decodeBase64 decodes the base64 of the JSON string contents src (escapes and all) as the
// widest decoder reads it, handing the bytes to fn in chunks: the standard and URL alphabets
// (either, or both), padding or none, white space (raw or escaped) passed over. It reports
// whether src is base64 so read: no other character, padding only at the end, no lone sextet.
func decodeBase64(src []byte, fn func([]byte)) bool {
	var out [3 << 10]byte
	n := 0
	var quad [4]byte
	q, pad := 0, 0
	for i := 0; i < len(src); i++ {
		c := src[i]
		if c == '\\' && i+1 < len(src) {
			r, m := jsonrpc.EscapedRune(src, i)
			if m == 2 {
				r = shortRune(src[i+1])
			}
			i += max(m, 2) - 1
			if r >= utf8.RuneSelf || r < 0 {
				return false
			}
			c = byte(r)
		}
		v := sextet(c)
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			continue
		case c == '=':
			pad++
			continue
		case v < 0 || pad > 0:
			return false
		}
		quad[q] = byte(v)
		if q++; q == 4 {
			out[n], out[n+1], out[n+2] = quad[0]<<2|quad[1]>>4, quad[1]<<4|quad[2]>>2, quad[2]<<6|quad[3]
			q, n = 0, n+3
			if n == len(out) {
				fn(out[:n])
				n = 0
			}
		}
	}
	switch q {
	case 1:
		return false
	case 2:
		out[n] = quad[0]<<2 | quad[1]>>4
		n++
	case 3:
		out[n], out[n+1] = quad[0]<<2|quad[1]>>4, quad[1]<<4|quad[2]>>2
		n += 2
	}
	if pad > 2 || pad > 0 && (q+pad)%4 != 0 {
		return false
	}
	if n > 0 {
		fn(out[:n])
	}
	return true
}

// shortRune is the character the two-byte JSON escape whose letter is c writes.
func shortRune(c byte) rune {
	switch c {
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	case 'f':
		return '\f'
	case 'b':
		return '\b'
	}
	return rune(c) // '"', '\\', '/'
}

// sextet is the value of the base64 character c in either alphabet, or -1.
func sextet(c byte) int {
	switch {
	case isUpper(c):
		return int(c - 'A')
	case isLower(c):
		return int(c-'a') + 26
	case isDigit(c):
		return int(c-'0') + 52
	case c == '+' || c == '-':
		return 62
	case c == '/' || c == '_':
		return 63
	}
	return -1
}

// scanBlob scans the text the base64 string raw[s:e] decodes to, window by window as escaped
// does, and turns its redactions into one edit that replaces the string's contents.
func (w *walker) scanBlob(s, e int) {
	d := w.win[:0]
	w.from, w.marks = 0, w.marks[:0]
	w.bl = blobState{on: true, edits: w.bl.edits[:0]}
	scan := func(final bool) {
		limit := len(d)
		if !final {
			limit = runeStart(d, w.from+windowStep)
		}
		if w.strip {
			d, limit = stripText(d, limit) // the second reading (ignorable.go)
		} else if !w.sc.rep.hidden && hiddenIn(d[w.from:limit]) {
			w.sc.rep.hidden = true
		}
		w.scanText(d, limit)
		if final {
			return
		}
		cut := runeStart(d, max(0, limit-windowContext))
		w.bl.base += cut
		d = d[:copy(d, d[cut:])]
		w.from = limit - cut
	}
	decodeBase64(w.raw[s:e], func(chunk []byte) {
		d = append(d, chunk...)
		if len(d) >= w.from+windowStep+maxMatch {
			scan(false)
		}
	})
	scan(true)
	w.win, w.from = d[:0], 0
	if len(w.bl.edits) > 0 && !w.strip {
		w.redactBlob(s, e)
	}
	w.bl.on = false
}

// redactBlob adds the edit that replaces the blob raw[s:e] with the base64 of its text
// redacted.
func (w *walker) redactBlob(s, e int) {
	var text []byte
	decodeBase64(w.raw[s:e], func(chunk []byte) { text = append(text, chunk...) })
	redacted := apply(text, w.bl.edits)
	enc := make([]byte, base64.StdEncoding.EncodedLen(len(redacted)))
	base64.StdEncoding.Encode(enc, redacted)
	r := w.sc.rep
	r.edits = append(r.edits, edit{start: s, end: e, text: enc})
}

// foundInBlob records a match of det over the blob's decoded text [start:end].
func (w *walker) foundInBlob(det Detector, start, end int) {
	m := w.sc
	if a := m.record(det, w); a == Redact {
		if len(m.rep.edits)+len(w.bl.edits) >= maxEdits {
			m.rep.Err = ErrTooManyFindings
			return
		}
		w.bl.edits = append(w.bl.edits, edit{start: start, end: end, det: det})
	}
}

// hiddenIn reports whether t holds a default-ignorable or hidden control character, which the
// second reading removes (ignorable.go).
func hiddenIn(t []byte) bool {
	for i := 0; i < len(t); {
		c := t[i]
		if c >= 0x20 && c < 0x7F || c == '\t' || c == '\n' || c == '\r' {
			i++
			continue
		}
		r, n := utf8.DecodeRune(t[i:])
		if ignorable(r) || hiddenControl(r) {
			return true
		}
		i += n
	}
	return false
}

// stripText removes from t, in place, the default-ignorable and hidden control characters
// (ignorable.go) of t[:limit] and t[limit:], and returns it with limit moved to match.
func stripText(t []byte, limit int) ([]byte, int) {
	out := t[:0]
	newLimit := -1
	for i := 0; i < len(t); {
		if i >= limit && newLimit < 0 {
			newLimit = len(out)
		}
		r, n := utf8.DecodeRune(t[i:])
		if r == utf8.RuneError && n <= 1 || !(ignorable(r) || hiddenControl(r)) {
			out = append(out, t[i:i+max(n, 1)]...)
		}
		i += max(n, 1)
	}
	if newLimit < 0 {
		newLimit = len(out)
	}
	return out, newLimit
}
