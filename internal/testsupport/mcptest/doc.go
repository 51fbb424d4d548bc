// Package mcptest starts real MCP peers from the official Go SDK for the
// gateway's tests: backend servers on loopback httptest servers, in the
// stateless 2026-07-28 mode ([StartServer]) or the stateful 2025-11-25 mode
// ([StartLegacyServer]), and go-sdk clients ([Connect]).
//
// Every backend records each HTTP request it received and the response it
// sent, so a test can assert what crossed the gateway's upstream hop: that
// nothing arrived, that no Authorization or Cookie header leaked, that trace
// headers were passed on, or that a requestState came back unchanged.
//
// The default tools (echo, add, progress, slow, ask_name, fail, whoami), the
// resource mem://readme, the template mem://items/{id}, the prompt greet and
// a completion handler are described in the README-style comments on
// [StartServer]. The exchanges in testdata/*.txt were captured from these
// peers and show what the go-sdk v1.8.0 client and server put on the wire.
//
// It also holds the small helpers the repository's tests share, so that each is written once: a
// manual [Clock], a goroutine-safe [LogBuffer], [JWTClaims] to read a token's payload,
// [ResultText] for the text of a tool result, [Golden] to compare with (or rewrite) a golden
// file, and [Server.RequestsOf] for the requests of one method a backend received.
package mcptest
