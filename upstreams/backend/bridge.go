package backend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/mcp-gateway/gateway/internal/bodyread"
	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
	"github.com/mcp-gateway/gateway/upstreams/legacy"
)

// Defaults of the per-caller sessions of a token-exchange legacy backend (AuthConfig).
const (
	// DefaultMaxLegacySessions bounds the callers that hold a session with one such backend in
	// one replica (one session each).
	DefaultMaxLegacySessions = legacy.DefaultMaxSessions
	// DefaultLegacySessionIdle is how long a caller's session may go unused before it is closed.
	DefaultLegacySessionIdle = legacy.DefaultSessionIdle
)

// newBridge gives b its bridge to a pre-2026 backend; the bridge is used only once the backend
// is known (or pinned) to speak a pre-2026 revision.
func (b *Backend) newBridge(auth *AuthConfig) *legacy.Bridge {
	return legacy.New(bridgeBackend{b}, legacy.Config{
		Offer:      b.legacy.offer,
		ClientInfo: b.legacy.client,
		MaxCallers: auth.MaxLegacySessions,
		CallerIdle: auth.LegacySessionIdle,
		Apps:       b.env.Apps,
		CheckInit: func(init *legacy.InitResult) error {
			if _, err := capsOf(init); err != nil {
				return errorf(wire.ErrBadResponse, b, "initialize result: %v", err)
			}
			return nil
		},
		Log: b.env.Log,
		Now: b.env.Now,
	})
}

// bridgeBackend is a backend as the bridge sees it (legacy.Backend).
type bridgeBackend struct{ b *Backend }

func (x bridgeBackend) Name() string           { return x.b.name }
func (x bridgeBackend) URL() string            { return x.b.url }
func (x bridgeBackend) Header() http.Header    { return x.b.header }
func (x bridgeBackend) Client() *http.Client   { return x.b.client }
func (x bridgeBackend) Timeout() time.Duration { return x.b.timeout }
func (x bridgeBackend) MaxBytes() int64        { return x.b.maxBytes }
func (x bridgeBackend) Results() *bodyread.Budget {
	return x.b.env.Results
}
func (x bridgeBackend) HasCredentials() bool { return x.b.creds != nil }

func (x bridgeBackend) Authorization(ctx context.Context, subject, key string, fromCaller bool) (string, error) {
	return x.b.creds.authorization(ctx, subject, key, fromCaller)
}

func (x bridgeBackend) Failed(method string, forCaller bool, start time.Time, err error) {
	// The handshake of the gateway's own session carries nothing a caller chose. That of a
	// caller's session carries the caller's exchanged token, and the caller's request that
	// needed it fails too, charged to that caller: the handshake then counts for the shared
	// circuit only when nothing was sent, like a request made for several callers.
	charge := chargeNone
	if forCaller {
		charge = chargeShared
	}
	x.b.record(method, charge, outcomeOf(err), start, err, true)
}

// capsOf decodes the capabilities of a legacy InitializeResult into the set the gateway merges,
// which drops core tasks and anything else legacy-only.
func capsOf(init *legacy.InitResult) (Caps, error) {
	var caps Caps
	if len(init.Capabilities) == 0 {
		return caps, nil
	}
	err := json.Unmarshal(init.Capabilities, &caps)
	return caps, err
}

// discoveredFrom synthesizes a legacy backend's server/discover contribution from its
// InitializeResult.
func discoveredFrom(b *Backend, init *legacy.InitResult) *Discovered {
	caps, _ := capsOf(init) // checked by the handshake (CheckInit)
	return &Discovered{Caps: caps, Instructions: keptInstructions(b, init.Instructions), TTL: MaxDiscoverTTL}
}

// ReadErr classifies an error met while reading a response of b, charged to results, outside a
// Stream (a listen stream's events, say): running out of results (resultBudgetErr) is the
// gateway's overload, ErrResultBudget, which counts against the backend for neither its circuit
// nor its health; the rest is the backend's (wire.ReadErr). A function, not a method: Backend's
// methods are its own state's.
func ReadErr(ctx context.Context, b *Backend, results *bodyread.Budget, err error) error {
	if errors.Is(err, bodyread.ErrBudget) {
		return resultBudgetErr(results, err)
	}
	return wire.ReadErr(ctx, b.name, b.maxBytes, err)
}

// resultBudgetErr is ErrResultBudget for err, a refusal (bodyread.ErrBudget) of results, the
// budget (or share of it) the response was read against, whose bound it names.
func resultBudgetErr(results *bodyread.Budget, err error) error {
	return fmt.Errorf("%w (limit %d bytes): %w", ErrResultBudget, results.Max(), err)
}
