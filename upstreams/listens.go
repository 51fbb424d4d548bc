package upstreams

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/mcp-gateway/gateway/upstreams/backend"
	"github.com/mcp-gateway/gateway/upstreams/listen"
)

// subscriptions/listen is package listen's; these names and methods keep the Registry's callers
// to one import.

// Listens shares backend listen streams between identical client listens (see listen.Listens).
type Listens = listen.Listens

// ListenCaller is what a listen knows of the client it serves (see listen.Caller).
type ListenCaller = listen.Caller

// Why a notification a backend sent on a listen stream was not relayed to a client (see
// listen.DropUnsubscribed).
const (
	DropUnsubscribed = listen.DropUnsubscribed
	DropHidden       = listen.DropHidden
	DropCoalesced    = listen.DropCoalesced
	DropOverflow     = listen.DropOverflow
)

// DropCauses returns the Drop constants.
func DropCauses() []string { return listen.DropCauses() }

// CodeListenOverflow is the JSON-RPC error code that ends a listen whose client did not keep
// up.
const CodeListenOverflow = listen.CodeOverflow

// ListenOverflow is the error a listen ends with when its client let too many notifications
// wait (see listen.Overflow).
var ListenOverflow = listen.Overflow

// ListenOverBudget is the error a listen ends with when the notifications waiting for its
// caller's listens did not fit their share of the budget of result bytes (see
// listen.OverBudget).
var ListenOverBudget = listen.OverBudget

// NewListens returns a Listens for the backends of r.
func NewListens(r *Registry) *Listens { return listen.New(r.listens) }

// Listen serves subscriptions/listen on backend streams of its own; see listen.Source.Listen.
// NewListens shares the streams between identical listens.
func (r *Registry) Listen(ctx context.Context, id, params json.RawMessage, hdr http.Header, visible func(Kind, Target) bool, emit func(msg []byte) error) error {
	return r.listens.Listen(ctx, id, params, hdr, visible, emit)
}

// listenSource is what listens need of r's backends (a function, not a method: Registry's
// methods are its API).
func listenSource(r *Registry) *listen.Source {
	return &listen.Source{Backends: r.backends, Names: r.ns, Log: r.log, Now: r.now, Results: r.results,
		Discover: func(ctx context.Context, hdr http.Header) []*backend.Discovered {
			ds, _ := r.discoverAll(ctx, hdr)
			return ds
		},
		// A list_changed first drops the backend's cached lists on this replica, then goes to the
		// other replicas (Options.OnListChanged), at most once a noticeWindow (changeNotices).
		Changed: func(upstream, method string) {
			r.catalog.Changed(upstream, method)
			if r.notices != nil {
				r.notices.notify(upstream, method)
			}
		},
	}
}
