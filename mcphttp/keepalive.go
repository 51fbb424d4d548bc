package mcphttp

import (
	"net/http"
	"time"
)

// DefaultSSEKeepAlive is how long a response may stay silent before the gateway writes an SSE
// comment: well under the 60 s idle timeout common in load balancers and ingress proxies.
const DefaultSSEKeepAlive = 15 * time.Second

// armKeepAlive starts the keep-alive timer for a forwarded call or a listen. When it fires on a
// response that has not started, the response becomes an SSE stream (clients accept either,
// docs/protocol.md §2.1), so a long tool call is not cut off by a proxy waiting for the first byte.
func (x *request) armKeepAlive() {
	if x.s.cfg.SSEKeepAlive <= 0 {
		return
	}
	x.out.mu.Lock()
	defer x.out.mu.Unlock()
	if !x.out.done {
		x.out.ka = time.AfterFunc(x.s.cfg.SSEKeepAlive, x.keepAliveTick)
	}
}

var keepAliveComment = []byte(": keep-alive\n\n")

func (x *request) keepAliveTick() {
	x.out.mu.Lock()
	defer x.out.mu.Unlock()
	if x.out.done {
		return
	}
	if !x.out.sse {
		x.startSSE()
	}
	x.writeDeadline(len(keepAliveComment))
	if x.write(keepAliveComment) != nil {
		return
	}
	if err := http.NewResponseController(x.w).Flush(); err != nil {
		x.writeFailed(err)
		return
	}
	x.out.ka.Reset(x.s.cfg.SSEKeepAlive)
}

// stopKeepAlive disarms the timer for good; after it returns nothing writes concurrently with
// the handler.
func (x *request) stopKeepAlive() {
	x.out.mu.Lock()
	defer x.out.mu.Unlock()
	x.stopKeepAliveLocked()
}

func (x *request) stopKeepAliveLocked() {
	x.out.done = true
	if x.out.ka != nil {
		x.out.ka.Stop()
	}
}
