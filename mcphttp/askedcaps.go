package mcphttp

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/mcp-gateway/gateway/internal/era"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

// A server asks a client only for what the client declared on that request, and answers -32021
// with data.requiredCapabilities when it cannot go on otherwise (docs/protocol.md §3). The
// gateway forwards a 2026-07-28 client's clientCapabilities as they are, but a backend may
// ignore them: its input_required result is checked against what the client declared before
// the client sees it, so that no client is handed a request it never said it could answer (a
// sampling request to a client without a model, a URL to open to one that shows only forms).
// Such a round ends as the gateway's own -32021 naming what the backend asked for that was not
// declared; nothing of the backend's round (its requests, its requestState) reaches the client.
//
// Each entry is read as the legacy edge reads it for its clients (era.InputRequests): one of
// the three methods a server may ask, params an object (or none, for roots/list), and the
// capability it needs: elicitation.form for a form (mode "form" or none), elicitation.url for a
// URL, sampling (sampling.tools when it offers tools or a toolChoice, sampling.context when
// includeContext is not "none"), roots; an entry or params member the check reads (method,
// params, mode, tools, includeContext, …) spelled another way, which a case-folding client would
// read instead, is refused there too. Declarations are read by era.ParseClientCaps: `elicitation: {}` declares
// form, and `{}` declares nothing. An entry of another shape is an invalid result.
//
// A request the pre-2026 edge built is left to that edge, which checks each entry against its
// client's session before asking it, and says what is missing in its client's terms.

// checkAsked refuses a backend's input_required result to x that asks for what x's
// clientCapabilities do not declare, or holds an entry no client could be asked.
func checkAsked(x *request, result []byte) error {
	if x.internal {
		return nil
	}
	inputs := inputRequestsOf(result)
	if inputs == nil {
		return nil // only a requestState: nothing is asked (resultShape checked the shape)
	}
	// 2025-11-25 is the revision whose client capabilities for these requests are 2026-07-28's.
	reqs, err := era.InputRequests(era.V20251125, inputs)
	if err != nil {
		return invalidResult(strings.TrimPrefix(err.Error(), "era: "))
	}
	declared, err := era.ParseClientCaps(x.in.meta.ClientCapabilities)
	if err != nil {
		declared = era.ClientCaps{} // decoded as an object already; unreadable declares nothing
	}
	var missing era.ClientCaps
	var methods []string
	for _, r := range reqs {
		for _, need := range needs(r) {
			if declared.Has(need) {
				continue
			}
			missing = withCapability(missing, need)
			if !slices.Contains(methods, r.Method) {
				methods = append(methods, r.Method)
			}
		}
	}
	if len(methods) == 0 {
		return nil
	}
	e := jsonrpc.NewError(jsonrpc.CodeMissingRequiredClientCapability, "Missing required client capability: the backend asked for input ("+
		strings.Join(methods, ", ")+") that this request's clientCapabilities do not declare; its round was not relayed")
	e.Data = json.RawMessage(`{"requiredCapabilities":` + string(missing.JSON()) + `}`)
	return rpcError(e)
}

// withCapability returns c declaring capability too (one of era's Cap* names).
func withCapability(c era.ClientCaps, capability string) era.ClientCaps {
	switch capability {
	case era.CapElicitationForm:
		c.ElicitationForm = true
	case era.CapElicitationURL:
		c.ElicitationURL = true
	case era.CapSampling:
		c.Sampling = true
	case era.CapSamplingTools:
		c.Sampling, c.SamplingTools = true, true
	case era.CapSamplingContext:
		c.Sampling, c.SamplingContext = true, true
	case era.CapRoots:
		c.Roots = true
	}
	return c
}

// needs is every capability r needs, each alone, so that requiredCapabilities names only the
// part of a sampling request's needs that was not declared.
func needs(r era.InputRequest) []string {
	if r.Capability == era.CapSamplingToolsContext {
		return []string{era.CapSamplingTools, era.CapSamplingContext}
	}
	return []string{r.Capability}
}

// inputRequestsOf is the inputRequests object of an input_required result, nil when it has none
// (or one that is not an object).
func inputRequestsOf(result []byte) []byte {
	var inputs []byte
	_ = jsonrpc.Members(result, func(key, val []byte) error {
		if string(key) == "inputRequests" {
			inputs = val
		}
		return nil
	})
	if len(inputs) == 0 || inputs[0] != '{' {
		return nil
	}
	return inputs
}
