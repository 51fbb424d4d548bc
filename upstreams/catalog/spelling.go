package catalog

import (
	"context"
	"crypto/sha256"
	"strings"
	"time"
	"unsafe"

	"github.com/mcp-gateway/gateway/internal/resuri"
	"github.com/mcp-gateway/gateway/upstreams/backend"
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
// A backend's own spelling of a listed item may differ from the normal form in more than its
// non-ASCII text (MEM://Items/a, mem://items/%7Ea, a UI resource's ui://Widget/view): it is
// sent all the same, as the backend finds the item by it, when it names the normal form to
// every reader (resuri.ReadsAs: no dot segment). A template (a completion's ref) is named by
// its text likewise.

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

// addSpelling records that the backend listed the item of normal form n as listed: a
// spelling that names n to every reader (resuri.ReadsAs: it normalises to n and holds no dot
// segment), since the backend's own spelling of the item is what it finds the item by. One
// that holds a dot segment is never sent: a backend that resolves none reads another path.
// The normal form itself is not recorded where it is its own URI form (plain ASCII, and any
// template), which is what is sent without a record anyway; buildSpellIndex tells such an
// item listed beside another spelling of it by counting the items of its normal form.
func (p *part) addSpelling(n, listed string) {
	if listed == n && unrecorded(n) {
		return
	}
	if !resuri.ReadsAs(listed, n) {
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

// unrecorded reports whether n's own spelling is one addSpelling does not record.
func unrecorded(n string) bool { return resuri.IsASCII(n) || strings.IndexByte(n, '{') >= 0 }

// buildSpellIndex indexes the spellings of p, a resources or templates list: for each normal
// form listed by exactly one spelling, that spelling, kept only where it is not the normal
// form's URI form, which is what an unindexed normal form is sent as anyway. A resources list's
// index also holds every normal form it lists (tools), so that a listed resource is sent as
// listed rather than respelt under a template; a templates list's holds its templates when
// one of them respells a URI (spelledTemplates).
func buildSpellIndex(p *part, gen uint64, now time.Time, from [sha256.Size]byte) *headerIndex {
	e := &headerIndex{from: from, n: len(p.items), gen: gen, private: p.private,
		expires: now.Add(max(time.Duration(p.ttlMs)*time.Millisecond, minHeaderIndexTTL)), noCaller: p.absent && p.private}
	var shared map[string]int // items of a normal form whose own spelling is not recorded
	for n, s := range p.spellings {
		if s == collidedSpelling || s == resuri.URIForm(n) {
			continue
		}
		if unrecorded(n) {
			if shared == nil {
				shared = sharedNames(p.items, p.spellings)
			}
			if shared[n] > 1 {
				continue // listed beside its normal form, or twice: neither spelling
			}
		}
		if e.spell == nil {
			e.spell = make(map[string]string)
		}
		e.spell[n] = s
	}
	if len(p.templates) > 0 {
		e.templates = spelledTemplates(p.templates)
	} else if len(p.items) > 0 {
		e.tools = make(map[string]*ToolHeaders, len(p.items))
		for i := range p.items {
			e.tools[p.items[i].target.Name] = noToolHeaders
		}
	}
	return e
}

// sharedNames counts the items of each normal form spellings records a spelling of.
func sharedNames(items []listItem, spellings map[string]string) map[string]int {
	out := make(map[string]int)
	for i := range items {
		if n := items[i].target.Name; spellings[n] != "" {
			out[n]++
		}
	}
	return out
}

// A URI under a template.
//
// A backend that matches a read against its own template text (the Go SDK server does,
// literal text byte for byte) finds no URI under a template it listed spelt otherwise than
// the normal form: MEM://Items/%7e{id} is mem://items/~{id} to policy, and mem://items/~1 is
// not an expansion of MEM://Items/%7e{id} to the backend. So a read of a URI no listed
// resource has is sent respelt under the template it falls under, the literal text as the
// backend listed it and the rest as the URI the gateway checked has it (resuri.Respell), when
// that reads back as exactly that URI (resuri.ReadsAs). A URI that falls under two templates
// respelt differently is sent as before: which template the backend serves it by is the
// backend's to say, and either is the same resource to policy.

// spelledTemplate is a template a backend listed: its normal form and its spelling as listed.
type spelledTemplate struct{ normal, listed string }

// spelledTemplates returns ts when one of them respells a URI under it, that is, is listed
// otherwise than its normal form's URI form; else nil, and every URI is sent as before.
func spelledTemplates(ts []spelledTemplate) []spelledTemplate {
	for _, t := range ts {
		if t.listed != resuri.URIForm(t.normal) {
			return ts
		}
	}
	return nil
}

// templatesBytes estimates the memory ts keeps alive: its spellings, when not shared with
// the normal forms.
func templatesBytes(ts []spelledTemplate) int64 {
	n := int64(cap(ts)) * int64(unsafe.Sizeof(spelledTemplate{}))
	for _, t := range ts {
		n += int64(len(t.normal))
		if t.listed != t.normal {
			n += int64(len(t.listed))
		}
	}
	return n
}

// respell returns the URI u (a normal form) respelt under the template of ts it falls under,
// false when it falls under none, when two respell it differently, or when the respelling is
// what u is sent as anyway (its URI form).
func respell(ts []spelledTemplate, u string) (string, bool) {
	var out string
	for _, t := range ts {
		s, ok := resuri.Respell(t.listed, t.normal, u)
		switch {
		case !ok:
			if resuri.MayExpand(t.normal, u) {
				return "", false // under a template it cannot be respelt for
			}
		case out == "":
			out = s
		case out != s:
			return "", false
		}
	}
	if out == "" || out == resuri.URIForm(u) {
		return "", false
	}
	return out, true
}

// ResourceSpelling returns the spelling in which target's resource URI (or, when it holds a
// '{', URI template) is sent to its backend:
//
//   - for a template, the one spelling its backend's resources/templates/list shows the caller
//     for that normal form, whatever it differs in: a template is named by its text;
//   - for a URI that its backend's resources/list shows, the one spelling the list shows the
//     caller for that normal form, when it names it to every reader (addSpelling);
//   - for any other URI, its respelling under the template of the backend's
//     resources/templates/list that it falls under, when there is one (see above);
//   - else its URI form, which for a plain-ASCII URI is the URI itself.
//
// Each list is the one held for the caller, else one fetched now (q.Fetch), as for
// PromptListed; a list that cannot be had leaves the spelling the others give, since any
// spelling returned names what was authorised and the choice only decides whether the backend
// finds it.
func (c *Catalog) ResourceSpelling(ctx context.Context, q *ToolHeaderQuery, target names.Target) string {
	n := target.Name
	b, err := c.backend(target.Upstream)
	if err != nil {
		return resuri.URIForm(n)
	}
	if strings.IndexByte(n, '{') >= 0 {
		return c.listedSpelling(ctx, q, b, wire.MethodResourceTemplates, n)
	}
	var respelt string
	var under bool
	if tmpl := c.spellIndex(ctx, q, b, wire.MethodResourceTemplates); tmpl != nil {
		respelt, under = respell(tmpl.templates, n)
	}
	if !under {
		return c.listedSpelling(ctx, q, b, wire.MethodResourcesList, n)
	}
	if res := c.spellIndex(ctx, q, b, wire.MethodResourcesList); res != nil {
		if s, ok := res.spell[n]; ok {
			return s
		}
		if res.tools[n] != nil {
			return resuri.URIForm(n) // a listed resource: sent as before, not respelt
		}
	}
	return respelt
}

// listedSpelling is the spelling method's list shows for the normal form n, else its URI form.
func (c *Catalog) listedSpelling(ctx context.Context, q *ToolHeaderQuery, b *backend.Backend, method, n string) string {
	if idx := c.spellIndex(ctx, q, b, method); idx != nil {
		if s, ok := idx.spell[n]; ok {
			return s
		}
	}
	return resuri.URIForm(n)
}

// spellListRetry is how long a backend whose resources or templates list could not be had for
// spelling a URI is not asked for it again, for that caller and version: a read would otherwise
// wait for a failing list request (up to the backend's timeout) each time. The reads in between
// go as with a list that cannot be had (ResourceSpelling), which is what they are sent as after
// a failed fetch anyway; a list_changed from the backend ends the wait.
const spellListRetry = 5 * time.Second

// spellIndex returns the index of b's resources or templates list (method) for the caller, nil
// when it cannot be had: a failure to have it is remembered for spellListRetry (in the store of
// the failures ResolveAppName remembers, apps.go, keyed apart by list), not asked again.
func (c *Catalog) spellIndex(ctx context.Context, q *ToolHeaderQuery, b *backend.Backend, method string) *headerIndex {
	spec, _ := listSpecFor(method)
	key := partKey{upstream: b.Name(), list: spec.index, version: orVersion(q.ProtocolVersion),
		caller: privateKey(b, q.CacheKey, q.SubjectToken, q.SubjectKey)}
	gen := c.cache.generation(partKey{upstream: key.upstream, list: key.list, version: key.version})
	if c.appFailures.get(key, gen, c.now()) != nil {
		return nil
	}
	idx, err := c.listIndex(ctx, q, b, spec)
	if err != nil {
		if !isContextErr(err) && ctx.Err() == nil {
			c.appFailures.put(key, q.CacheKey, listFailure{err: err, gen: gen, until: c.now().Add(spellListRetry)})
		}
		return nil
	}
	return idx
}
