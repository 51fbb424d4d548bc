package pins

// MCP Apps (SEP-1865): a resources/read result may carry _meta.ui on each content item, and the
// draft specification has hosts prefer it over the listed resource's. The listed entry is pinned
// (KindUIResource); UIReadPin gives what a read's content items are held to.

// UIReadPin is what the content items of a read of one pinned UI resource are held to.
type UIReadPin struct {
	// Meta is the RFC 8785 form of the _meta.ui the resource is pinned with.
	Meta []byte
	// Action is what a content item whose _meta.ui differs gets (ClassUIChanged's action).
	Action Action
}

// UIReadPin returns the pin a read of backend's UI resource uri is held to: nil when the
// resource is not pinned, or pinned without a _meta.ui (then a content item's _meta.ui is not
// judged). Like Pinned, it never asks the store.
func (g *Guard) UIReadPin(backend, uri string) *UIReadPin {
	d := g.Pinned(backend, KindUIResource, uri)
	if d == nil {
		return nil
	}
	obj, _ := d.Value.(map[string]any)
	meta, _ := obj["_meta"].(map[string]any)
	ui, ok := meta["ui"]
	if !ok {
		return nil
	}
	b, err := Encode(ui)
	if err != nil {
		return nil
	}
	return &UIReadPin{Meta: b, Action: g.cfg.ActionForClass(backend, ClassUIChanged)}
}

// SameUIMeta reports whether ui (a content item's _meta.ui as the backend sent it) is the pinned
// value, compared in RFC 8785 form: member order, whitespace and escapes do not count, a
// duplicate member or invalid UTF-8 never matches.
func (p *UIReadPin) SameUIMeta(ui []byte) bool {
	c, err := Canonicalize(ui)
	return err == nil && string(c) == string(p.Meta)
}
