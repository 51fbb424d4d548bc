package catalog

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/upstreams/backend"
	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
)

// RawList follows b's pagination of method (a list method) to the end, directly: no cache, no
// renaming, no filtering, no caller token. It returns the items as sent, for operator tooling
// (upstreams.Registry.Definitions, Probe), not for the request path. A list the backend does
// not implement (-32601) is empty. Its requests carry the _meta of the gateway's own lists
// (OwnListMeta).
func (c *Catalog) RawList(ctx context.Context, b *backend.Backend, method string) ([]json.RawMessage, error) {
	spec, _ := listSpecFor(method)
	ctx, cancel := context.WithTimeoutCause(ctx, b.Timeout(), wire.ErrCallTimeout)
	defer cancel()
	var items []json.RawMessage
	var cursor []byte
	for range maxListPages {
		body := appendListRequest(nil, method, c.OwnListMeta(), cursor)
		msg, err := b.RoundTrip(ctx, &backend.Request{Method: method, Body: body})
		if err != nil {
			return nil, err
		}
		if msg.Error != nil {
			if msg.Error.Code == jsonrpc.CodeMethodNotFound {
				return nil, nil
			}
			return nil, fmt.Errorf("%w: %s: %s answered error %d", wire.ErrBadResponse, b.Name(), method, msg.Error.Code)
		}
		var page map[string]json.RawMessage
		if err := json.Unmarshal(msg.Result, &page); err != nil {
			return nil, fmt.Errorf("%w: %s: %s result: %v", wire.ErrBadResponse, b.Name(), method, err)
		}
		var these []json.RawMessage
		if raw, ok := page[spec.key]; ok {
			if err := json.Unmarshal(raw, &these); err != nil {
				return nil, fmt.Errorf("%w: %s: %s result: %s: %v", wire.ErrBadResponse, b.Name(), method, spec.key, err)
			}
		}
		items = append(items, these...)
		next, more, err := nextCursor(page["nextCursor"])
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %s result: %v", wire.ErrBadResponse, b.Name(), method, err)
		}
		if !more {
			return items, nil
		}
		cursor = next
	}
	return nil, fmt.Errorf("%w: %s: %s has more than %d pages", wire.ErrBadResponse, b.Name(), method, maxListPages)
}
