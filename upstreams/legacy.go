package upstreams

// Bridging to pre-2026 backends (digest §7): toward a 2025-11-25, 2025-06-18 or 2025-03-26
// backend the gateway is a legacy client with a small pool of sessions, while the Registry API
// stays the same, so a 2026-07-28 client cannot tell the eras apart.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

// era is what the gateway knows about a backend's protocol generation.
type era int

const (
	eraUnknown era = iota
	eraModern
	eraLegacy
)

// legacyState is one backend's era and, for a legacy backend, its session pool.
type legacyState struct {
	// pinned is the configured revision; empty under auto.
	pinned string
	// offer is the protocolVersion sent in initialize.
	offer string
	// client is the clientInfo sent in initialize.
	client json.RawMessage
	mu     sync.Mutex
	era    era
	pool   sessionPool
}

func newLegacyState(protocol, userAgent string) *legacyState {
	s := &legacyState{offer: protocol20251125, client: clientInfo(userAgent)}
	switch protocol {
	case "", ProtocolAuto:
	case ProtocolVersion:
		s.pinned, s.era = protocol, eraModern
	default:
		s.pinned, s.offer, s.era = protocol, protocol, eraLegacy
	}
	s.pool.init()
	return s
}

// clientInfo turns a User-Agent such as "mcp-gateway/1.4.0" into the initialize clientInfo.
func clientInfo(userAgent string) json.RawMessage {
	name, version, ok := strings.Cut(userAgent, "/")
	if !ok || version == "" {
		version = "unknown"
	}
	out, _ := json.Marshal(map[string]string{"name": name, "version": version})
	return out
}

func (s *legacyState) known() era {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.era
}

func (s *legacyState) set(e era) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pinned == "" {
		s.era = e
	}
}

// forget drops a detected era after a failure, so the next request probes again (digest §7:
// re-probe on failure). A pinned era is never forgotten.
func (s *legacyState) forget() { s.set(eraUnknown) }

// isLegacy reports the backend's era, probing it when unknown. d is the backend's
// server/discover answer when the probe just fetched one from a modern backend.
func (r *Registry) isLegacy(ctx context.Context, b *backend) (legacy bool, d *discovered, err error) {
	switch b.legacy.known() {
	case eraModern:
		return false, nil, nil
	case eraLegacy:
		return true, nil, nil
	}
	e, d, err := r.probeEra(ctx, b)
	if err != nil {
		return false, nil, err
	}
	if e == eraUnknown {
		return false, nil, nil // this request goes out as modern; the next one probes again
	}
	b.legacy.set(e)
	if d != nil {
		b.disc.store(d, r.now())
	}
	if e == eraLegacy {
		r.log.Info("upstream speaks a pre-2026 revision; bridging", "upstream", b.name)
	}
	return e == eraLegacy, d, nil
}

// maxProbeEvents bounds the SSE events read while waiting for the probe's response.
const maxProbeEvents = 100

// probeEra sends a modern server/discover and classifies the answer (digest §7 "Probe"). Only
// a failure to get any answer (refused, timeout) is an error. An answer that says nothing about
// the era (garbage, 401, 5xx) leaves it unknown: the request then goes out as modern, uncached,
// so the backend's own answer to it is what the caller sees.
func (r *Registry) probeEra(ctx context.Context, b *backend) (era, *discovered, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, b.timeout, errCallTimeout)
	defer cancel()
	resp, err := r.send(ctx, b, &outgoing{method: MethodDiscover, body: []byte(discoverRequest), probe: true})
	if err != nil {
		return eraUnknown, nil, err
	}
	defer resp.Body.Close()
	m, err := readProbeResponse(b, resp)
	e := classifyProbe(resp.StatusCode, m, err)
	if e != eraModern || m.Result == nil {
		return e, nil, nil
	}
	d, err := parseDiscover(b, m.Result)
	if err != nil {
		return eraUnknown, nil, nil
	}
	return eraModern, d, nil
}

// classifyProbe: a result (a DiscoverResult naming 2026-07-28, or anything but a
// DiscoverResult of legacy versions), or an error code from the range the
// 2026 revision reserves (-32020..-32099), means modern; a result whose supportedVersions lacks
// 2026-07-28, a -32022 whose data.supported lacks it, or a 400, 404 or 405 without a modern
// body means legacy.
func classifyProbe(status int, m *jsonrpc.Message, err error) era {
	switch {
	case err != nil && legacyStatus(status):
		return eraLegacy
	case err != nil:
		return eraUnknown
	case m.Error == nil && hasMember(m.Result, "supportedVersions") && !supportsModern(m.Result, "supportedVersions"):
		return eraLegacy // e.g. the go-sdk's stateful server: a DiscoverResult of legacy versions
	case m.Error == nil:
		return eraModern // a modern request answered without a session is not a legacy server
	case m.Error.Code == jsonrpc.CodeUnsupportedProtocolVersion && !supportsModern(m.Error.Data, "supported"):
		return eraLegacy
	case m.Error.Code <= -32020 && m.Error.Code >= -32099:
		return eraModern
	case legacyStatus(status):
		return eraLegacy // e.g. a TypeScript SDK server: 400 "Server not initialized", -32000
	case status/100 == 2:
		return eraModern
	}
	return eraUnknown
}

// legacyStatus reports the statuses a legacy server gives a request it cannot place: 400
// (no session), 404 (unknown method or path), 405.
func legacyStatus(status int) bool {
	return status == http.StatusBadRequest || status == http.StatusNotFound || status == http.StatusMethodNotAllowed
}

// readProbeResponse returns the JSON-RPC response of the probe, from a JSON body or the first
// response event of an SSE body.
func readProbeResponse(b *backend, resp *http.Response) (*jsonrpc.Message, error) {
	isJSON, isSSE := mediaType(resp.Header.Get("Content-Type"))
	switch {
	case isJSON:
		var buf bytes.Buffer
		if err := readBody(&buf, resp.Body, b.maxBytes); err != nil {
			return nil, err
		}
		return decodeResponse(b.name, resp.StatusCode, buf.Bytes(), b.maxBytes)
	case isSSE && resp.StatusCode/100 == 2:
		sse := newSSEReader(resp.Body, int(b.maxBytes))
		for range maxProbeEvents {
			data, err := sse.next()
			if err != nil {
				return nil, err
			}
			if m, err := jsonrpc.DecodeMessage(data, jsonLimits(b.maxBytes)); err == nil && m.IsResponse() {
				return m, nil
			}
		}
	}
	return nil, statusError(b.name, resp.StatusCode, "server/discover probe got no JSON-RPC response")
}

// hasMember reports whether the JSON object obj has the member key.
func hasMember(obj json.RawMessage, key string) bool {
	found := false
	if len(obj) > 0 && obj[0] == '{' {
		_ = jsonrpc.Members(obj, func(k, _ []byte) error {
			found = found || string(k) == key
			return nil
		})
	}
	return found
}

// supportsModern reports whether the string array member key of obj names ProtocolVersion.
func supportsModern(obj json.RawMessage, key string) bool {
	if len(obj) == 0 || obj[0] != '{' {
		return false
	}
	var versions []string
	_ = jsonrpc.Members(obj, func(k, v []byte) error {
		if string(k) == key {
			_ = json.Unmarshal(v, &versions)
		}
		return nil
	})
	return slices.Contains(versions, ProtocolVersion)
}

// legacyDiscover answers fetchDiscover for a legacy backend from its InitializeResult (digest
// §7: synthesize server/discover). A health probe also pings a session so a dead backend shows
// as down. handled is false for a modern backend whose discover the caller must still fetch.
func (r *Registry) legacyDiscover(ctx context.Context, b *backend, probe bool) (d *discovered, handled bool, err error) {
	legacy, d, err := r.isLegacy(ctx, b)
	switch {
	case err != nil:
		b.health.down(r.now(), err)
		return nil, true, err
	case d != nil:
		b.health.up(r.now)
		return d, true, nil
	case !legacy:
		return nil, false, nil
	}
	if probe {
		if _, err := r.roundTrip(ctx, b, &outgoing{method: methodPing, body: []byte(pingRequest), probe: true}); err != nil {
			return nil, true, err
		}
	}
	init, err := b.legacy.pool.initResult(ctx, r, b)
	if err != nil {
		return nil, true, err
	}
	b.health.up(r.now)
	return init.discovered(), true, nil
}

// errLegacySkip marks a legacy backend that cannot take part in an operation (a GET stream
// refused with 405); the caller leaves it out quietly.
var errLegacySkip = errors.New("not supported by this legacy backend")

// drainClose reads and discards a small remainder of a body so its connection can be reused.
func drainClose(body io.ReadCloser) {
	_, _ = io.CopyN(io.Discard, body, 4<<10)
	body.Close()
}

// errorf builds an error wrapping sentinel with the backend name.
func errorf(sentinel error, b *backend, format string, args ...any) error {
	return fmt.Errorf("%w: %s: "+format, append([]any{sentinel, b.name}, args...)...)
}
