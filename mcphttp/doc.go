// Package mcphttp is the gateway's client-facing HTTP side: the echo routes, the request
// pipeline that validates every MCP 2026-07-28 request before anything is forwarded, the one
// error mapper, and the one writer of a client's response.
//
// # The pipeline
//
// Every POST builds one request value (request.go) and runs it through the stages that
// pipeline.go declares, in order, each a named function with the reason for its place; run is
// the one loop over them. docs/architecture.md "The request pipeline" lists the same stages by
// name, and comments cite a stage by its name ("stage authorize").
//
// Three parts, each with one job:
//
//   - the request value holds what the stages learnt of the request, grouped by the stage that
//     produces it: decoded (stages guard to headers), identity (authenticate) and route (route to
//     mrtr-in); it writes nothing;
//   - a Sink is where a request is answered, the only way a stage writes anything: the request's
//     ClientSink for a 2026-07-28 request, which owns the client's response (framing, write
//     deadlines, keep-alive comments, the recorded outcome), or the Sink of the edge that built
//     the request;
//   - the stages' functions, each taking what it needs.
//
// # Another era as a client of the pipeline
//
// An EraEdge (package pre2026, for 2025-11-25, 2025-06-18 and 2025-03-26 clients) is handed every POST right
// after the decode and every GET. It shares the pipeline's stages through an Incoming:
// authentication and admission, which every path runs, and Run, which takes a 2026-07-28
// request the edge built straight to the stages after the wire checks, answering through the
// edge's own Sink. Nothing goes through HTTP twice.
//
// # Words
//
// A request is the gateway's state for one client request (never a backend's). To write is to
// put bytes on the client's response, which only ClientSink does; to emit is to write one
// JSON-RPC message, choosing its framing (an SSE event, or the JSON body when it is the last
// message and no stream has started). The last message is the one that ends the client's
// response. record ends a request: its span, metrics and access log line.
package mcphttp
