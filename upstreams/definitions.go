package upstreams

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/mcp-gateway/gateway/upstreams/names"
)

// Definitions is what one backend itself publishes about its tools, prompts and resource
// templates, as it sent them: backend-side names, members untouched.
type Definitions struct {
	// Instructions are the server instructions from server/discover (or a legacy backend's
	// initialize result); "" when it has none.
	Instructions string
	// Tools, Prompts and ResourceTemplates are the items of the complete lists, in the
	// backend's order. A list the backend does not implement (-32601) is empty.
	Tools, Prompts, ResourceTemplates []json.RawMessage
	// UIResources are the MCP Apps UI resources (ui:// URIs) of its resources list, in its
	// order: the only resources pinned (pins.KindUIResource).
	UIResources []json.RawMessage
}

// Definitions fetches upstream's instructions and its complete tools, prompts and resource
// template lists directly from the backend: no list cache, no renaming, no filtering, no
// caller token (a backend that needs token exchange fails). It is for operator tooling such as
// tool-definition pinning, not for the request path.
func (r *Registry) Definitions(ctx context.Context, upstream string) (*Definitions, error) {
	b, err := r.backend(upstream)
	if err != nil {
		return nil, err
	}
	d, err := b.Discover(ctx)
	if err != nil {
		return nil, err
	}
	out := &Definitions{Instructions: d.Instructions}
	for _, l := range []struct {
		method string
		dst    *[]json.RawMessage
	}{
		{MethodToolsList, &out.Tools},
		{MethodPromptsList, &out.Prompts},
		{MethodResourceTemplates, &out.ResourceTemplates},
		{MethodResourcesList, &out.UIResources},
	} {
		if *l.dst, err = r.catalog.RawList(ctx, b, l.method); err != nil {
			return nil, err
		}
	}
	out.UIResources = slices.DeleteFunc(out.UIResources, func(item json.RawMessage) bool {
		var r struct {
			URI string `json:"uri"`
		}
		if json.Unmarshal(item, &r) != nil {
			return false // kept: pinning it reports why it cannot be pinned
		}
		n, err := names.NormalizeResource(r.URI)
		return err != nil || !names.IsUIResource(n)
	})
	return out, nil
}
