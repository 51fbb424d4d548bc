package upstreams

import (
	"fmt"
	"strings"
)

// Kind is the kind of a namespaced item.
type Kind int

// The kinds of items the gateway namespaces.
const (
	// KindTool is a tool name (tools/list, tools/call).
	KindTool Kind = iota + 1
	// KindPrompt is a prompt name (prompts/list, prompts/get).
	KindPrompt
	// KindResource is a resource URI or URI template (resources/*, completion ref/resource).
	KindResource
)

// String names the kind for logs.
func (k Kind) String() string {
	switch k {
	case KindTool:
		return "tool"
	case KindPrompt:
		return "prompt"
	case KindResource:
		return "resource"
	}
	return "unknown"
}

// Target is an item as the backend knows it.
type Target struct {
	// Upstream is the configured backend name.
	Upstream string
	// Name is the backend-side tool or prompt name, or the backend-side resource URI.
	Name string
}

// uriJoin separates the backend name from the backend's URI in a namespaced URI.
//
// A namespaced URI is "<backend>+<backend URI>": file:///a of backend fs becomes fs+file:///a.
// Backend names start with a letter and hold only [a-z0-9-], so for a backend URI with a scheme
// the result is still a valid URI whose scheme is "fs+file" (RFC 3986 §3.1 allows "+" in a
// scheme), the owner is the text before the first "+", and the backend URI is everything after
// it, byte for byte. Templates (uriTemplate) are prefixed the same way.
const uriJoin = "+"

// namespace maps between client-facing and backend-side names.
type namespace struct {
	sep      string
	noPrefix bool
	only     string          // the single backend, when noPrefix
	known    map[string]bool // configured backend names
}

func newNamespace(cfg *Config) *namespace {
	ns := &namespace{sep: cfg.separator(), noPrefix: cfg.Namespace.NoPrefix, known: map[string]bool{}}
	for _, u := range cfg.Upstreams {
		ns.known[u.Name] = true
	}
	if ns.noPrefix {
		ns.only = cfg.Upstreams[0].Name
	}
	return ns
}

// Resolve maps a client-facing name or URI to the backend that owns it and the backend-side name.
// A name that does not decode to a configured backend is ErrUnknownName: a client must never reach
// one backend by naming another's item.
func (r *Registry) Resolve(kind Kind, namespaced string) (Target, error) {
	return r.ns.resolve(kind, namespaced)
}

// Namespaced is the inverse of Resolve: the client-facing name of a backend-side item.
func (r *Registry) Namespaced(kind Kind, t Target) string { return r.ns.name(kind, t) }

// A resource URI (or URI template) resolves to its normal form (NormalizeResource): policy
// decides on it and the backend receives it, so the two cannot read different resources. One
// that cannot be normalised is ErrBadURI.
func (ns *namespace) resolve(kind Kind, s string) (Target, error) {
	var t Target
	switch {
	case ns.noPrefix:
		if s == "" {
			return Target{}, fmt.Errorf("%w: empty %s name", ErrUnknownName, kind)
		}
		t = Target{Upstream: ns.only, Name: s}
	case kind == KindResource:
		up, rest, ok := strings.Cut(s, uriJoin)
		if !ok || rest == "" || !ns.known[up] {
			return Target{}, fmt.Errorf("%w: resource URI names no configured upstream", ErrUnknownName)
		}
		t = Target{Upstream: up, Name: rest}
	default:
		return ns.resolveName(kind, s)
	}
	if kind == KindResource {
		n, err := NormalizeResource(t.Name)
		if err != nil {
			return Target{}, err
		}
		t.Name = n
	}
	return t, nil
}

// resolveName splits at the first separator that follows a configured backend name, so tool
// names that themselves contain the separator stay whole. Config validation rules out backend
// names for which two splits could both match.
func (ns *namespace) resolveName(kind Kind, s string) (Target, error) {
	for i, n := 0, 0; n < maxSplitTries; n++ {
		j := strings.Index(s[i:], ns.sep)
		if j < 0 {
			break
		}
		at := i + j
		if ns.known[s[:at]] && at+len(ns.sep) < len(s) {
			return Target{Upstream: s[:at], Name: s[at+len(ns.sep):]}, nil
		}
		i = at + 1
		if i >= len(s) {
			break
		}
	}
	return Target{}, fmt.Errorf("%w: %s name names no configured upstream", ErrUnknownName, kind)
}

// maxSplitTries bounds the search for a backend prefix: backend names are at most 63 bytes, so no
// later separator can end one.
const maxSplitTries = 64

func (ns *namespace) name(kind Kind, t Target) string {
	if ns.noPrefix {
		return t.Name
	}
	if kind == KindResource {
		return t.Upstream + uriJoin + t.Name
	}
	return t.Upstream + ns.sep + t.Name
}
