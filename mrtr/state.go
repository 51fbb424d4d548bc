package mrtr

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"time"
)

// Kind says who originated an MRTR round trip.
type Kind uint8

const (
	// KindConfirm is a gateway-originated confirmation of a tool call.
	KindConfirm Kind = 1
	// KindUpstream wraps a backend's own input_required round trip.
	KindUpstream Kind = 2
	// KindApproval is a gateway confirmation the user gives out of band, on the gateway's
	// approval page (URL-mode elicitation), rather than in the client.
	KindApproval Kind = 3
)

// String returns "confirm", "upstream", "approval" or "unknown".
func (k Kind) String() string {
	switch k {
	case KindConfirm:
		return "confirm"
	case KindUpstream:
		return "upstream"
	case KindApproval:
		return "approval"
	}
	return "unknown"
}

// known reports whether k is one of the kinds a state may carry.
func (k Kind) known() bool { return k == KindConfirm || k == KindUpstream || k == KindApproval }

// Methods that may return input_required (spec §3).
const (
	MethodToolsCall     = "tools/call"
	MethodPromptsGet    = "prompts/get"
	MethodResourcesRead = "resources/read"
)

// State is the payload sealed into a requestState token.
//
// Encoding (compact binary, big-endian, no trailing bytes):
//
//	version(1)=2 | kind(1) | flags(1: bit0 Confirmed, bit1 has upstream state, bit2 ApprovedOnPage,
//	  bit3 upstream state is the backend's JSON literal, set when encoding its string would
//	  spell it otherwise; without it the decoded string)
//	| method(1: 1 tools/call, 2 prompts/get, 3 resources/read)
//	| expiry unix ms (8) | lifetime ms (4: expiry less the issue time) | nonce (16)
//	| args digest (32) | uvarint-length-prefixed: issuer, subject, upstream, name, upstream state
//
// Version 1, which earlier releases seal, has no lifetime: a state of that version opens
// with a zero Issued, until it expires.
type State struct {
	// Kind is KindConfirm or KindUpstream.
	Kind Kind
	// Issuer and Subject identify the principal the retry must come from.
	Issuer, Subject string
	// Upstream is the backend the call is routed to.
	Upstream string
	// Method is one of the Method* constants.
	Method string
	// Name is the client-facing (namespaced) tool or prompt name, or the
	// resource URI.
	Name string
	// ArgsDigest is Digest of the call's arguments.
	ArgsDigest [32]byte
	// Expiry is set by Codec.Seal; the state is rejected from this instant on.
	Expiry time.Time
	// Issued is set by Codec.Seal, by the clock of the replica that sealed the state: what
	// records guarding the state (its single use, the epoch guard) are timed from, since
	// replicas may run with different TTLs. Zero for a state sealed by an earlier release
	// (version 1), which did not carry it.
	Issued time.Time
	// Nonce is set by Codec.Seal (16 random bytes); it keys single use.
	Nonce [16]byte
	// UpstreamState is the backend's own requestState (KindUpstream only),
	// valid when HasUpstreamState is true: the JSON string literal exactly as
	// the backend's result spelt it, quotes and escapes included, so that it
	// goes back byte for byte. The client never sees it in clear.
	UpstreamState string
	// HasUpstreamState distinguishes an absent backend requestState from an
	// empty one, so the retry forwards exactly what the backend sent.
	HasUpstreamState bool
	// Confirmed records that the user already approved this call, so a
	// confirmed call whose backend then asks for input is not asked again.
	Confirmed bool
	// ApprovedOnPage, with Confirmed, records that the approval was given on
	// the gateway's approval page (KindApproval), which a client cannot
	// produce, rather than in a form the client answers: only such a state
	// continues a call whose rule says confirm: url.
	ApprovedOnPage bool
}

// SingleUse reports whether the gateway must consume the nonce before acting
// on this state: confirmations, and anything carrying an approval, since a
// replay would repeat an approved action without asking.
func (s *State) SingleUse() bool {
	return s.Kind == KindConfirm || s.Kind == KindApproval || s.Confirmed
}

const (
	// stateVersion is what Seal writes; stateVersion1, without the lifetime, what earlier
	// releases sealed, still opened during a rolling update (until such states expire).
	stateVersion    = 2
	stateVersion1   = 1
	flagConfirmed   = 1 << 0
	flagHasUpstream = 1 << 1
	flagApproved    = 1 << 2
	// flagRawUpstream marks an upstream state held as the backend's JSON literal. A state
	// sealed before it existed holds the decoded string, which unmarshal re-encodes, so a
	// round trip begun on an older gateway still completes on this one.
	flagRawUpstream  = 1 << 3
	stateFixedHeader = 4 + 8 + 4 + 16 + 32
	// stateFixedHeader1 is version 1's, without the lifetime.
	stateFixedHeader1 = stateFixedHeader - 4
)

var errDecode = errors.New("mrtr: undecodable state payload")

func methodCode(m string) byte {
	switch m {
	case MethodToolsCall:
		return 1
	case MethodPromptsGet:
		return 2
	case MethodResourcesRead:
		return 3
	}
	return 0
}

func methodName(c byte) string {
	switch c {
	case 1:
		return MethodToolsCall
	case 2:
		return MethodPromptsGet
	case 3:
		return MethodResourcesRead
	}
	return ""
}

func (s *State) marshal() ([]byte, error) {
	mc := methodCode(s.Method)
	life := s.Expiry.UnixMilli() - s.Issued.UnixMilli()
	if mc == 0 || !s.Kind.known() || life < 0 || life > math.MaxUint32 {
		return nil, ErrUnsealable
	}
	var flags byte
	if s.Confirmed {
		flags |= flagConfirmed
	}
	upstream := s.UpstreamState
	if s.HasUpstreamState {
		flags |= flagHasUpstream
		// A literal that encoding its string spells again is sealed as that string, the form
		// a replica of an earlier release opens, so that a round trip crosses a rolling update
		// either way; only a literal spelt otherwise (a lone surrogate escape, an escape of a
		// character that needs none) is sealed as written, with flagRawUpstream.
		if d, ok := plainLiteral(s.UpstreamState); ok {
			upstream = d
		} else {
			flags |= flagRawUpstream
		}
	}
	if s.ApprovedOnPage && s.Confirmed {
		flags |= flagApproved
	}
	n := stateFixedHeader + 5*binary.MaxVarintLen64 + len(s.Issuer) + len(s.Subject) +
		len(s.Upstream) + len(s.Name) + len(upstream)
	b := make([]byte, 0, n)
	b = append(b, stateVersion, byte(s.Kind), flags, mc)
	b = binary.BigEndian.AppendUint64(b, uint64(s.Expiry.UnixMilli()))
	b = binary.BigEndian.AppendUint32(b, uint32(life))
	b = append(b, s.Nonce[:]...)
	b = append(b, s.ArgsDigest[:]...)
	for _, f := range []string{s.Issuer, s.Subject, s.Upstream, s.Name, upstream} {
		b = binary.AppendUvarint(b, uint64(len(f)))
		b = append(b, f...)
	}
	return b, nil
}

// plainLiteral decodes the JSON string literal lit and reports whether encoding the string
// (appendString) spells lit again.
func plainLiteral(lit string) (string, bool) {
	var d string
	if json.Unmarshal([]byte(lit), &d) != nil || string(appendString(nil, d)) != lit {
		return "", false
	}
	return d, true
}

func (s *State) unmarshal(b []byte) error {
	header := stateFixedHeader
	if len(b) > 0 && b[0] == stateVersion1 {
		header = stateFixedHeader1
	}
	if len(b) < header || b[0] != stateVersion && b[0] != stateVersion1 {
		return errDecode
	}
	s.Kind = Kind(b[1])
	flags := b[2]
	s.Method = methodName(b[3])
	if !s.Kind.known() || s.Method == "" ||
		flags&^(flagConfirmed|flagHasUpstream|flagApproved|flagRawUpstream) != 0 ||
		flags&flagApproved != 0 && flags&flagConfirmed == 0 ||
		flags&flagRawUpstream != 0 && flags&flagHasUpstream == 0 {
		return errDecode
	}
	s.Confirmed = flags&flagConfirmed != 0
	s.HasUpstreamState = flags&flagHasUpstream != 0
	s.ApprovedOnPage = flags&flagApproved != 0
	s.Expiry = time.UnixMilli(int64(binary.BigEndian.Uint64(b[4:12]))).UTC()
	s.Issued = time.Time{}
	if header == stateFixedHeader {
		s.Issued = s.Expiry.Add(-time.Duration(binary.BigEndian.Uint32(b[12:16])) * time.Millisecond)
	}
	fixed := b[header-len(s.Nonce)-len(s.ArgsDigest) : header]
	copy(s.Nonce[:], fixed[:16])
	copy(s.ArgsDigest[:], fixed[16:])
	rest := b[header:]
	for _, f := range []*string{&s.Issuer, &s.Subject, &s.Upstream, &s.Name, &s.UpstreamState} {
		n, k := binary.Uvarint(rest)
		if k <= 0 || n > uint64(len(rest)-k) {
			return errDecode
		}
		*f = string(rest[k : k+int(n)])
		rest = rest[k+int(n):]
	}
	if len(rest) != 0 {
		return errDecode
	}
	if s.HasUpstreamState && flags&flagRawUpstream == 0 {
		s.UpstreamState = string(appendString(nil, s.UpstreamState))
	}
	return nil
}
