package jsonrpc

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash/maphash"
	"math/bits"
	"unicode/utf8"
)

// Scan errors. Decode maps them to JSON-RPC codes; they are exported so fuzz tests and callers
// can tell them apart.
var (
	ErrSyntax       = errors.New("invalid JSON")
	ErrDuplicateKey = errors.New("duplicate object key")
	ErrTooDeep      = errors.New("JSON nested too deeply")
	ErrTooLong      = errors.New("JSON string or number too long")
	// ErrFoldedKey: two keys of one object are the same name under folding (see FoldKey),
	// which case-insensitive decoders would read as one member.
	ErrFoldedKey = errors.New("object keys differ only in case or punctuation")
	// ErrSurrogateKey: an object key escapes half of a UTF-16 surrogate pair alone ("\ud800").
	// Decoders disagree on such a name (Go and the gateway read U+FFFD, JavaScript keeps the
	// lone half), so what the gateway checked would not be the name a backend acts on.
	ErrSurrogateKey = errors.New("object key holds a lone surrogate escape")
)

// Default limits for Scan. They are far above anything a legitimate MCP message needs and far
// below what would let a hostile body cost real CPU or stack.
const (
	DefaultMaxDepth       = 64
	DefaultMaxTokenBytes  = 1 << 20
	smallObjectKeyScanMax = 16
)

// MaxScanDepth is the deepest nesting any scan goes into, whatever its Limits say: the scanner
// recurses once per level, a level costs it a few hundred bytes of stack, and a goroutine's stack
// past a gigabyte ends the process, not the request. A body of 4 MiB of "[" is four million
// levels; at this bound it costs a scan about 256 KiB of stack.
const MaxScanDepth = 1 << 10

// Limits bounds the shape of JSON the scanner accepts. Zero fields take the defaults.
type Limits struct {
	// MaxDepth is the deepest nesting of objects and arrays accepted. Default DefaultMaxDepth;
	// at most MaxScanDepth.
	MaxDepth int
	// MaxTokenBytes bounds one string or number, in bytes of source. Default DefaultMaxTokenBytes.
	MaxTokenBytes int
}

func (l Limits) withDefaults() Limits {
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultMaxDepth
	}
	l.MaxDepth = min(l.MaxDepth, MaxScanDepth)
	if l.MaxTokenBytes <= 0 {
		l.MaxTokenBytes = DefaultMaxTokenBytes
	}
	return l
}

// ScanError says what was wrong with a JSON text and where.
type ScanError struct {
	Err    error  // one of the sentinels above
	Offset int    // byte offset of the problem
	Key    string // the duplicated key, for ErrDuplicateKey and ErrFoldedKey
	Prev   string // the earlier spelling of Key, for ErrFoldedKey
	Depth  int    // nesting depth at which the problem was found (1 = top-level object)
}

func (e *ScanError) Error() string {
	if e.Prev != "" {
		return e.Err.Error() + ": " + quoteForMessage(e.Prev) + " and " + quoteForMessage(e.Key)
	}
	if e.Key != "" {
		return e.Err.Error() + " " + quoteForMessage(e.Key)
	}
	return e.Err.Error()
}

func (e *ScanError) Unwrap() error { return e.Err }

// Scan checks that data is exactly one JSON value (surrounding white space allowed) that is
// well-formed, valid UTF-8, within lim, and has no object with two equal keys (after escapes are
// decoded). Parsers disagree on which duplicate wins, and the gateway must authorize the same name
// the backend will read, so duplicates are refused rather than resolved.
func Scan(data []byte, lim Limits) error {
	_, err := scan(data, lim, false)
	return err
}

// scanStrict is Scan that also refuses an object with two keys equal under folding, for what
// clients send (see FoldKey).
func scanStrict(data []byte, lim Limits) error {
	_, err := scan(data, lim, true)
	return err
}

// scan is Scan (scanStrict with fold) that also reports whether some object has a member named
// "uri" (or another isURIKey), escapes decoded: the scan decodes every key anyway, so DecodeMessage learns it without
// another pass (see Message.MayHaveURIKey).
func scan(data []byte, lim Limits, fold bool) (uriKey bool, err error) {
	s := scanner{data: data, lim: lim.withDefaults(), fold: fold}
	i, err := s.value(s.skip(0), 0)
	if err != nil {
		return false, err
	}
	if i = s.skip(i); i != len(data) {
		return false, s.fail(ErrSyntax, i, 0)
	}
	return s.uriKey, nil
}

// isURIKey reports whether a member named key holds a resource URI a gateway may have to
// rewrite: "uri" (resources, resource links, embedded resources) and, for MCP Apps (SEP-1865),
// "resourceUri" (_meta.ui.resourceUri) and the deprecated flat "ui/resourceUri".
func isURIKey(key []byte) bool {
	switch string(key) {
	case "uri", "resourceUri", "ui/resourceUri":
		return true
	}
	return mayBeAppsLink(key)
}

// mayBeAppsLink reports whether key is another spelling of MCP Apps' resourceUri or
// ui/resourceUri that a case-insensitive decoder reads as it (FoldEqual): the gateway
// namespaces the link in those spellings too, so a result holding one needs the pass. Most keys
// are told apart by their length or last byte, without folding.
func mayBeAppsLink(key []byte) bool {
	if len(key) < len("resourceUri") {
		return false
	}
	if last := key[len(key)-1]; last|0x20 != 'i' && last < utf8.RuneSelf {
		return false
	}
	return FoldEqual(key, appsLink) || FoldEqual(key, appsFlatLink)
}

var (
	appsLink     = []byte("resourceUri")
	appsFlatLink = []byte("ui/resourceUri")
)

type scanner struct {
	data []byte
	lim  Limits
	// trusted skips duplicate-key detection, for text that already passed Scan (or, when
	// recovering an id for an error response, whose problem lies below the top level).
	trusted bool
	// fold also refuses keys of one object that are equal under folding (FoldKey).
	fold bool
	// uriKey is set once an object with a member isURIKey names has been seen (not when
	// trusted).
	uriKey bool
}

func (s *scanner) fail(err error, off, depth int) error {
	return &ScanError{Err: err, Offset: off, Depth: depth}
}

func (s *scanner) skip(i int) int {
	for i < len(s.data) {
		switch s.data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

func (s *scanner) value(i, depth int) (int, error) {
	if i >= len(s.data) {
		return i, s.fail(ErrSyntax, i, depth)
	}
	switch c := s.data[i]; {
	case c == '{':
		return s.object(i, depth+1)
	case c == '[':
		return s.array(i, depth+1)
	case c == '"' && s.trusted:
		return s.trustedEnd(i)
	case c == '"':
		end, _, err := s.str(i, depth)
		return end, err
	case c == 't':
		return s.literal(i, "true", depth)
	case c == 'f':
		return s.literal(i, "false", depth)
	case c == 'n':
		return s.literal(i, "null", depth)
	case c == '-' || (c >= '0' && c <= '9'):
		return s.number(i, depth)
	}
	return i, s.fail(ErrSyntax, i, depth)
}

func (s *scanner) literal(i int, lit string, depth int) (int, error) {
	if !bytes.HasPrefix(s.data[i:], []byte(lit)) {
		return i, s.fail(ErrSyntax, i, depth)
	}
	return i + len(lit), nil
}

func (s *scanner) array(i, depth int) (int, error) {
	if depth > s.lim.MaxDepth {
		return i, s.fail(ErrTooDeep, i, depth)
	}
	i = s.skip(i + 1)
	if i < len(s.data) && s.data[i] == ']' {
		return i + 1, nil
	}
	for {
		var err error
		if i, err = s.value(i, depth); err != nil {
			return i, err
		}
		var done bool
		if i, done, err = s.separator(i, depth, ']'); err != nil || done {
			return i, err
		}
	}
}

func (s *scanner) object(i, depth int) (int, error) {
	if depth > s.lim.MaxDepth {
		return i, s.fail(ErrTooDeep, i, depth)
	}
	i = s.skip(i + 1)
	if i < len(s.data) && s.data[i] == '}' {
		return i + 1, nil
	}
	var seen keySet
	for {
		if i >= len(s.data) || s.data[i] != '"' {
			return i, s.fail(ErrSyntax, i, depth)
		}
		start := i
		end, escaped, err := s.str(i, depth)
		if err != nil {
			return end, err
		}
		if !s.trusted {
			key := s.data[start+1 : end-1]
			if escaped {
				if LoneSurrogate(key) {
					return start, &ScanError{Err: ErrSurrogateKey, Offset: start, Depth: depth}
				}
				key = unescapeKey(key)
			}
			s.uriKey = s.uriKey || isURIKey(key)
			if key, prev, dup := seen.add(s.data, key, start, s.fold); dup {
				if prev != "" && prev != key {
					return start, &ScanError{Err: ErrFoldedKey, Offset: start, Key: key, Prev: prev, Depth: depth}
				}
				return start, &ScanError{Err: ErrDuplicateKey, Offset: start, Key: key, Depth: depth}
			}
		}
		i = s.skip(end)
		if i >= len(s.data) || s.data[i] != ':' {
			return i, s.fail(ErrSyntax, i, depth)
		}
		if i, err = s.value(s.skip(i+1), depth); err != nil {
			return i, err
		}
		var done bool
		if i, done, err = s.separator(i, depth, '}'); err != nil || done {
			return i, err
		}
	}
}

// separator reads what follows a member or element: a comma (continue at the next item) or the
// closing bracket (done, i past it).
func (s *scanner) separator(i, depth int, closer byte) (int, bool, error) {
	i = s.skip(i)
	switch {
	case i >= len(s.data):
		return i, false, s.fail(ErrSyntax, i, depth)
	case s.data[i] == ',':
		return s.skip(i + 1), false, nil
	case s.data[i] == closer:
		return i + 1, true, nil
	}
	return i, false, s.fail(ErrSyntax, i, depth)
}

// str scans a string starting at the opening quote and returns the offset after the closing
// quote and whether it contained escapes. The fast path (quickStr) only tells whether the string
// is acceptable; any string it does not accept is scanned again byte by byte (strictStr), which
// finds the error and its offset.
func (s *scanner) str(i, depth int) (int, bool, error) {
	if s.trusted {
		return s.trustedStr(i)
	}
	// Most strings are short keys and values of plain ASCII: a table look-up a byte ends them
	// before the word loop would have started.
	d, j := s.data, i+1
	for end := min(i+16, len(d)); j < end && strPlain[d[j]]; j++ {
	}
	if j < len(d) && d[j] == '"' && j-i <= s.lim.MaxTokenBytes {
		return j + 1, false, nil
	}
	if end, escaped, ok := quickStr(d, j); ok && end-1-i <= s.lim.MaxTokenBytes {
		return end, escaped, nil
	}
	return s.strictStr(i, depth)
}

// quickStr is str for the common case, a string without a problem: it checks eight bytes at a
// time (stopByte) and each run of non-ASCII text, up to the next quote, backslash or control
// character, with one utf8.Valid. A multi-byte sequence never spans those ASCII bytes, so
// checking the runs one by one accepts exactly what checking the whole string would. ok is
// false for a string strictStr must refuse (or that has no closing quote). i is the offset of
// the first byte not known to be plain ASCII, after the opening quote.
func quickStr(d []byte, i int) (end int, escaped, ok bool) {
	for {
		j, high := stopByte(d, i)
		if high && !utf8.Valid(d[i:j]) {
			return 0, false, false
		}
		if j == len(d) {
			return 0, false, false
		}
		switch d[j] {
		case '"':
			return j + 1, escaped, true
		case '\\':
			n, ok := escapeLen(d[j:])
			if !ok {
				return 0, false, false
			}
			escaped, i = true, j+n
		default: // a control character
			return 0, false, false
		}
	}
}

// stopByte returns the offset of the first quote, backslash or control character at or after i
// (len(d) if none) and whether a byte of 0x80 or above comes before it.
func stopByte(d []byte, i int) (int, bool) {
	var high uint64
	// Most strings are short (keys, small values): one word before the loop for long ones.
	if i+8 <= len(d) {
		w := binary.LittleEndian.Uint64(d[i:])
		if m := stopMask(w); m != 0 {
			k := bits.TrailingZeros64(m) / 8
			return i + k, w&(1<<(8*k)-1)&hiBits != 0
		}
		high, i = w, i+8
	}
	for ; i+32 <= len(d); i += 32 {
		b := d[i : i+32]
		w, v := binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:])
		x, y := binary.LittleEndian.Uint64(b[16:]), binary.LittleEndian.Uint64(b[24:])
		if stopMask(w)|stopMask(v)|stopMask(x)|stopMask(y) != 0 {
			break
		}
		high |= w | v | x | y
	}
	for ; i+8 <= len(d); i += 8 {
		w := binary.LittleEndian.Uint64(d[i:])
		if m := stopMask(w); m != 0 {
			// The lowest flagged byte is always a real one (see stopMask); only the bytes
			// below it are part of the run.
			k := bits.TrailingZeros64(m) / 8
			high |= w & (1<<(8*k) - 1)
			return i + k, high&hiBits != 0
		}
		high |= w
	}
	for ; i < len(d); i++ {
		c := d[i]
		if c == '"' || c == '\\' || c < 0x20 {
			break
		}
		high |= uint64(c)
	}
	return i, high&hiBits != 0
}

const (
	loBits = 0x0101010101010101
	hiBits = 0x8080808080808080
)

// stopMask sets the top bit of each byte of w (little-endian) that is a quote, a backslash or
// below 0x20, and possibly of bytes above such a byte. (x - loBits*n) & ^x & hiBits, n <= 0x80,
// flags each byte of x below n that no borrow reaches, and a borrow starts only at a byte below
// n, itself flagged; a quote or a backslash is the byte that w ^ (loBits*c) turns into zero,
// which is below 1. So the mask is non-zero iff w holds one of those bytes, and its lowest
// flagged byte is the first of them. Bytes of 0x80 and above are never flagged (^x clears their
// top bit) and never borrow. TestStopMaskOneByte and TestStopMaskTwoBytes check it exhaustively.
func stopMask(w uint64) uint64 {
	q := w ^ (loBits * '"')
	b := w ^ (loBits * '\\')
	return ((w-loBits*0x20) & ^w | (q-loBits) & ^q | (b-loBits) & ^b) & hiBits
}

// strictStr is str one byte at a time, which stops at the first problem: the reference for
// quickStr, and what reports the offset of an error.
func (s *scanner) strictStr(i, depth int) (int, bool, error) {
	start := i
	i++
	escaped := false
	for i < len(s.data) {
		// Runs of plain ASCII, the bulk of a large argument, in a tight loop.
		for i < len(s.data) && strPlain[s.data[i]] {
			i++
		}
		if i == len(s.data) {
			break
		}
		c := s.data[i]
		switch {
		case c == '"':
			if i-start > s.lim.MaxTokenBytes {
				return i, escaped, s.fail(ErrTooLong, start, depth)
			}
			return i + 1, escaped, nil
		case c == '\\':
			n, ok := escapeLen(s.data[i:])
			if !ok {
				return i, escaped, s.fail(ErrSyntax, i, depth)
			}
			escaped = true
			i += n
		case c < 0x20:
			return i, escaped, s.fail(ErrSyntax, i, depth)
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(s.data[i:])
			if r == utf8.RuneError && size <= 1 {
				return i, escaped, s.fail(ErrSyntax, i, depth)
			}
			i += size
		}
	}
	return i, escaped, s.fail(ErrSyntax, i, depth)
}

// strPlain marks the bytes a string holds as they are: printable ASCII but the quote and the
// backslash.
var strPlain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// trustedStr is trustedEnd that also tells whether the string has escapes, for a key.
func (s *scanner) trustedStr(i int) (int, bool, error) {
	end, err := s.trustedEnd(i)
	if err != nil {
		return end, false, err
	}
	return end, bytes.IndexByte(s.data[i+1:end-1], '\\') >= 0, nil
}

// trustedEnd skips a string already validated by Scan: it only looks for the closing quote, a
// quote not escaped by an odd run of backslashes, since Members walks the same bytes again for
// every level it reads. bytes.IndexByte finds it many bytes at a time. A value's escapes do not
// matter to a walk, so they are not looked for (a second pass over a long string).
func (s *scanner) trustedEnd(i int) (int, error) {
	d := s.data
	// Short strings (most keys and values) end within a few bytes: a plain loop is cheaper there
	// than a call.
	for j, end := i+1, min(i+17, len(d)); j < end; j++ {
		switch d[j] {
		case '"':
			return j + 1, nil
		case '\\':
			end = 0 // leave it to the loop below
		}
	}
	if end, ok := stringEnd(d, i); ok {
		return end, nil
	}
	return len(d), s.fail(ErrSyntax, len(d), 0)
}

// StringEnd returns the offset after the JSON string that starts at the quote at b[i], in text
// already scanned (Scan): the first quote after it that no odd run of backslashes escapes.
// bytes.IndexByte finds quotes many bytes at a time, since a string may be megabytes of text.
// Without a closing quote it returns len(b).
func StringEnd(b []byte, i int) int {
	end, _ := stringEnd(b, i)
	return end
}

// stringEnd is StringEnd that also tells whether the string was closed.
func stringEnd(b []byte, i int) (int, bool) {
	for j := i + 1; j < len(b); {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			break
		}
		q := j + k
		n := 0
		for p := q - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return q + 1, true
		}
		j = q + 1
	}
	return len(b), false
}

func escapeLen(b []byte) (int, bool) {
	if len(b) < 2 {
		return 0, false
	}
	switch b[1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2, true
	case 'u':
		if len(b) < 6 {
			return 0, false
		}
		for _, h := range b[2:6] {
			if !isHex(h) {
				return 0, false
			}
		}
		return 6, true
	}
	return 0, false
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func (s *scanner) number(i, depth int) (int, error) {
	start := i
	if s.data[i] == '-' {
		i++
	}
	switch {
	case i < len(s.data) && s.data[i] == '0':
		i++
	case i < len(s.data) && s.data[i] >= '1' && s.data[i] <= '9':
		i = s.digits(i)
	default:
		return i, s.fail(ErrSyntax, i, depth)
	}
	if i < len(s.data) && s.data[i] == '.' {
		j := s.digits(i + 1)
		if j == i+1 {
			return j, s.fail(ErrSyntax, j, depth)
		}
		i = j
	}
	if i < len(s.data) && (s.data[i] == 'e' || s.data[i] == 'E') {
		i++
		if i < len(s.data) && (s.data[i] == '+' || s.data[i] == '-') {
			i++
		}
		j := s.digits(i)
		if j == i {
			return j, s.fail(ErrSyntax, j, depth)
		}
		i = j
	}
	if i-start > s.lim.MaxTokenBytes {
		return i, s.fail(ErrTooLong, start, depth)
	}
	return i, nil
}

func (s *scanner) digits(i int) int {
	for i < len(s.data) && s.data[i] >= '0' && s.data[i] <= '9' {
		i++
	}
	return i
}

// keySet detects duplicate keys in one object. Small objects compare linearly without
// allocating; larger ones switch to a set of the keys' hashes (of the folded form when folding),
// each with where its first key lies in the text, so that a key costs the set a map slot however
// long it is, not two strings: one object of short keys filling a 4 MiB body held 40 to 60 MiB
// in them while it was read. A hash met again is checked against the earlier key itself, read
// again from the text, so that only equal keys are duplicates.
type keySet struct {
	small [smallObjectKeyScanMax]seenKey
	n     int
	big   map[uint64]int    // hash of a map key (exact or folded) → offset of its first key's quote
	clash map[string]string // map keys whose hash a different earlier key has → the key as sent
	seed  maphash.Seed
	buf   []byte // the map key being added
}

// seenKey is a key of a small object: escapes decoded, and the offset of its opening quote.
type seenKey struct {
	key []byte
	off int
}

// unescapeKey decodes the escapes of a key (the raw bytes between the quotes), so that "a" and
// "\u0061" are the same key.
func unescapeKey(raw []byte) []byte {
	var dec string
	if err := json.Unmarshal(append(append([]byte{'"'}, raw...), '"'), &dec); err != nil {
		return raw
	}
	return []byte(dec)
}

// keyAt is the key whose opening quote is at data[off], escapes decoded.
func keyAt(data []byte, off int) []byte {
	raw := data[off+1 : StringEnd(data, off)-1]
	if bytes.IndexByte(raw, '\\') >= 0 {
		return unescapeKey(raw)
	}
	return raw
}

// appendMapKey appends what key is told apart by: itself, or with fold its folded form.
func appendMapKey(dst, key []byte, fold bool) []byte {
	if fold {
		return AppendFoldKey(dst, key)
	}
	return append(dst, key...)
}

// add records key (escapes decoded), whose opening quote is at data[off], and reports whether it
// was already present: exactly, or with fold also under folding, in which case prev is the
// earlier spelling.
func (k *keySet) add(data, key []byte, off int, fold bool) (dupKey, prev string, dup bool) {
	if k.big == nil {
		for _, p := range k.small[:k.n] {
			if bytes.Equal(p.key, key) || (fold && FoldEqual(p.key, key)) {
				return string(key), string(p.key), true
			}
		}
		if k.n < len(k.small) {
			k.small[k.n] = seenKey{key: key, off: off}
			k.n++
			return "", "", false
		}
		k.seed, k.big = maphash.MakeSeed(), make(map[uint64]int, 4*len(k.small))
		for _, p := range k.small[:k.n] {
			k.insert(data, p.key, p.off, fold) // told apart already: none is a duplicate
		}
	}
	return k.insert(data, key, off, fold)
}

// insert is add for a set that has switched to hashes.
func (k *keySet) insert(data, key []byte, off int, fold bool) (dupKey, prev string, dup bool) {
	k.buf = appendMapKey(k.buf[:0], key, fold)
	h := maphash.Bytes(k.seed, k.buf)
	first, ok := k.big[h]
	if !ok {
		k.big[h] = off
		return "", "", false
	}
	if p := keyAt(data, first); bytes.Equal(appendMapKey(nil, p, fold), k.buf) {
		return string(key), string(p), true
	}
	if k.clash == nil {
		k.clash = map[string]string{}
	}
	mk := string(k.buf)
	if p, ok := k.clash[mk]; ok {
		return string(key), p, true
	}
	k.clash[mk] = string(key)
	return "", "", false
}

// quoteForMessage renders s for an error message: quoted, control characters escaped, and cut
// short so a hostile key cannot flood a response.
func quoteForMessage(s string) string {
	const max = 64
	if len(s) > max {
		s = s[:max] + "…"
	}
	b, _ := json.Marshal(s)
	return string(b)
}
