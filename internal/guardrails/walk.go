package guardrails

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

// The walker visits every string value of a JSON text that has passed the strict scan (a
// client's arguments, a backend's result), in one pass and in place: a string without escapes
// is scanned where it lies; a string with escapes is decoded in windows of bounded size that
// overlap by maxMatch, so a result of any size is scanned in bounded memory. Matches are
// recorded at their offsets in the JSON text, where a redaction replaces them.

// Window sizes for escaped strings: windowStep new bytes per window, plus the overlap.
const windowStep = 32 << 10

// windowContext is how much of the text before a window's first new byte the window holds
// again. A detector reads text before where its match starts: a connection string's password
// after the URL's scheme and user, an assignment's value after the key that names it, an '@'
// that belongs to a URL's authority rather than an address. A window that started at its first
// new byte would cut that off when a match starts just after the cut, and miss the secret or
// take it for something else. Matches that start in the context were the previous window's.
const windowContext = 1 << 10

// maxDepth bounds the nesting the walker follows; deeper JSON is a guardrail error (the
// gateway's decoders stop far earlier).
const maxDepth = 256

// errTooDeep is the walker's refusal of JSON nested deeper than maxDepth.
var errTooDeep = errors.New("guardrails: JSON nested too deeply to check")

// mark maps a decoded escape back to the JSON text: the escape at raw offset r, rn bytes long,
// decoded to dn bytes at offset d of the window.
type mark struct{ d, dn, r, rn int32 }

// walker is the state of one check of one JSON text.
type walker struct {
	raw []byte
	sc  *msgScan
	// msg is what sc points to: held here so a check allocates no state of its own.
	msg  msgScan
	ts   textScan
	path []pathElem
	// off is the raw offset of the text being scanned (a string without escapes); marks is
	// the map of an escaped string's window (off unused then).
	off   int
	marks []mark
	win   []byte
	// from is where the new bytes of an escaped string's window start (windowContext bytes of
	// context before them at most; 0 in the first window and for a string without escapes).
	from int
	// stripMeta: the text is a result, whose _meta member MetaKey is the gateway's (not
	// scanned, and replaced).
	stripMeta bool
	// echo is what the client sent that the message carries back (nil: nothing), passed over.
	echo *Echo
	// bl is the blob being scanned (blob.go); strip: this is the second reading, without
	// default-ignorable characters, which a blob's decoded text is read without too.
	bl    blobState
	strip bool
	// content: the text is a result or the params of a request relayed to the client, whose
	// content blocks and resources hold binary content (opaque.go).
	content bool
}

// pathElem is one step of the path to a string: a member name (raw, as in the JSON text) or
// an array index.
type pathElem struct {
	key []byte
	idx int
}

// walk visits the JSON value raw.
func (w *walker) walk() error {
	_, err := w.value(skipWS(w.raw, 0), 0)
	return err
}

func (w *walker) value(i, depth int) (int, error) {
	raw := w.raw
	switch raw[i] {
	case '{':
		return w.object(i, depth+1)
	case '[':
		return w.array(i, depth+1)
	case '"':
		end := jsonrpc.StringEnd(raw, i)
		w.str(i+1, end-1)
		return end, nil
	}
	end := jsonrpc.ValueEnd(raw, i)
	w.number(i, end)
	return end, nil
}

func (w *walker) object(i, depth int) (int, error) {
	if depth > maxDepth {
		return 0, errTooDeep
	}
	raw := w.raw
	obj := i
	i = skipWS(raw, i+1)
	for i < len(raw) && raw[i] == '"' {
		kend := jsonrpc.StringEnd(raw, i)
		key := raw[i+1 : kend-1]
		if err := w.spelling(depth, key); err != nil {
			return 0, err
		}
		w.memberName(i+1, kend-1)
		v := skipWS(raw, skipWS(raw, kend)+1)
		var err error
		start := v
		skipped := w.skipValue(key, obj, v, depth)
		if skipped {
			// Passed over, not walked: nothing in it is scanned, and the gateway's own member
			// of _meta is replaced whole however deep the backend nested it.
			v = jsonrpc.ValueEnd(raw, v)
		} else {
			w.path = append(w.path, pathElem{key: key})
			w.assigned(key, v)
			v, err = w.value(v, depth)
			w.path = w.path[:len(w.path)-1]
		}
		if err != nil {
			return 0, err
		}
		w.layout(depth, key, i, start, v, skipped)
		i = skipWS(raw, v)
		if i < len(raw) && raw[i] == ',' {
			i = skipWS(raw, i+1)
		}
	}
	return i + 1, nil
}

func (w *walker) array(i, depth int) (int, error) {
	if depth > maxDepth {
		return 0, errTooDeep
	}
	raw := w.raw
	i = skipWS(raw, i+1)
	for n := 0; i < len(raw) && raw[i] != ']'; n++ {
		w.path = append(w.path, pathElem{idx: n})
		v, err := w.value(i, depth)
		w.path = w.path[:len(w.path)-1]
		if err != nil {
			return 0, err
		}
		i = skipWS(raw, v)
		if i < len(raw) && raw[i] == ',' {
			i = skipWS(raw, i+1)
		}
	}
	return i + 1, nil
}

// skipValue reports whether the value at raw[v], the member key of the object at raw[obj], is
// not text to scan: binary content or opaque state where the protocol puts them (opaque.go),
// and in a result the member of _meta the gateway owns (replaced by its own annotation).
func (w *walker) skipValue(key []byte, obj, v, depth int) bool {
	if w.opaque(key, obj, v, depth) || w.echo != nil && w.echoed(key, v, depth) {
		return true
	}
	return w.stripMeta && depth == 2 && len(w.path) == 1 && keyIs(w.path[0].key, "_meta") && keyIs(key, MetaKey)
}

// echoed reports whether the member key, whose value starts at raw[v], is one the client sent
// that the message carries back as it was (Echo): the message's id, its params' progressToken.
func (w *walker) echoed(key []byte, v, depth int) bool {
	var want []byte
	switch {
	case depth == 1 && keyIs(key, "id"):
		want = w.echo.ID
	case depth == 2 && len(w.path) == 1 && keyIs(w.path[0].key, "params") && keyIs(key, "progressToken"):
		want = w.echo.ProgressToken
	}
	return want != nil && bytes.Equal(w.raw[v:jsonrpc.ValueEnd(w.raw, v)], want)
}

// layout records where the result's _meta is and where the member of it the gateway owns is,
// for the rewrite (rewrite.go): a member at depth 1 named _meta, whose value is
// raw[start:end] (an object, or null, which the annotation replaces); a skipped member of it
// that is the gateway's, from its key at raw[key].
func (w *walker) layout(depth int, name []byte, key, start, end int, skipped bool) {
	switch {
	case !w.stripMeta:
	case depth == 1 && keyIs(name, "_meta") && (w.raw[start] == '{' || w.raw[start] == 'n'):
		w.sc.rep.meta = span{start, end}
	case depth == 2 && skipped && keyIs(name, MetaKey):
		w.sc.rep.own = span{key, end}
	}
}

// str scans the string whose contents are raw[s:e].
func (w *walker) str(s, e int) {
	if w.sc.dir == nil || s >= e {
		return
	}
	if bytes.IndexByte(w.raw[s:e], '\\') < 0 {
		w.marks = w.marks[:0]
		w.off, w.from = s, 0
		w.scanText(w.raw[s:e], e-s)
		return
	}
	w.escaped(s, e)
}

func (w *walker) scanText(t []byte, limit int) {
	w.ts.t, w.ts.limit, w.ts.noEmail = t, limit, 0
	w.ts.run()
}

// escaped scans a string with escapes, decoded window by window.
func (w *walker) escaped(s, e int) {
	d := w.win[:0]
	w.marks = append(w.marks[:0], mark{r: int32(s)})
	w.from = 0
	for rp := s; ; {
		for len(d) < w.from+windowStep+maxMatch && rp < e {
			// The bytes up to the next escape (or as many as the window has room for) are
			// copied at once; an escape is decoded on its own.
			if w.raw[rp] != '\\' {
				end := min(e, rp+w.from+windowStep+maxMatch-len(d))
				if k := bytes.IndexByte(w.raw[rp:end], '\\'); k >= 0 {
					end = rp + k
				}
				d, rp = append(d, w.raw[rp:end]...), end
				continue
			}
			d, rp = w.decodeOne(d, rp)
		}
		final := rp >= e
		limit := len(d)
		if !final {
			limit = runeStart(d, w.from+windowStep)
		}
		w.scanText(d, limit)
		if final {
			break
		}
		cut := runeStart(d, max(0, limit-windowContext))
		d = w.slide(d, cut)
		w.from = limit - cut
	}
	w.win, w.from = d[:0], 0
}

// runeStart is the start of the rune of d at or before i.
func runeStart(d []byte, i int) int {
	for i > 0 && !utf8.RuneStart(d[i]) {
		i--
	}
	return i
}

// decodeOne decodes the byte or escape at raw[rp] onto d.
func (w *walker) decodeOne(d []byte, rp int) ([]byte, int) {
	raw := w.raw
	if raw[rp] != '\\' {
		return append(d, raw[rp]), rp + 1
	}
	m := mark{d: int32(len(d)), r: int32(rp), rn: 2}
	switch c := raw[rp+1]; c {
	case 'b':
		d = append(d, '\b')
	case 'f':
		d = append(d, '\f')
	case 'n':
		d = append(d, '\n')
	case 'r':
		d = append(d, '\r')
	case 't':
		d = append(d, '\t')
	case 'u':
		r := jsonrpc.Hex4(raw[rp+2 : rp+6])
		m.rn = 6
		if utf16.IsSurrogate(r) {
			r2 := rune(-1)
			if rp+12 <= len(raw) && raw[rp+6] == '\\' && raw[rp+7] == 'u' {
				r2 = jsonrpc.Hex4(raw[rp+8 : rp+12])
			}
			if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
				r, m.rn = dec, 12
			} else {
				r = utf8.RuneError
			}
		}
		d = utf8.AppendRune(d, r)
	default: // '"', '\\', '/'
		d = append(d, c)
	}
	m.dn = int32(len(d)) - m.d
	w.marks = append(w.marks, m)
	return d, rp + int(m.rn)
}

// slide moves the window on: the bytes from limit (a rune start) become its start.
func (w *walker) slide(d []byte, limit int) []byte {
	base := w.rawAt(limit)
	kept := w.marks[:1]
	kept[0] = mark{r: int32(base)}
	for _, m := range w.marks[1:] {
		if int(m.d) >= limit {
			m.d -= int32(limit)
			kept = append(kept, m)
		}
	}
	w.marks = kept
	n := copy(d, d[limit:])
	return d[:n]
}

// rawAt maps an offset of the text being scanned (a rune start or its end) to the JSON text.
func (w *walker) rawAt(p int) int {
	if len(w.marks) == 0 {
		return w.off + p
	}
	lo, hi := 0, len(w.marks)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if int(w.marks[mid].d) <= p {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	m := w.marks[lo]
	if p == int(m.d) {
		return int(m.r)
	}
	return int(m.r+m.rn) + p - int(m.d+m.dn)
}

func skipWS(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// onMatch records a detector's match in the text being scanned.
func (w *walker) onMatch(det Detector, start, end int) {
	if start < w.from {
		return // the previous window's: it starts in this one's context
	}
	if w.bl.on {
		w.foundInBlob(det, w.bl.base+start, w.bl.base+end)
		return
	}
	w.sc.found(det, w.rawAt(start), w.rawAt(end), w)
}

// pointer renders the path to the string being scanned as an RFC 6901 JSON pointer, at most
// maxPathBytes long.
func (w *walker) pointer() string {
	var b []byte
	for _, p := range w.path {
		b = append(b, '/')
		if p.key == nil {
			b = strconv.AppendInt(b, int64(p.idx), 10)
			continue
		}
		for _, c := range decodedKey(p.key) {
			switch c {
			case '~':
				b = append(b, '~', '0')
			case '/':
				b = append(b, '~', '1')
			default:
				b = append(b, c)
			}
		}
		if len(b) > maxPathBytes {
			return string(b[:maxPathBytes]) + "…"
		}
	}
	return string(b)
}

// maxPathBytes bounds a path in reports.
const maxPathBytes = 256

// decodedKey is a member name as read from the JSON text, escapes decoded.
func decodedKey(raw []byte) []byte {
	if bytes.IndexByte(raw, '\\') < 0 {
		return raw
	}
	var s string
	if err := json.Unmarshal(append(append([]byte{'"'}, raw...), '"'), &s); err != nil {
		return raw
	}
	return []byte(s)
}

// keyIs reports whether the member name raw (as in the JSON text) is name.
func keyIs(raw []byte, name string) bool { return string(decodedKey(raw)) == name }
