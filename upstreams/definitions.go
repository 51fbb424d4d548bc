package upstreams

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/upstreams/backend"
	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
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
	} {
		if *l.dst, err = r.rawList(ctx, b, l.method); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// gatewayMeta is the request _meta of the gateway's own list requests: the protocol version
// and no client capabilities, as in its server/discover request.
const gatewayMeta = `{"io.modelcontextprotocol/protocolVersion":"` + ProtocolVersion + `",` +
	`"io.modelcontextprotocol/clientCapabilities":{}}`

// rawList follows b's pagination of method to the end and returns its items as sent.
func (r *Registry) rawList(ctx context.Context, b *backend.Backend, method string) ([]json.RawMessage, error) {
	spec, _ := listSpecFor(method)
	ctx, cancel := context.WithTimeoutCause(ctx, b.Timeout(), wire.ErrCallTimeout)
	defer cancel()
	var items []json.RawMessage
	cursor, hasCursor := "", false
	for range maxListPages {
		body := appendListRequest(nil, method, json.RawMessage(gatewayMeta), cursor, hasCursor)
		msg, err := b.RoundTrip(ctx, &backend.Request{Method: method, Body: body})
		if err != nil {
			return nil, err
		}
		if msg.Error != nil {
			if msg.Error.Code == jsonrpc.CodeMethodNotFound {
				return nil, nil
			}
			return nil, fmt.Errorf("%w: %s: %s answered error %d", ErrBadResponse, b.Name(), method, msg.Error.Code)
		}
		var page map[string]json.RawMessage
		if err := json.Unmarshal(msg.Result, &page); err != nil {
			return nil, fmt.Errorf("%w: %s: %s result: %v", ErrBadResponse, b.Name(), method, err)
		}
		var these []json.RawMessage
		if raw, ok := page[spec.key]; ok {
			if err := json.Unmarshal(raw, &these); err != nil {
				return nil, fmt.Errorf("%w: %s: %s result: %s: %v", ErrBadResponse, b.Name(), method, spec.key, err)
			}
		}
		items = append(items, these...)
		next, more := "", false
		if raw, ok := page["nextCursor"]; ok {
			next, more = wire.JSONString(raw)
		}
		if !more {
			return items, nil
		}
		cursor, hasCursor = next, true
	}
	return nil, fmt.Errorf("%w: %s: %s has more than %d pages", ErrBadResponse, b.Name(), method, maxListPages)
}
