package pre2026

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcp-gateway/gateway/internal/legacysession"
)

// purposeAnswerID is the key-ring purpose of answer ids: an answer id never opens as a
// session id, a requestState or a cursor, and none of those opens as an answer id.
const purposeAnswerID = "mcp-gateway/legacy-reply/v1"

// purposeForwardedAnswer is the key-ring purpose of a client's answer on its way to another
// replica through the store's notices: what the client said crosses Redis sealed.
const purposeForwardedAnswer = "mcp-gateway/legacy-forwarded-answer/v1"

// maxForwardedAnswerBytes bounds a sealed forwarded answer: far above what one request body
// may carry (server.maxBodyBytes), which bounds the answer it holds.
const maxForwardedAnswerBytes = 256 << 20

// answerIDPrefix starts every id the edge gives an ask (a server→client request). The sealed token
// after it is visible ASCII, so the id is a JSON string that needs no escaping.
const answerIDPrefix = "g1."

// answerIDVersion is the first byte of a sealed answer id's plaintext; a future layout gets a
// new value and old ids stop opening.
const answerIDVersion = 1

// answerHeader is the fixed part of an answer id's plaintext: version, kind, the random r, the
// asking replica and the deadline (Unix milliseconds). The session binding follows it.
const answerHeader = 1 + 1 + 16 + 16 + 8

// maxBindingBytes bounds the session binding sealed into an answer id: a session key (24 hex
// characters), a separator and a principal (22 characters, or "anon").
const maxBindingBytes = 128

// answerClaims is what a sealed answer id says: which replica waits for it, under which random
// r, until when, for which session, and which kind of request it answers (for the metric of an
// answer that finds nobody waiting).
type answerClaims struct {
	kind     askKind
	r        [16]byte
	replica  [16]byte
	deadline time.Time
	binding  string
}

// sessionBinding is what ties an ask to the client it was sent to: the session's
// routing key and its principal. The principal is part of it because every session-less request
// has the same (zero) key: an id shown to one caller must never be accepted from another.
func sessionBinding(sess *legacysession.Session) string {
	return sess.Key() + "\x00" + sess.Principal
}

// mintAnswerID seals c into the id of one server→client request. Only this purpose's sealer
// opens it, so an answer id never opens as a session id, a requestState or a cursor.
func (b *asks) mintAnswerID(c *answerClaims) (string, error) {
	if len(c.binding) > maxBindingBytes {
		return "", fmt.Errorf("asks: session binding of %d bytes exceeds %d", len(c.binding), maxBindingBytes)
	}
	pt := make([]byte, answerHeader, answerHeader+len(c.binding))
	pt[0] = answerIDVersion
	pt[1] = byte(c.kind)
	copy(pt[2:18], c.r[:])
	copy(pt[18:34], c.replica[:])
	binary.BigEndian.PutUint64(pt[34:42], uint64(c.deadline.UnixMilli()))
	pt = append(pt, c.binding...)
	tok, err := b.sealer.Seal(pt)
	if err != nil {
		return "", fmt.Errorf("asks: sealing an answer id: %w", err)
	}
	return answerIDPrefix + tok, nil
}

// errAnswerID is why an id does not open; callers turn every case into errBadAnswer, since a
// client must learn nothing about why its id was refused.
var errAnswerID = errors.New("asks: not a valid answer id")

// openAnswerID authenticates and decodes an answer id. It does not check the deadline or the
// binding: callers compare them with their own clock and session.
func (b *asks) openAnswerID(id string) (*answerClaims, error) {
	tok, ok := strings.CutPrefix(id, answerIDPrefix)
	if !ok {
		return nil, errAnswerID
	}
	pt, err := b.sealer.Open(tok)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errAnswerID, err)
	}
	if len(pt) < answerHeader || pt[0] != answerIDVersion || len(pt)-answerHeader > maxBindingBytes ||
		!askKind(pt[1]).valid() {
		return nil, errAnswerID
	}
	c := &answerClaims{
		kind:     askKind(pt[1]),
		deadline: time.UnixMilli(int64(binary.BigEndian.Uint64(pt[34:42]))),
		binding:  string(pt[answerHeader:]),
	}
	copy(c.r[:], pt[2:18])
	copy(c.replica[:], pt[18:34])
	return c, nil
}

// answerIDOf returns the id of a client's answer, the JSON string the edge gave its ask.
// Anything else (a number, an escaped string, which no minted id ever needs) is not an answer.
func answerIDOf(raw json.RawMessage) (string, bool) {
	if len(raw) < 2+len(answerIDPrefix) || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	s := string(raw[1 : len(raw)-1])
	if strings.ContainsAny(s, "\\\"") || !strings.HasPrefix(s, answerIDPrefix) {
		return "", false
	}
	return s, true
}

// random16 draws 128 random bits: an answer's r, a replica's name, a forwarded answer's
// correlation id. crypto/rand never fails (it stops the program rather than return
// predictable bytes), so there is no error to handle.
func random16() [16]byte {
	var r [16]byte
	_, _ = rand.Read(r[:])
	return r
}
