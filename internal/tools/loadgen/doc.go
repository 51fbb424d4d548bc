// Package loadgen is the library behind cmd/mcpload: a closed-loop load generator that speaks
// MCP 2026-07-28 Streamable HTTP (docs/protocol.md §1–§3) to one loopback endpoint, and a minimal fast MCP
// backend to put behind the thing being measured.
//
// The generator sends every request with the mirrored headers (MCP-Protocol-Version, Mcp-Method,
// Mcp-Name) and the required _meta keys, reads JSON and SSE answers to the end so connections are
// reused, and counts an operation as successful only when it ends in a JSON-RPC result that is
// not a tool error. Latency goes into a log-bucketed histogram (under 1% relative error) per
// worker, merged at the end, so recording costs no locks and no allocation.
//
// Every target must resolve to a loopback address, and the dialer re-checks the address it
// connects to, so a run can never send traffic off the machine.
package loadgen
