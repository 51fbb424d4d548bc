package listen

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams/internal/upstreamstest"
	"github.com/mcp-gateway/gateway/upstreams/names"
)

// updated is a backend's resources/updated for uri.
func updated(uri string) string {
	return `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":` + jsonQuote(uri) + `}}`
}

func jsonQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestListenRelaysOnlyWhatEachListenerMaySee: two callers whose listens send a modern backend the
// same request share one stream, yet each hears only what it subscribed to and what its own
// policy lets it read. The backend here broadcasts: it sends resources/updated for URIs nobody
// subscribed to and a list_changed kind nobody asked for.
func TestListenRelaysOnlyWhatEachListenerMaySee(t *testing.T) {
	lb, url := upstreamstest.StartListenBackend(t)
	ls := New(singleSource(t, url))
	const want = `{"toolsListChanged":true,"resourceSubscriptions":["fault+mem://docs/"]}`
	hr := func(k names.Kind, tg names.Target) bool { return !strings.HasPrefix(tg.Name, "mem://docs/hr/") }
	clients := map[string]*upstreamstest.Client{}
	for id, visible := range map[string]func(names.Kind, names.Target) bool{`"all"`: nil, `"nohr"`: hr} {
		c := &upstreamstest.Client{Msgs: make(chan string, 64), Done: make(chan error, 1)}
		ctx, cancel := context.WithCancel(context.Background())
		c.Cancel = cancel
		params := `{"_meta":` + upstreamstest.Meta + `,"notifications":` + want + `}`
		go func() {
			c.Done <- ls.Listen(ctx, json.RawMessage(id), json.RawMessage(params), nil, visible, func(m []byte) error {
				c.Msgs <- string(m)
				return nil
			})
		}()
		if ack := c.Next(t); !strings.Contains(ack, `"resourceSubscriptions":["fault+mem://docs/"]`) {
			t.Fatalf("%s: acknowledgement %s", id, ack)
		}
		clients[id] = c
	}
	mcptest.WaitFor(t, "both share one stream", func() bool {
		open, _ := lb.Counts()
		feeds, subs := ls.subscribers()
		return open == 1 && feeds == 1 && subs == 2
	})
	for _, msg := range []string{
		updated("mem://docs/hr/salaries/ceo"),                             // subscribed (below mem://docs/), hidden from "nohr"
		updated("mem://payroll"),                                          // nobody subscribed
		updated("mem://docsx"),                                            // not below mem://docs/
		`{"jsonrpc":"2.0","method":"notifications/prompts/list_changed"}`, // nobody asked
		`{"jsonrpc":"2.0","method":"notifications/tasks","params":{"taskId":"t1"}}`,
		updated("mem://docs/a"),
		upstreamstest.ToolsChanged,
	} {
		lb.Notify(msg)
	}
	wantGot := map[string][]string{
		`"all"`: {"notifications/resources/updated fault+mem://docs/hr/salaries/ceo",
			"notifications/resources/updated fault+mem://docs/a", "notifications/tools/list_changed"},
		`"nohr"`: {"notifications/resources/updated fault+mem://docs/a", "notifications/tools/list_changed"},
	}
	for id, c := range clients {
		var got []string
		for len(got) == 0 || got[len(got)-1] != "notifications/tools/list_changed" {
			got = append(got, upstreamstest.Relayed(t, c.Next(t)))
		}
		if fmt.Sprint(got) != fmt.Sprint(wantGot[id]) {
			t.Errorf("%s got %q, want %q", id, got, wantGot[id])
		}
	}
	for _, c := range clients {
		c.Stop(t)
	}
}

// stalledClient is a listen through ls whose client writes the acknowledgement and then gets
// stuck on the first notification until gate is closed; got collects what it was sent.
func stalledClient(ls *Listens, notifications string, gate <-chan struct{}) (*upstreamstest.Client, *[]string) {
	var got []string
	c := upstreamstest.ListenVia(ls, `"slow"`, notifications, func(m string) error {
		got = append(got, m)
		if len(got) == 2 {
			<-gate
		}
		return nil
	})
	return c, &got
}

// TestStalledListenerIsBounded: a client that stops reading while a backend sends 20,000
// distinct one-kilobyte resources/updated below the URI it subscribed to holds a bounded queue:
// the gateway does not keep every notification for it. Once it reads again it is told, once,
// that its subscription changed, and its listen goes on.
func TestStalledListenerIsBounded(t *testing.T) {
	lb, url := upstreamstest.StartListenBackend(t)
	ls := New(singleSource(t, url))
	const n, size = 20000, 1024
	pad := strings.Repeat("x", size)
	gate := make(chan struct{})
	before := int64(upstreamstest.HeapInUse())
	c, got := stalledClient(ls, `{"resourceSubscriptions":["fault+mem://big/"]}`, gate)
	mcptest.WaitFor(t, "the stream is open", func() bool { open, _ := lb.Counts(); return open == 1 })
	lb.Notify(updated("mem://big/first"))
	for i := range n {
		lb.Notify(updated(fmt.Sprintf("mem://big/%05d/%s", i, pad)))
	}
	lb.Notify("") // the backend ends its stream once it has sent everything
	mcptest.WaitFor(t, "the backend stream has ended", func() bool { feeds, _ := ls.subscribers(); return feeds == 0 })
	grown := int64(upstreamstest.HeapInUse()) - before
	t.Logf("heap grew by %.2f MiB while %d x %d B notifications waited for a stalled client", float64(grown)/(1<<20), n, size)
	if grown > 4<<20 { // unbounded, this is over 20 MiB
		t.Errorf("heap grew by %d bytes for one stalled listener", grown)
	}

	close(gate)
	if err := <-c.Done; err != nil {
		t.Fatalf("Listen = %v", err)
	}
	var updates []string
	for _, m := range (*got)[1:] {
		if strings.Contains(m, "notifications/resources/updated") {
			updates = append(updates, upstreamstest.Relayed(t, m))
		}
	}
	if len(updates) > defaultQueueLimits.events+1 {
		t.Errorf("the stalled client was sent %d notifications, more than its queue holds", len(updates))
	}
	if last := updates[len(updates)-1]; last != "notifications/resources/updated fault+mem://big/" {
		t.Errorf("the last update was %.200s, want one for the subscription fault+mem://big/", last)
	}
	if end := (*got)[len(*got)-1]; !strings.Contains(end, `"result":{"resultType":"complete"`) {
		t.Errorf("the listen ended with %.200s, want its graceful end", end)
	}
}

// TestStalledListenerOverflowEndsListen: a stalled client with more resource subscriptions than
// its queue holds, all of them updated, cannot be told what changed even coalesced: its listen
// ends with the overflow error once it reads again, without being sent what was dropped.
// (TestSubscriberQueueBounds checks the queue's bounds meanwhile.)
func TestStalledListenerOverflowEndsListen(t *testing.T) {
	lb, url := upstreamstest.StartListenBackend(t)
	ls := New(singleSource(t, url))
	const n = 2000
	pad := strings.Repeat("x", 1000)
	uris := make([]string, n)
	subs := make([]string, n)
	for i := range uris {
		uris[i] = fmt.Sprintf("mem://r/%05d/%s", i, pad)
		subs[i] = jsonQuote("fault+" + uris[i])
	}
	gate := make(chan struct{})
	c, got := stalledClient(ls, `{"resourceSubscriptions":[`+strings.Join(subs, ",")+`]}`, gate)
	mcptest.WaitFor(t, "the stream is open", func() bool { open, _ := lb.Counts(); return open == 1 })
	for _, uri := range uris {
		lb.Notify(updated(uri))
	}
	lb.Notify("")
	mcptest.WaitFor(t, "the backend stream has ended", func() bool { feeds, _ := ls.subscribers(); return feeds == 0 })
	close(gate)
	if err := <-c.Done; err != nil {
		t.Fatalf("Listen = %v", err)
	}
	if len(*got) >= n {
		t.Errorf("the stalled client was sent %d messages for %d notifications", len(*got), n)
	}
	if last := (*got)[len(*got)-1]; !strings.Contains(last, `"id":"slow","error":{"code":-32015`) {
		t.Errorf("the listen ended with %.200s, want the overflow error", last)
	}
}

// TestListenUpdatesInNormalForm: subscriptions are acknowledged, and backend updates matched and
// relayed, in the normal form of their URIs (internal/resuri), the form policy decides on. A
// backend's URI that climbs out of the subscription by a dot segment, plain or encoded, is
// matched where it really points; one without a normal form reaches nobody.
func TestListenUpdatesInNormalForm(t *testing.T) {
	lb, url := upstreamstest.StartListenBackend(t)
	ls := New(singleSource(t, url))
	c := upstreamstest.ListenVia(ls, `"n"`, `{"toolsListChanged":true,"resourceSubscriptions":["fault+mem://docs/./"]}`, nil)
	if ack := c.Next(t); !strings.Contains(ack, `"resourceSubscriptions":["fault+mem://docs/"]`) {
		t.Fatalf("acknowledgement %s, want the subscription in normal form", ack)
	}
	mcptest.WaitFor(t, "the listen joined the backend stream", func() bool {
		open, _ := lb.Counts()
		feeds, subs := ls.subscribers()
		return open == 1 && feeds == 1 && subs == 1
	})
	for _, msg := range []string{
		updated("MEM://docs/a"),             // case of the scheme: the same resource
		updated("mem://docs/../hr/x"),       // really mem://hr/x: not subscribed
		updated("mem://docs/%2e%2e/secret"), // really mem://secret
		updated(`mem://docs/a\b`),           // no normal form
		upstreamstest.ToolsChanged,
	} {
		lb.Notify(msg)
	}
	var got []string
	for len(got) == 0 || got[len(got)-1] != "notifications/tools/list_changed" {
		got = append(got, upstreamstest.Relayed(t, c.Next(t)))
	}
	want := []string{"notifications/resources/updated fault+mem://docs/a", "notifications/tools/list_changed"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %q, want %q", got, want)
	}
	c.Stop(t)
}
