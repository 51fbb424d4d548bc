package catalog

import (
	"context"
	"crypto/sha256"
	"strings"
	"time"

	"github.com/mcp-gateway/gateway/internal/resuri"
	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
	"github.com/mcp-gateway/gateway/upstreams/names"
)

// The spelling of a resource URI toward its backend.
//
// The gateway authorises a resource URI on its normal form (internal/resuri), which decodes
// percent-encoded UTF-8: "mem://x/%C3%A9" and "mem://x/é" are one resource to policy. Backends
// do not agree: the Go SDK server looks a read up by the exact string it listed, the TypeScript
// SDK server by the URI's percent-encoded form. So a read (and a completion of a template) is
// forwarded in the spelling the backend itself listed, when exactly one item of its list has the
// requested normal form, and otherwise in the normal form's URI form (resuri.URIForm:
// non-ASCII percent-encoded). Either way the spelling's normal form is the one authorised: a
// listed spelling is indexed under its own normal form, and the URI form reads back as it.
// Two items with one normal form (a backend listing both "%C3%A9" and "é") cannot both be
// told apart by policy, so neither spelling is chosen: the URI form is sent, and the backend
// serves whichever it serves under it, a resource the caller was authorised to read by that
// same normal form.
//
// A normal form that is all ASCII is its own URI form and is forwarded as it is, without
// consulting a list.

// resourcesListIndex and templatesListIndex are the listSpec.index of resources/list and
// resources/templates/list.
const (
	resourcesListIndex = 3
	templatesListIndex = 4
)

// spellsResources reports whether a list of this listSpec.index is indexed for spellings.
func spellsResources(list byte) bool { return list == resourcesListIndex || list == templatesListIndex }

// collidedSpelling stands in part.spellings for a normal form listed under two spellings. No
// URI holds a NUL (resuri refuses it).
const collidedSpelling = "\x00"

// addSpelling records that the backend listed the item of normal form n as listed.
func (p *part) addSpelling(n, listed string) {
	if resuri.IsASCII(n) || !resuri.SpellsAs(listed, n) {
		// An ASCII normal form is sent as it is; a spelling that differs in more than its
		// non-ASCII text (a dot segment, case, an ASCII escape) is never sent (resuri.SpellsAs).
		return
	}
	if p.spellings == nil {
		p.spellings = make(map[string]string)
	}
	if prev, ok := p.spellings[n]; ok && prev != listed {
		// Listed twice alike counts once; two spellings of one normal form, neither.
		p.spellings[n] = collidedSpelling
		return
	}
	p.spellings[n] = listed
}

// buildSpellIndex indexes the spellings of p, a resources or templates list: for each normal
// form listed by exactly one spelling, that spelling, kept only where it is not the normal
// form's URI form, which is what an unindexed normal form is sent as anyway.
func buildSpellIndex(p *part, gen uint64, now time.Time, from [sha256.Size]byte) *headerIndex {
	e := &headerIndex{from: from, n: len(p.items), gen: gen, private: p.private,
		expires: now.Add(max(time.Duration(p.ttlMs)*time.Millisecond, minHeaderIndexTTL)), noCaller: p.absent && p.private}
	for n, s := range p.spellings {
		if s == collidedSpelling || s == resuri.URIForm(n) {
			continue
		}
		if e.spell == nil {
			e.spell = make(map[string]string)
		}
		e.spell[n] = s
	}
	return e
}

// ResourceSpelling returns the spelling in which target's resource URI (or, when it holds a
// '{', URI template) is sent to its backend: the one its backend's resources/list (or
// resources/templates/list) shows the caller for that normal form, else its URI form. The list
// is the one held for the caller, else one fetched now (q.Fetch), as for PromptListed; a list
// that cannot be had leaves the URI form, since any spelling returned names what was
// authorised and the choice only decides whether the backend finds it.
func (c *Catalog) ResourceSpelling(ctx context.Context, q *ToolHeaderQuery, target names.Target) string {
	n := target.Name
	if resuri.IsASCII(n) {
		return n
	}
	b, err := c.backend(target.Upstream)
	if err != nil {
		return resuri.URIForm(n)
	}
	method := wire.MethodResourcesList
	if strings.IndexByte(n, '{') >= 0 {
		method = wire.MethodResourceTemplates
	}
	spec, _ := listSpecFor(method)
	idx, err := c.listIndex(ctx, q, b, spec)
	if err != nil || idx == nil {
		return resuri.URIForm(n)
	}
	if s, ok := idx.spell[n]; ok {
		return s
	}
	return resuri.URIForm(n)
}
