package mcptest

import (
	"io"
	"net/http"
	"strings"
	"sync/atomic"
)

// KeepAlives is a client transport ([WithRoundTripper]) that signals on Seen each SSE
// keep-alive comment (": keep-alive") the response to a POST carries once After is set: a test
// sets After when the wait whose comments it counts begins. The responses to GETs are not
// read: a client's GET stream has keep-alives of its own.
type KeepAlives struct {
	After atomic.Bool
	Seen  chan struct{}
}

// NewKeepAlives returns a KeepAlives that buffers up to 64 signals (more are dropped).
func NewKeepAlives() *KeepAlives {
	return &KeepAlives{Seen: make(chan struct{}, 64)}
}

// RoundTrip sends r and reads the response's body for comments as the client reads it.
func (k *KeepAlives) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil && r.Method == http.MethodPost && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		resp.Body = &keepAliveBody{ReadCloser: resp.Body, k: k}
	}
	return resp, err
}

// keepAliveBody reads a response body for KeepAlives, line by line as it arrives.
type keepAliveBody struct {
	io.ReadCloser
	k    *KeepAlives
	line []byte
}

func (b *keepAliveBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	for _, c := range p[:n] {
		if c != '\n' {
			b.line = append(b.line, c)
			continue
		}
		if strings.HasPrefix(string(b.line), ": keep-alive") && b.k.After.Load() {
			select {
			case b.k.Seen <- struct{}{}:
			default:
			}
		}
		b.line = b.line[:0]
	}
	return n, err
}
