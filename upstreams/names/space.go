// Package names maps between the names clients see and the names backends know: the backend name
// (Target.Upstream, "github"), the namespaced name a client sees (Namespaced,
// "github__create_issue"), and the backend-side name the backend itself knows (Target.Name,
// "create_issue"). Resource URIs likewise: the client URI "notes+note://1" is Namespaced, the
// backend URI "note://1" a Target.Name, always in its normal form (NormalizeResource).
//
// It also rewrites what crosses the gateway: the routed name in a request's params
// (RewriteParams) and the resource URIs in a backend's results, errors and notifications
// (Rewriter), so that what the gateway checks is what the backend acts on and what the client
// reads is in its namespaced form.
package names

import (
	"errors"
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

// Target is an item as the backend knows it. Its fields stay plain strings: policy, metrics,
// pins and the confirmation bindings outside upstreams take them as such.
type Target struct {
	// Upstream is the backend name: the configured name of the backend that owns the item.
	Upstream string
	// Name is the backend-side name: the tool or prompt name, or the resource URI (in normal
	// form), as the backend knows it.
	Name string
}

// Namespaced is a tool or prompt name, or a resource URI or URI template, as clients see it:
// the backend name and the backend-side name joined (Space.Name), or the backend-side name as it
// is when one backend is served without prefixes. It is a type of its own so that it cannot be
// passed where a backend-side name is meant, or the other way round.
type Namespaced string

// ErrUnknownName: a namespaced tool or prompt name or resource URI names no configured backend.
var ErrUnknownName = errors.New("upstreams: unknown name")

// uriJoin separates the backend name from the backend's URI in a namespaced URI.
//
// A namespaced URI is "<backend>+<backend URI>": file:///a of backend fs becomes fs+file:///a.
// Backend names start with a letter and hold only [a-z0-9-], so for a backend URI with a scheme
// the result is still a valid URI whose scheme is "fs+file" (RFC 3986 §3.1 allows "+" in a
// scheme), the owner is the text before the first "+", and the backend URI is everything after
// it, byte for byte. Templates (uriTemplate) are prefixed the same way.
//
// MCP Apps' UI resources are the exception (uiScheme).
const uriJoin = "+"

// uiScheme starts the URI of an MCP App's UI resource (SEP-1865, ext-apps specification
// 2026-01-26: the URI "MUST use the ui:// URI scheme"; hosts check it before rendering). A
// prefixed scheme (weather+ui://…) would break every host that follows the specification, so
// a UI resource keeps its scheme and the backend name becomes the first segment after it:
// ui://dashboard/view of backend weather is ui://weather/dashboard/view. The owner is the text
// between "ui://" and the next "/", which a backend name never holds, and the backend URI is
// "ui://" and everything after that "/", byte for byte. A UI resource has this one client
// name: weather+ui://… names nothing.
const uiScheme = "ui://"

// Space maps between namespaced and backend-side names for one set of configured backends.
// It is read only once built, so safe for concurrent use.
type Space struct {
	sep      string
	noPrefix bool
	only     string          // the single backend, when noPrefix
	known    map[string]bool // configured backend names
}

// New returns the Space of the backends named upstreams: their names joined to the backend-side
// names with sep, or, with noPrefix, the one backend's names passed through unchanged. The
// caller has validated the names, the separator and their combination (no two splits of one
// name can both match).
func New(sep string, noPrefix bool, upstreams []string) *Space {
	ns := &Space{sep: sep, noPrefix: noPrefix, known: make(map[string]bool, len(upstreams))}
	for _, u := range upstreams {
		ns.known[u] = true
	}
	if noPrefix && len(upstreams) > 0 {
		ns.only = upstreams[0]
	}
	return ns
}

// Resolve maps a namespaced name or URI to the backend that owns it and the backend-side name.
// A name that does not decode to a configured backend is ErrUnknownName: a client must never
// reach one backend by naming another's item. A resource URI (or URI template) resolves to its
// normal form (NormalizeResource): policy decides on it and the backend receives it (its
// non-ASCII text perhaps percent-encoded, backend.Call.Spelling), so the two cannot read
// different resources. One that cannot be normalised is ErrBadURI.
func (ns *Space) Resolve(kind Kind, n Namespaced) (Target, error) {
	s := string(n)
	var t Target
	switch {
	case ns.noPrefix:
		if s == "" {
			return Target{}, fmt.Errorf("%w: empty %s name", ErrUnknownName, kind)
		}
		t = Target{Upstream: ns.only, Name: s}
	case kind == KindResource:
		up, rest, ok := ns.splitURI(s)
		if !ok {
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
		if !ns.noPrefix && IsUIResource(n) != strings.HasPrefix(s, uiScheme) {
			// One client name per resource: a UI resource only as ui://<backend>/…, and
			// ui://<backend>/… only for a UI resource.
			return Target{}, fmt.Errorf("%w: resource URI names no configured upstream", ErrUnknownName)
		}
		t.Name = n
	}
	return t, nil
}

// splitURI splits a namespaced resource URI (or template) into its backend name and the
// backend's URI: ui://<backend>/<rest> for a UI resource (uiScheme), <backend>+<URI> for any
// other. False when it names no configured backend.
func (ns *Space) splitURI(s string) (upstream, backendURI string, ok bool) {
	if rest, isUI := strings.CutPrefix(s, uiScheme); isUI {
		up, path, found := strings.Cut(rest, "/")
		if !found || !ns.known[up] {
			return "", "", false
		}
		return up, uiScheme + path, true
	}
	up, rest, found := strings.Cut(s, uriJoin)
	if !found || rest == "" || !ns.known[up] {
		return "", "", false
	}
	return up, rest, true
}

// IsUIResource reports whether a backend URI (or template) in normal form names an MCP App's UI
// resource: it starts with ui://, the scheme the normal form lower-cases.
func IsUIResource(uri string) bool { return strings.HasPrefix(uri, uiScheme) }

// resolveName splits at the first separator that follows a configured backend name, so tool
// names that themselves contain the separator stay whole. Config validation rules out backend
// names for which two splits could both match.
func (ns *Space) resolveName(kind Kind, s string) (Target, error) {
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

// Name is the inverse of Resolve: the namespaced name of a backend-side item.
func (ns *Space) Name(kind Kind, t Target) Namespaced {
	if ns.noPrefix {
		return Namespaced(t.Name)
	}
	if kind == KindResource {
		if rest, isUI := strings.CutPrefix(t.Name, uiScheme); isUI {
			return Namespaced(uiScheme + t.Upstream + "/" + rest)
		}
		return Namespaced(t.Upstream + uriJoin + t.Name)
	}
	return Namespaced(t.Upstream + ns.sep + t.Name)
}
