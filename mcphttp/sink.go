package mcphttp

// Sink is where the pipeline answers a request: the only way a stage writes anything. For a
// 2026-07-28 client it is the request's ClientSink, which frames the answer as that revision
// does; another edge passes a Sink of its own to Incoming.Run (package pre2026 relays progress
// to its client at once, keeps an input_required result to ask its client for the input, and
// writes every other last message in its client's shape).
//
// A Sink records how the request ended (its outcome) as it is answered: the outcome goes with
// the answer, never separately.
type Sink interface {
	// Event writes msg, a message that comes before the last one (a relayed notification, or a
	// message of a listen). With held nil it is sent at once; else it may stay buffered (adding
	// its size to *held) until FlushHeld or the last message.
	Event(msg []byte, held *int) error
	// FlushHeld sends the events held so far: the relay is about to wait for its backend.
	FlushHeld(held *int)
	// Result ends the response with the request's result: the gateway's own (a list page, a
	// confirmation, server/discover) or a backend's, borrowed until Result returns. status is
	// the HTTP status a backend answered with (200 for the gateway's own), outcome how the
	// request ended (outcomeOK, outcomeInputRequired, outcomeDenied).
	Result(result []byte, status int, outcome string, held *int) error
	// Message ends the response with a whole JSON-RPC message relayed as it came: a backend's
	// error.
	Message(msg []byte, status int, outcome string, held *int) error
	// Error ends the response with the gateway's own error.
	Error(e *Error) error
	// KeepAlive arms (true) or pauses the keep-alive comments that hold a silent response
	// open. The silence is counted from the last byte the client was sent, not from the
	// arming (ClientSink.KeepAlive), so pausing and arming again puts off no comment.
	KeepAlive(on bool)
}

var _ Sink = (*ClientSink)(nil)
