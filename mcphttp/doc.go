// Package mcphttp is the gateway's client-facing HTTP side: the echo routes, the request
// pipeline that validates every MCP 2026-07-28 request before anything is forwarded, the one
// error mapper, and the JSON and SSE writers.
//
// # The pipeline
//
// Every POST builds one request (pipeline.go), the state of that client request, and runs it
// through the stages that docs/architecture.md "The request pipeline" numbers 1 to 11. The
// order lives in one place, request.run; comments cite a stage by that number.
//
// One rule says where a stage lives: every stage, and every step of one, that reads or writes
// the state of a request is a method on *request, and reaches the server's components (the
// registry, the authorizer, the codec, metrics, configuration) through the request's server.
// Server methods never take a request: they serve the whole endpoint (routes, the response
// skeleton) or nothing stage-specific.
//
// The state of a request is grouped by the stage that produces it: decoded (stages 1 to 4),
// identity (stage 5), route (stages 6 to 8) and output (what has been written, stages 9 to 11
// and the keep-alive timer). A stage writes its own group and reads those of earlier stages.
//
// # Words
//
// A request is the gateway's state for one client request (never a backend's). To write is
// to put bytes on the client's response; to emit is to write one JSON-RPC message to the
// client, choosing its framing (an SSE event, or the JSON body when it is the last message of
// a response that has not started a stream). The last message is the one that ends the
// client's response; reply renders it from the message that ended the backend's stream.
// record ends a request: its span, metrics and access log line.
package mcphttp
