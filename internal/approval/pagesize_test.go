package approval

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/realop"
)

// TestPageBoundedWhenAsked: a call is asked only if its page, at its largest (the confirmation
// step, every value whole), fits MaxPageBytes. Arguments that fit a record but that the page
// shows many times larger (each zero-width, control or DEL character a visible mark, empty
// objects by the hundred thousand) are refused as too large when asked: nothing is
// stored and the caller's budget is given back. Before, a call of 1.5 MB of zero-width spaces
// was asked, and each view of its page rendered 44 MB of HTML, seconds of a core and hundreds
// of megabytes, as often as its caller opened it. Ordinary arguments of the largest record
// (HTML, right-to-left text, which the page shows twice) are asked, and their page fits.
func TestPageBoundedWhenAsked(t *testing.T) {
	f := newPageFixture(t, func(c *Config) { c.MaxPendingPerCaller = 1 })
	// argsOf repeats unit in a string argument to the size of the largest record's arguments.
	const size = MaxRecordBytes * 7 / 5
	encode := func(v any) string {
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(v)
		return strings.TrimSpace(b.String())
	}
	argsOf := func(unit string) string {
		// As large as fits a record, which keeps <, > and & escaped (\u003c).
		escaped, _ := json.Marshal(unit)
		return encode(map[string]string{"v": strings.Repeat(unit, size/(len(escaped)-2))})
	}
	items := func(item string) string {
		return `{"v":[` + strings.Repeat(item+",", size/(len(item)+1)) + item + `]}`
	}
	for name, args := range map[string]string{
		"zero-width spaces": argsOf("\u200b"),
		"DEL":               argsOf("\x7f"),
		"empty objects":     items(`{}`),
	} {
		before := f.store.Len()
		if _, err := f.askAs(realop.UserID, args); !errors.Is(err, ErrTooLarge) {
			t.Errorf("%s, %d bytes of arguments: %v, want ErrTooLarge", name, len(args), err)
		}
		if f.store.Len() != before {
			t.Errorf("%s: a call refused as too large was stored", name)
		}
	}
	// The budget (one call) was given back each time: an ordinary call is asked, and its page
	// fits.
	for name, unit := range map[string]string{"HTML": `<div class="x">a &amp; b</div>` + "\n", "right-to-left": "\u05e9\u05dc 0532 "} {
		args := argsOf(unit)
		id, err := f.askAs(realop.UserID, args)
		if err != nil {
			t.Fatalf("%s, %d bytes of arguments: %v", name, len(args), err)
		}
		c, err := f.svc.ledger.load(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		page := f.renderPage(t, c, &session{Issuer: c.Issuer, Subject: c.Subject, CSRF: make([]byte, 32)}, stepConfirm)
		if len(page) > MaxPageBytes {
			t.Errorf("%s: page of %d bytes, over MaxPageBytes", name, len(page))
		}
		f.clock.advance(10 * time.Minute) // the call expires: the budget has room for the next
	}
}
