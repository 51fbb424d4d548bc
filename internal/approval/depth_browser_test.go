package approval_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/mcp-gateway/gateway/internal/approval"
	"github.com/mcp-gateway/gateway/internal/testsupport/browsertest"
)

// TestDeepArgumentsWithinTheBox: in a real browser at a phone's width, every key and value of
// arguments nested as deep as the gateway takes them (objects, arrays, both mixed, a long
// value at the bottom) lies within the arguments' box, which does not scroll sideways, and the
// levels past those indented say their level. Before, each level was indented about 28 px, and
// what lay past the box's right edge was seen only by scrolling the box sideways, which a
// phone shows no scroll bar for: a value nested 12 levels deep ("rm -rf /" under a harmless
// "path") stood out of sight beside an empty box.
func TestDeepArgumentsWithinTheBox(t *testing.T) {
	const depth = 60
	mixed := ""
	for i := range depth {
		if i%2 == 0 {
			mixed += `{"k` + string(rune('a'+i%26)) + `":`
		} else {
			mixed += `[0,`
		}
	}
	mixed += `"rm -rf / ` + strings.Repeat("x", 300) + `"`
	for i := depth - 1; i >= 0; i-- {
		if i%2 == 0 {
			mixed += `}`
		} else {
			mixed += `]`
		}
	}
	cases := map[string]string{
		"objects": `{"path":"/tmp/x","o":` + strings.Repeat(`{"k":`, depth) + `"rm -rf /"` + strings.Repeat(`}`, depth) + `}`,
		"arrays":  `{"path":"/tmp/x","o":` + strings.Repeat(`[`, depth) + `"rm -rf /"` + strings.Repeat(`]`, depth) + `}`,
		"mixed":   `{"path":"/tmp/x","o":` + mixed + `}`,
	}
	tab := browsertest.Tab(t, browsertest.New(t))
	browsertest.Step(t, tab, "phone viewport", chromedp.EmulateViewport(390, 844))
	for name, args := range cases {
		page := approval.RenderAskPage(t, approval.Call{ID: strings.Repeat("a", 32), Issuer: "https://issuer.example", Subject: "alice",
			Upstream: "files", Tool: "files__delete", UpstreamTool: "delete", Arguments: []byte(args), Forwarded: []byte(args),
			Expiry: time.Now().Add(time.Minute)})
		browsertest.Step(t, tab, "open the page of "+name, chromedp.Navigate(servePage(t, page)))
		type layout struct {
			Outside           []string
			Scrolls, Deepest  bool
			Levels, PageWider int
		}
		ctx, cancel := context.WithTimeout(tab, browsertest.StepTimeout)
		got, err := chromedp.Run(ctx, chromedp.Evaluate[layout](`(() => {
			const out = {Outside: [], Scrolls: false, Deepest: false, Levels: 0,
				PageWider: document.documentElement.scrollWidth - window.innerWidth};
			for (const box of document.querySelectorAll('#arguments, #forwarded')) {
				const b = box.getBoundingClientRect();
				out.Scrolls = out.Scrolls || box.scrollWidth > box.clientWidth;
				for (const e of box.querySelectorAll('.v, dt')) {
					const r = e.getBoundingClientRect();
					if (r.right > b.right + 0.5 || r.left < b.left - 0.5 || r.width < 1) {
						out.Outside.push(e.textContent.slice(0, 20) + ' at ' + Math.round(r.left) + '..' + Math.round(r.right));
					}
				}
				out.Levels = Math.max(out.Levels, ...[...box.querySelectorAll('.level')].map(l => +l.textContent.replace('level ', '')));
				out.Deepest = out.Deepest || [...box.querySelectorAll('.v')].some(v => v.textContent.startsWith('rm -rf /'));
			}
			out.Outside = out.Outside.slice(0, 5);
			return out;
		})()`))
		cancel()
		if err != nil {
			t.Fatalf("%s: reading the layout: %v", name, err)
		}
		if got.Scrolls || len(got.Outside) > 0 || got.PageWider > 0 {
			t.Errorf("%s nested %d deep at a phone's width: the box scrolls sideways %v, the page is %d px wider than the screen, outside the box: %q",
				name, depth, got.Scrolls, got.PageWider, got.Outside)
		}
		if !got.Deepest || got.Levels != depth+1 {
			t.Errorf("%s: the deepest value shown %v, deepest level said %d, want %d", name, got.Deepest, got.Levels, depth+1)
		}
	}
}
