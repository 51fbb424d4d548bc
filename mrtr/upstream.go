package mrtr

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
)

const (
	fieldRequestState   = "requestState"
	fieldInputResponses = "inputResponses"
)

// WrapUpstream rewrites a backend's input_required result for the client:
// the backend's requestState (if any) goes into a sealed KindUpstream state
// carrying st's binding (Issuer, Subject, Upstream, Method, Name, ArgsDigest,
// Confirmed), and the result's requestState is replaced by that token, or
// added when the backend sent none so the retry is still routed and checked
// (spec §3, "route MRTR retries by name"). Every other byte of the result,
// inputRequests and unknown keys included, is kept as the backend sent it.
// The caller decides that the result is input_required.
func (c *Codec) WrapUpstream(result json.RawMessage, st State) (json.RawMessage, error) {
	obj, err := scanObject(result, fieldRequestState)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUpstreamResult, err)
	}
	st.Kind = KindUpstream
	st.UpstreamState, st.HasUpstreamState = "", false
	if m := obj.find(fieldRequestState); m != nil {
		// The backend's state is opaque: it is kept as the literal its JSON spelt, quotes and
		// escapes included, never decoded, so a lone surrogate escape (\ud800), which decoding
		// turns into U+FFFD, or any other spelling goes back to the backend byte for byte.
		// scanObject has already checked the value is well-formed JSON.
		v := m.value(result)
		if v[0] != '"' {
			return nil, fmt.Errorf("%w: requestState is not a string", ErrUpstreamResult)
		}
		st.UpstreamState, st.HasUpstreamState = string(v), true
	}
	tok, err := c.Seal(st)
	if err != nil {
		return nil, err
	}
	// Sealed tokens use only the URL-safe alphabet: no JSON escaping needed.
	return obj.set(result, fieldRequestState, []byte(`"`+tok+`"`)), nil
}

// RetryParams returns the params to forward to the backend for a retry whose
// requestState opened as st. For KindUpstream the requestState becomes the
// backend's original (or is removed when it sent none) and inputResponses,
// which answer the backend, are kept. For the gateway's own rounds (KindConfirm,
// KindApproval) both requestState and inputResponses are removed: they
// answered the gateway, not the backend, and anything else a client put there
// would reach the backend unseen by the person who confirmed the call.
// Everything else is kept byte for byte.
func RetryParams(params json.RawMessage, st *State) (json.RawMessage, error) {
	obj, err := scanObject(params, fieldRequestState, fieldInputResponses)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidParams, err)
	}
	if st.Kind == KindUpstream && st.HasUpstreamState {
		// UpstreamState is the literal the backend sent (WrapUpstream): it goes back unchanged.
		return obj.set(params, fieldRequestState, []byte(st.UpstreamState)), nil
	}
	out := obj.remove(params, fieldRequestState)
	if st.Kind == KindConfirm || st.Kind == KindApproval {
		// Offsets shifted; rescan the edited params.
		if obj, err = scanObject(out, fieldInputResponses); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidParams, err)
		}
		out = obj.remove(out, fieldInputResponses)
	}
	return out, nil
}

// span locates one member of a JSON object by byte offsets.
type span struct {
	key                            string
	keyStart, valueStart, valueEnd int
}

func (m *span) value(b []byte) []byte { return b[m.valueStart:m.valueEnd] }

// object is the member layout of a top-level JSON object.
type object struct {
	open    int // offset of '{'
	members []span
}

var errNotObject = errors.New("not a single JSON object")

// scanObject records where each member of the JSON object in b sits. Keys in
// unique must not repeat: parsers disagree on which duplicate wins.
func scanObject(b []byte, unique ...string) (*object, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errNotObject
	}
	obj := &object{open: int(dec.InputOffset()) - 1}
	for dec.More() {
		prev := int(dec.InputOffset())
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		if slices.Contains(unique, key) && obj.find(key) != nil {
			return nil, fmt.Errorf("duplicate %q", key)
		}
		m := span{key: key, keyStart: prev + bytes.IndexByte(b[prev:], '"')}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		m.valueEnd = int(dec.InputOffset())
		m.valueStart = m.valueEnd - len(raw)
		obj.members = append(obj.members, m)
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errNotObject
	}
	return obj, nil
}

func (o *object) find(key string) *span {
	for i := range o.members {
		if o.members[i].key == key {
			return &o.members[i]
		}
	}
	return nil
}

// set returns b with key's value replaced by value, or the member appended.
func (o *object) set(b []byte, key string, value []byte) []byte {
	if m := o.find(key); m != nil {
		return slices.Concat(b[:m.valueStart], value, b[m.valueEnd:])
	}
	member := append(appendString(nil, key), ':')
	member = append(member, value...)
	if len(o.members) == 0 {
		return slices.Concat(b[:o.open+1], member, b[o.open+1:])
	}
	last := o.members[len(o.members)-1].valueEnd
	return slices.Concat(b[:last], []byte{','}, member, b[last:])
}

// remove returns b without key's member (and one adjoining comma).
func (o *object) remove(b []byte, key string) []byte {
	i := slices.IndexFunc(o.members, func(m span) bool { return m.key == key })
	switch {
	case i < 0:
		return b
	case i+1 < len(o.members):
		return slices.Concat(b[:o.members[i].keyStart], b[o.members[i+1].keyStart:])
	case i > 0:
		return slices.Concat(b[:o.members[i-1].valueEnd], b[o.members[i].valueEnd:])
	}
	return slices.Concat(b[:o.members[i].keyStart], b[o.members[i].valueEnd:])
}
