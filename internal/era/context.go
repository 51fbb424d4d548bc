package era

import (
	"encoding/json"
	"fmt"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

// A sampling request's includeContext asks the client to add to the prompt what it holds of
// its exchanges with "thisServer" or "allServers" (deprecated in 2026-07-28, still read by every
// client that declares sampling.context, and by every 2025-06-18 or 2025-03-26 client that
// declares sampling). Behind the gateway the client's server is the gateway, that is every
// backend at once: one backend's "thisServer" would have the client's model read what the
// client exchanged with every other backend, and send its reply, built on that, to the backend
// that asked. The gateway therefore asks the client for no context on a backend's behalf:
// includeContext becomes "none" in what the client receives, unless the operator trusts that
// backend with it (the backend's samplingContext setting).

// contextNone is the includeContext value that includes nothing.
const contextNone = `"none"`

// SamplingWithoutContext returns the params of a sampling/createMessage request (an object)
// with includeContext "none" wherever it had another value (a string other than "none", null,
// anything), and reports whether it changed them. Params without includeContext are returned as
// they are: absent means "none". The member is read by its exact name, its escapes decoded; a
// spelling a case-folding client would read as it ("IncludeContext", "include_context") is left
// for InputRequests and ServerRequest to refuse.
func SamplingWithoutContext(params []byte) ([]byte, bool, error) {
	changed := false
	_ = jsonrpc.Members(params, func(k, v []byte) error {
		if string(k) == "includeContext" && string(v) != contextNone {
			changed = true
		}
		return nil
	})
	if !changed {
		return params, false, nil
	}
	out, err := FilterObject(make([]byte, 0, len(params)), params, func(k, v []byte) ([]byte, bool) {
		if string(k) == "includeContext" {
			return []byte(contextNone), true
		}
		return v, true
	})
	return out, err == nil, err
}

// InputRequestsWithoutContext returns inputRequests (an object of entries) with every
// sampling/createMessage entry's params passed through SamplingWithoutContext, and reports
// whether any changed. Other entries, and entries of a shape no client is asked (left for
// InputRequests to refuse), are kept as they are. inputRequests that cannot be read at all are
// an error: the round must not be relayed with its context.
func InputRequestsWithoutContext(inputRequests []byte) ([]byte, bool, error) {
	if err := scanObject(inputRequests); err != nil {
		return nil, false, fmt.Errorf("era: inputRequests: %w", err)
	}
	changed := false
	var inner error
	keep := func(err error) {
		if inner == nil {
			inner = err
		}
	}
	out, err := FilterObject(make([]byte, 0, len(inputRequests)), inputRequests, func(_, entry []byte) ([]byte, bool) {
		if !isObject(entry) || !samplingEntry(entry) {
			return entry, true
		}
		e, err := FilterObject(make([]byte, 0, len(entry)), entry, func(k, v []byte) ([]byte, bool) {
			if string(k) != "params" || !isObject(v) {
				return v, true
			}
			p, c, err := SamplingWithoutContext(v)
			keep(err)
			changed = changed || c
			return p, true
		})
		keep(err)
		return e, true
	})
	if err == nil {
		err = inner
	}
	if err != nil {
		return nil, false, fmt.Errorf("era: inputRequests: %w", err)
	}
	if !changed {
		return inputRequests, false, nil
	}
	return out, true, nil
}

// samplingEntry reports whether the inputRequests entry (an object) names
// sampling/createMessage, its method read as InputRequests reads it.
func samplingEntry(entry []byte) bool {
	sampling := false
	_ = jsonrpc.Members(entry, func(k, v []byte) error {
		if string(k) == "method" && len(v) > 0 && v[0] == '"' {
			var m string
			sampling = json.Unmarshal(v, &m) == nil && m == MethodSamplingCreate
		}
		return nil
	})
	return sampling
}
