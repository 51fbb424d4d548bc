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
// skeleton).
//
// The state of a request is grouped by the stage that produces it: decoded (stages 1 to 4),
// identity (stage 5) and route (stages 6 to 8), each written by its stages and read by later
// ones, and output: what has been written to the client, by whichever stage answers (through
// the writers of respond.go) and by the keep-alive timer. docs/architecture.md "The request's
// state" lists which stage writes each field.
//
// # Words
//
// A request is the gateway's state for one client request (never a backend's). To write is
// to put bytes on the client's response; to emit is to write one JSON-RPC message to the
// client, choosing its framing (an SSE event, or the JSON body when it is a call's last
// message and no stream has started). The last message is the one that ends the
// client's response; reply renders it from the message that ended the backend's stream.
// record ends a request: its span, metrics and access log line.
package mcphttp
