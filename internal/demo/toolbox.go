package demo

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
	_ "time/tzdata" // now{timezone} must work in images without a zoneinfo database.
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Bounds of the toolbox's arguments.
const (
	maxCount     = 20
	minSides     = 2
	maxSides     = 1000
	maxDice      = 100
	defaultSides = 6
	maxTextLen   = 1 << 20
)

// ErrBadArgument is reported (as an isError result) for an argument outside
// its documented range.
var ErrBadArgument = errors.New("argument out of range")

type toolbox struct{ d deps }

type textIn struct {
	Text string `json:"text" jsonschema:"the text"`
}

type addIn struct {
	A float64 `json:"a" jsonschema:"first addend"`
	B float64 `json:"b" jsonschema:"second addend"`
}

type addOut struct {
	Sum float64 `json:"sum"`
}

type nowIn struct {
	Timezone string `json:"timezone,omitempty" jsonschema:"an IANA time zone such as Europe/Paris; UTC when empty"`
}

type nowOut struct {
	Time     string `json:"time"`
	Timezone string `json:"timezone"`
	Unix     int64  `json:"unix"`
}

type countIn struct {
	N int `json:"n" jsonschema:"how far to count, 1 to 20; one progress notification per step"`
}

type diceIn struct {
	Sides int `json:"sides,omitempty" jsonschema:"faces per die, 2 to 1000; 6 when absent"`
	Count int `json:"count,omitempty" jsonschema:"number of dice, 1 to 100; 1 when absent"`
}

type diceOut struct {
	Rolls []int `json:"rolls"`
	Total int   `json:"total"`
}

type wordCountOut struct {
	Words      int `json:"words"`
	Characters int `json:"characters"`
	Lines      int `json:"lines"`
}

func newToolboxServer(logger *slog.Logger, d deps) *mcp.Server {
	tb := &toolbox{d: d}
	s := mcp.NewServer(&mcp.Implementation{Name: ToolboxName, Version: Version}, &mcp.ServerOptions{
		Logger:       logger,
		Instructions: "Small stateless utilities: echo, arithmetic, the time, dice and word counts.",
	})
	pure := &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)}
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Returns the text unchanged.", Annotations: pure}, echo)
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "Adds two numbers.", Annotations: pure}, add)
	mcp.AddTool(s, &mcp.Tool{Name: "now", Description: "Returns the current time in a time zone.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(false)}}, tb.now)
	mcp.AddTool(s, &mcp.Tool{Name: "count_slowly", Description: "Counts from 1 to n, pausing between steps and reporting progress.",
		Annotations: pure}, tb.countSlowly)
	mcp.AddTool(s, &mcp.Tool{Name: "roll_dice", Description: "Rolls dice and returns each roll and the total.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(false)}}, tb.rollDice)
	mcp.AddTool(s, &mcp.Tool{Name: "word_count", Description: "Counts words, characters and lines of a text.", Annotations: pure}, wordCount)
	return s
}

func echo(_ context.Context, _ *mcp.CallToolRequest, in textIn) (*mcp.CallToolResult, any, error) {
	return textResult(in.Text), nil, nil
}

func add(_ context.Context, _ *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, addOut, error) {
	sum := in.A + in.B
	return textResult(fmt.Sprint(sum)), addOut{Sum: sum}, nil
}

func (tb *toolbox) now(_ context.Context, _ *mcp.CallToolRequest, in nowIn) (*mcp.CallToolResult, nowOut, error) {
	name := in.Timezone
	if name == "" {
		name = "UTC"
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, nowOut{}, fmt.Errorf("%w: unknown time zone %q", ErrBadArgument, name)
	}
	t := tb.d.now().In(loc)
	out := nowOut{Time: t.Format(time.RFC3339), Timezone: loc.String(), Unix: t.Unix()}
	return textResult(out.Time), out, nil
}

// countSlowly sends one progress notification per step when the caller
// asked for progress, which makes the go-sdk answer with an SSE stream.
func (tb *toolbox) countSlowly(ctx context.Context, req *mcp.CallToolRequest, in countIn) (*mcp.CallToolResult, any, error) {
	if in.N < 1 || in.N > maxCount {
		return nil, nil, fmt.Errorf("%w: n must be 1..%d", ErrBadArgument, maxCount)
	}
	token := req.Params.GetProgressToken()
	for i := 1; i <= in.N; i++ {
		if err := sleep(ctx, tb.d.tick); err != nil {
			return nil, nil, err
		}
		if token == nil {
			continue
		}
		p := &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(i), Total: float64(in.N), Message: fmt.Sprintf("%d of %d", i, in.N)}
		if err := req.Session.NotifyProgress(ctx, p); err != nil {
			return nil, nil, fmt.Errorf("sending progress: %w", err)
		}
	}
	return textResult(fmt.Sprintf("Counted to %d.", in.N)), nil, nil
}

func (tb *toolbox) rollDice(_ context.Context, _ *mcp.CallToolRequest, in diceIn) (*mcp.CallToolResult, diceOut, error) {
	sides, count := in.Sides, in.Count
	if sides == 0 {
		sides = defaultSides
	}
	if count == 0 {
		count = 1
	}
	if sides < minSides || sides > maxSides || count < 1 || count > maxDice {
		return nil, diceOut{}, fmt.Errorf("%w: sides must be %d..%d and count 1..%d", ErrBadArgument, minSides, maxSides, maxDice)
	}
	out := diceOut{Rolls: make([]int, count)}
	for i := range out.Rolls {
		out.Rolls[i] = tb.d.intN(sides) + 1
		out.Total += out.Rolls[i]
	}
	return textResult(fmt.Sprintf("Rolled %dd%d: %v, total %d", count, sides, out.Rolls, out.Total)), out, nil
}

func wordCount(_ context.Context, _ *mcp.CallToolRequest, in textIn) (*mcp.CallToolResult, wordCountOut, error) {
	if len(in.Text) > maxTextLen {
		return nil, wordCountOut{}, fmt.Errorf("%w: text longer than %d bytes", ErrBadArgument, maxTextLen)
	}
	out := wordCountOut{Words: len(strings.Fields(in.Text)), Characters: utf8.RuneCountInString(in.Text)}
	if in.Text != "" {
		out.Lines = strings.Count(in.Text, "\n") + 1
		if strings.HasSuffix(in.Text, "\n") {
			out.Lines--
		}
	}
	return textResult(fmt.Sprintf("%d words, %d characters, %d lines", out.Words, out.Characters, out.Lines)), out, nil
}

// sleep waits d or until ctx ends, so a cancelled call stops at once.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
