package era

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

// MaxClientCapsBytes bounds the normalised client capabilities a pre-2026 session carries:
// they travel in every sealed session id.
const MaxClientCapsBytes = 512

// The capabilities an InputRequest may need (InputRequest.Capability, Declares).
const (
	CapElicitationForm = "elicitation.form"
	CapElicitationURL  = "elicitation.url"
	CapSampling        = "sampling"
	// CapSamplingTools: a sampling request that offers tools (2025-11-25 and later).
	CapSamplingTools = "sampling.tools"
	// CapSamplingContext: a sampling request whose includeContext is not "none".
	CapSamplingContext = "sampling.context"
	// CapSamplingToolsContext: a sampling request that does both, which needs both.
	CapSamplingToolsContext = "sampling.tools and sampling.context"
	CapRoots                = "roots"
)

// ClientCaps is the set of client capabilities the gateway relays to backends, as flags: the
// 2026-07-28 ClientCapabilities members that a pre-2026 client can declare and that mean
// something to a backend. The schema defines no members inside form, url, context and tools
// (each is an empty object), so the flags lose nothing a server acts on.
type ClientCaps struct {
	ElicitationForm bool
	ElicitationURL  bool
	Roots           bool
	Sampling        bool
	SamplingContext bool
	SamplingTools   bool
}

// ParseClientCaps reads client capabilities of either era (a JSON object; empty means none).
// An elicitation object that names neither form nor url declares form, as both eras say; a
// capability whose value is not an object is not declared (a client that sends `"roots":true`
// gets no roots requests rather than ones it may not understand). Members other than
// elicitation, roots and sampling (tasks, experimental, extensions, unknown ones) are ignored:
// a pre-2026 client cannot take part in the 2026 extensions, and core tasks are gone.
func ParseClientCaps(raw json.RawMessage) (ClientCaps, error) {
	var c ClientCaps
	if len(raw) == 0 {
		return c, nil
	}
	if err := jsonrpc.Scan(raw, jsonrpc.Limits{}); err != nil {
		return c, fmt.Errorf("era: client capabilities: %w", err)
	}
	if !isObject(raw) {
		return c, errors.New("era: client capabilities are not a JSON object")
	}
	err := jsonrpc.Members(raw, func(key, val []byte) error {
		if !isObject(val) {
			return nil
		}
		switch string(key) {
		case "elicitation":
			_ = jsonrpc.Members(val, func(k, v []byte) error {
				switch string(k) {
				case "form":
					c.ElicitationForm = c.ElicitationForm || isObject(v)
				case "url":
					c.ElicitationURL = c.ElicitationURL || isObject(v)
				}
				return nil
			})
			if !c.ElicitationForm && !c.ElicitationURL {
				c.ElicitationForm = true // `elicitation:{}` is form mode in both eras
			}
		case "roots":
			c.Roots = true // roots.listChanged has no 2026 meaning: roots are asked per request
		case "sampling":
			c.Sampling = true
			_ = jsonrpc.Members(val, func(k, v []byte) error {
				switch string(k) {
				case "context":
					c.SamplingContext = c.SamplingContext || isObject(v)
				case "tools":
					c.SamplingTools = c.SamplingTools || isObject(v)
				}
				return nil
			})
		}
		return nil
	})
	return c, err
}

// JSON renders c in the 2026-07-28 shape, compact, members in a fixed order, so equal sets
// give equal bytes.
func (c ClientCaps) JSON() json.RawMessage {
	out := make([]byte, 0, 96)
	out = append(out, '{')
	if c.ElicitationForm || c.ElicitationURL {
		out = append(out, `"elicitation":{`...)
		if c.ElicitationForm {
			out = append(out, `"form":{}`...)
		}
		if c.ElicitationURL {
			if c.ElicitationForm {
				out = append(out, ',')
			}
			out = append(out, `"url":{}`...)
		}
		out = append(out, '}')
	}
	if c.Roots {
		out = appendSep(out)
		out = append(out, `"roots":{}`...)
	}
	if c.Sampling {
		out = appendSep(out)
		out = append(out, `"sampling":{`...)
		if c.SamplingContext {
			out = append(out, `"context":{}`...)
		}
		if c.SamplingTools {
			if c.SamplingContext {
				out = append(out, ',')
			}
			out = append(out, `"tools":{}`...)
		}
		out = append(out, '}')
	}
	return append(out, '}')
}

// Has reports whether c declares capability (one of the Cap* names); an unknown name is never
// declared.
func (c ClientCaps) Has(capability string) bool {
	switch capability {
	case CapElicitationForm:
		return c.ElicitationForm
	case CapElicitationURL:
		return c.ElicitationURL
	case CapSampling:
		return c.Sampling
	case CapSamplingTools:
		return c.Sampling && c.SamplingTools
	case CapSamplingContext:
		return c.Sampling && c.SamplingContext
	case CapSamplingToolsContext:
		return c.Sampling && c.SamplingTools && c.SamplingContext
	case CapRoots:
		return c.Roots
	}
	return false
}

// ForVersion returns c without what a client of version cannot declare: URL-mode elicitation
// and tool-using sampling came with 2025-11-25, and elicitation itself with 2025-06-18, so a
// client of an older revision that declares them anyway is not sent requests it cannot read.
// Before 2025-11-25, sampling had no context flag: includeContext was part of every sampling
// request, so a client of those revisions that declares sampling reads it, and is asked.
func (c ClientCaps) ForVersion(version string) ClientCaps {
	if version != V20250618 && version != V20250326 {
		return c
	}
	c.ElicitationURL = false
	c.SamplingTools = false
	c.SamplingContext = c.Sampling
	if version == V20250326 {
		c.ElicitationForm = false
	}
	return c
}

// NormalizeClientCaps turns 2025 client capabilities into the 2026-07-28 shape the gateway
// relays on every internal request: elicitation:{} → {form:{}}, {form,url} kept; sampling kept
// (context, tools); roots:{listChanged} → roots:{}; tasks, experimental and anything else
// dropped. Every kept member is an empty object, the result is compact and its members are in
// a fixed order, so normalising is idempotent. Empty raw (the client sent none) gives {}; raw
// that is not a JSON object is an error, as is a result over MaxClientCapsBytes.
//
// written is the revision the client asked for at initialize, the one its capabilities are
// written in (ModelessElicitation).
func NormalizeClientCaps(raw json.RawMessage, written string) (json.RawMessage, error) {
	c, err := ParseClientCaps(raw)
	if err != nil {
		return nil, err
	}
	if ModelessElicitation(written) && c.ElicitationURL {
		c.ElicitationForm, c.ElicitationURL = true, false
	}
	out := c.JSON()
	if len(out) > MaxClientCapsBytes {
		return nil, fmt.Errorf("era: client capabilities exceed %d bytes", MaxClientCapsBytes)
	}
	return out, nil
}

// ModelessElicitation reports whether capabilities written for revision (a client's requested
// one) are written before elicitation had modes: before 2025-11-25, an elicitation object
// declares elicitation, which is form mode, whatever members it holds, so one holding only
// "url" (a member those revisions do not define, which an SDK that also speaks 2025-11-25 may
// send) declares form mode, not URL mode alone. Capabilities of a revision not shaped as one
// are read as the newest revisions read them.
func ModelessElicitation(revision string) bool {
	return isRevision(revision) && revision < V20251125
}

// Declares reports whether normalised caps declare capability (one of the Cap* names).
// Capabilities that cannot be read declare nothing.
func Declares(caps json.RawMessage, capability string) bool {
	c, err := ParseClientCaps(caps)
	return err == nil && c.Has(capability)
}

// NegotiateVersion answers a pre-2026 initialize: requested if the gateway serves it, else
// another version it serves, as every initialize-based revision requires ("the server MUST
// respond with another protocol version it supports. This SHOULD be the latest version
// supported by the server"). A client asks for the latest revision it supports, so for a
// requested revision (YYYY-MM-DD) that is the newest served one not newer than it, which the
// client can read; for one older than every served revision (2024-11-05, say) the oldest served,
// which differs least from what it reads (for 2024-11-05 that is 2025-03-26, which hosts driving
// an SDK of that time through mcp-remote accept, where they refuse 2025-11-25). Anything else
// gets the newest served (served is newest first). "" when it serves none.
func NegotiateVersion(requested string, served []string) string {
	if slices.Contains(served, requested) {
		return requested
	}
	if len(served) == 0 {
		return ""
	}
	if !isRevision(requested) {
		return served[0]
	}
	nearest := ""
	for _, v := range served {
		if v < requested && v > nearest {
			nearest = v
		}
	}
	if nearest == "" {
		return slices.Min(served)
	}
	return nearest
}

// isRevision reports whether v is shaped like an MCP revision (YYYY-MM-DD), which compare as
// strings in the order of their dates.
func isRevision(v string) bool {
	if len(v) != len("2025-03-26") {
		return false
	}
	for i := 0; i < len(v); i++ {
		if dash := i == 4 || i == 7; dash != (v[i] == '-') || (!dash && (v[i] < '0' || v[i] > '9')) {
			return false
		}
	}
	return true
}

// isObject reports whether the scanned JSON value v is an object.
func isObject(v []byte) bool {
	i := skipWS(v, 0)
	return i < len(v) && v[i] == '{'
}

// appendSep appends a comma unless dst ends an opening brace.
func appendSep(dst []byte) []byte {
	if len(dst) > 0 && dst[len(dst)-1] != '{' {
		dst = append(dst, ',')
	}
	return dst
}
