package names

import (
	"errors"
	"strings"

	"github.com/mcp-gateway/gateway/internal/resuri"
	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
)

// ErrBadURI: a resource URI (or URI template) a client sent is ambiguous or malformed (see
// internal/resuri); it is refused with -32602 and never forwarded.
var ErrBadURI = errors.New("upstreams: ambiguous or malformed resource URI")

// NormalizeResource returns the normal form of a backend-side resource URI, or of a URI
// template when s holds a '{' (a URI never does: '{' is refused). It is what policy sees and
// what the backend receives; an error wraps ErrBadURI and says why, without quoting s.
func NormalizeResource(s string) (string, error) {
	var n string
	var err error
	if strings.IndexByte(s, '{') >= 0 {
		n, err = resuri.NormalizeTemplate(s)
	} else {
		n, err = resuri.Normalize(s)
	}
	if err != nil {
		var re *resuri.Error
		if errors.As(err, &re) {
			return "", &badURIError{reason: re.Reason}
		}
		return "", &badURIError{reason: "malformed"}
	}
	return n, nil
}

type badURIError struct{ reason string }

func (e *badURIError) Error() string { return ErrBadURI.Error() + ": " + e.reason }
func (e *badURIError) Unwrap() error { return ErrBadURI }

// ClientResource maps a backend URI of upstream (in a result, an error, a notification) to
// what the client may see: the backend URI's normal form and its client URI, or false when the
// URI cannot be normalised or visible (the caller's policy; nil allows all) hides it. Whatever is
// under such a URI is not relayed.
func (ns *Space) ClientResource(upstream, backendURI string, visible func(Kind, Target) bool) (Target, Namespaced, bool) {
	n, err := resuri.Normalize(backendURI)
	if err != nil {
		return Target{}, "", false
	}
	t := Target{Upstream: upstream, Name: n}
	if visible != nil && !visible(KindResource, t) {
		return Target{}, "", false
	}
	return t, ns.Name(KindResource, t), true
}

// filterArray appends arr to dst keeping only the elements for which fn returns keep, each
// replaced by repl when repl is not nil. dropped counts the elements left out.
func filterArray(dst, arr []byte, fn func(elem []byte) (repl []byte, keep bool)) (out []byte, dropped int, err error) {
	dst = append(dst, '[')
	n := 0
	err = wire.ForEachElem(arr, func(elem []byte, _ int) error {
		repl, keep := fn(elem)
		if !keep {
			dropped++
			return nil
		}
		if repl == nil {
			repl = elem
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, repl...)
		n++
		return nil
	})
	return append(dst, ']'), dropped, err
}

// Listed is the backend-side name under which a listed item is filtered and shown: for a
// resource or template its normal form, false when it has none (the item is left out, since
// the client could not read it through the gateway).
func Listed(kind Kind, name string) (string, bool) {
	if kind != KindResource {
		return name, true
	}
	n, err := NormalizeResource(name)
	return n, err == nil
}
