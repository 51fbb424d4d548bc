package mcphttp

import (
	"context"
	"net/http"
	"runtime"
	"time"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

// largeBody is the body size from which the strict decode (stage decode) takes a turn at the decode
// gate. Below it a decode costs microseconds; a body of several megabytes costs milliseconds of
// CPU, before authentication, so many of them at once could take every core from the callers
// whose requests are small.
const largeBody = 256 << 10

// decodeWait bounds how long a large body waits for its turn before it is refused as overload.
const decodeWait = 10 * time.Second

// decodeGate lets at most half the cores (and at least one) decode large bodies at once, so the
// others stay free for everyone else whatever a client sends.
type decodeGate struct {
	slots chan struct{}
	wait  time.Duration
}

func newDecodeGate() *decodeGate {
	return &decodeGate{slots: make(chan struct{}, max(1, runtime.GOMAXPROCS(0)/2)), wait: decodeWait}
}

var errDecodeBusy = &Error{Status: http.StatusServiceUnavailable, Outcome: outcomeRateLimited,
	RPC:    jsonrpc.NewError(jsonrpc.CodeUnavailable, "Too many large requests being decoded; retry later"),
	Header: http.Header{"Retry-After": {"1"}}}

// enter waits for a turn to decode a body of size bytes; leave must be called once when it
// succeeded. Small bodies do not wait.
func (g *decodeGate) enter(ctx context.Context, size int) (leave func(), err error) {
	if size < largeBody {
		return func() {}, nil
	}
	select {
	case g.slots <- struct{}{}:
		return g.leave, nil
	default:
	}
	t := time.NewTimer(g.wait)
	defer t.Stop()
	select {
	case g.slots <- struct{}{}:
		return g.leave, nil
	case <-t.C:
		return nil, errDecodeBusy
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (g *decodeGate) leave() { <-g.slots }
