package loadgen

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

// Result types (docs/protocol.md §3).
const (
	resultComplete      = "complete"
	resultInputRequired = "input_required"
)

// Capabilities declared per request (docs/protocol.md §1). Only the confirm operation declares form
// elicitation, since a server may ask only for what the request declared (docs/protocol.md §3).
const (
	capsNone        = `{}`
	capsElicitation = `{"elicitation":{"form":{}}}`
)

// plan holds the pre-rendered requests of every operation, shared read-only by all workers.
type plan struct {
	call, list, sse, confirm request
	content                  json.RawMessage
}

func newPlan(c *Config) *plan {
	return &plan{
		call:    request{method: "tools/call", name: c.Tool, caps: capsNone, rest: callRest(c.Tool, c.Args)},
		list:    request{method: "tools/list", caps: capsNone},
		sse:     request{method: "tools/call", name: c.SSETool, caps: capsNone, rest: callRest(c.SSETool, c.SSEArgs)},
		confirm: request{method: "tools/call", name: c.ConfirmTool, caps: capsElicitation, rest: callRest(c.ConfirmTool, c.ConfirmArgs)},
		content: c.ConfirmContent,
	}
}

func callRest(name string, args json.RawMessage) []byte {
	n, _ := json.Marshal(name)
	rest := append([]byte(`,"name":`), n...)
	rest = append(rest, `,"arguments":`...)
	return append(rest, args...)
}

// run performs one operation and returns how many HTTP requests it took.
func (p *plan) run(ctx context.Context, w *wire, op Op, token string) (int, error) {
	switch op {
	case OpList:
		return 1, expectComplete(w.do(ctx, &p.list))
	case OpSSE:
		req := p.sse
		req.token = token
		rep, err := w.do(ctx, &req)
		if err == nil && rep.progress == 0 {
			return 1, opErr(KindNoProgress, errors.New("no progress notification before the result"))
		}
		return 1, expectComplete(rep, err)
	case OpConfirm:
		return p.runConfirm(ctx, w)
	case OpLegacyCall:
		return p.legacyCall(ctx, w)
	default:
		return 1, expectComplete(w.do(ctx, &p.call))
	}
}

// runConfirm is the MRTR round trip of docs/protocol.md §3: the retry has a new id (wire.do draws one),
// the same method and params, an answer for every input request, and the state echoed exactly.
func (p *plan) runConfirm(ctx context.Context, w *wire) (int, error) {
	rep, err := w.do(ctx, &p.confirm)
	if err != nil {
		return 1, err
	}
	info, err := parseResult(rep.result)
	if err != nil {
		return 1, err
	}
	switch {
	case info.typ == resultComplete:
		return 1, opErr(KindNotConfirmed, errors.New("the call completed without asking for confirmation"))
	case info.typ != resultInputRequired || (len(info.inputKeys) == 0 && info.state == nil):
		return 1, opErr(KindBadResult, errors.New("input_required without inputRequests or requestState"))
	}
	retry := p.confirm
	retry.rest = p.retryRest(info)
	return 2, expectComplete(w.do(ctx, &retry))
}

func (p *plan) retryRest(info resultInfo) []byte {
	rest := append([]byte(nil), p.confirm.rest...)
	if len(info.inputKeys) > 0 {
		rest = append(rest, `,"inputResponses":{`...)
		for i, k := range info.inputKeys {
			if i > 0 {
				rest = append(rest, ',')
			}
			kb, _ := json.Marshal(k)
			rest = append(rest, kb...)
			rest = append(rest, `:{"action":"accept","content":`...)
			rest = append(rest, p.content...)
			rest = append(rest, '}')
		}
		rest = append(rest, '}')
	}
	if info.state != nil {
		rest = append(rest, `,"requestState":`...)
		rest = append(rest, info.state...)
	}
	return rest
}

// resultInfo is what the harness reads from a result object.
type resultInfo struct {
	typ       string
	isError   bool
	inputKeys []string
	state     json.RawMessage // the raw JSON string, echoed byte for byte
}

func parseResult(raw json.RawMessage) (resultInfo, error) {
	var info resultInfo
	err := jsonrpc.Members(raw, func(key, val []byte) error {
		switch string(key) {
		case "resultType":
			return json.Unmarshal(val, &info.typ)
		case "isError":
			info.isError = string(val) == "true"
		case "requestState":
			if val[0] != '"' {
				return errors.New("requestState is not a string")
			}
			info.state = val
		case "inputRequests":
			return jsonrpc.Members(val, func(k, _ []byte) error {
				info.inputKeys = append(info.inputKeys, string(k))
				return nil
			})
		}
		return nil
	})
	if err != nil {
		return info, opErr(KindBadResult, err)
	}
	return info, nil
}

// expectComplete turns a reply into the operation's outcome: success only for a complete result
// that is not a tool error.
func expectComplete(rep reply, err error) error {
	if err != nil {
		return err
	}
	info, err := parseResult(rep.result)
	switch {
	case err != nil:
		return err
	case info.typ == resultInputRequired:
		return opErr(KindUnexpectedInput, errors.New("input_required where a complete result was expected"))
	case info.typ != resultComplete:
		return opErr(KindBadResult, errors.New("resultType is "+strconv.Quote(info.typ)))
	case info.isError:
		return opErr(KindToolError, errors.New("tool result has isError true"))
	}
	return nil
}
