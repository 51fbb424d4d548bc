package listen

import (
	"io"
	"net/http"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams/internal/upstreamstest"
)

// TestListenEndsWhenOneBackendStreamBreaks: a listen with streams to two backends, one of which
// ends after it started (the backend dropped it, or answered it), ends gracefully instead of
// going on with the other alone, its client none the wiser that it hears nothing more of the
// first; listening again opens the first's stream again, and its notifications arrive.
func TestListenEndsWhenOneBackendStreamBreaks(t *testing.T) {
	for name, end := range map[string]string{
		"dropped":  "",
		"answered": `{"jsonrpc":"2.0","id":"L","result":{"resultType":"complete"}}`,
	} {
		t.Run(name, func(t *testing.T) {
			a, aURL := upstreamstest.StartListenBackend(t)
			b, bURL := upstreamstest.StartListenBackend(t)
			ls := New(newTestSource(t, modernConfig("a", aURL), modernConfig("b", bURL)))
			bothOpen := func() bool { oa, _ := a.Counts(); ob, _ := b.Counts(); return oa == 1 && ob == 1 }
			c := upstreamstest.ListenVia(ls, `"L"`, `{"toolsListChanged":true}`, nil)
			c.Next(t) // the acknowledgement
			mcptest.WaitFor(t, "both backend streams open", bothOpen)
			a.Notify(end)
			want := `{"jsonrpc":"2.0","id":"L","result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":"L"}}}`
			if got := c.Next(t); got != want {
				t.Fatalf("after a's stream ended the listen got %s, want its graceful end %s", got, want)
			}
			if err := <-c.Done; err != nil {
				t.Fatal(err)
			}
			mcptest.WaitFor(t, "b's stream closed with its last listener", func() bool { ob, _ := b.Counts(); return ob == 0 })
			again := upstreamstest.ListenVia(ls, `"L"`, `{"toolsListChanged":true}`, nil)
			again.Next(t)
			mcptest.WaitFor(t, "both backend streams open again", bothOpen)
			a.Notify(upstreamstest.ToolsChanged)
			upstreamstest.WantChanged(t, again.Next(t), `"L"`)
			again.Stop(t)
		})
	}
}

// TestListenKeepsOnWithoutABackendThatRefuses: a backend that answers the listen at once with an
// error never took it: it is left out, and the listen goes on with the other backend rather than
// ending every time it is opened again.
func TestListenKeepsOnWithoutABackendThatRefuses(t *testing.T) {
	refusing := upstreamstest.Loopback(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Header.Get("Mcp-Method") == "server/discover" {
			upstreamstest.WriteJSON(w, `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete",`+
				`"capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"refusing","version":"1"}}}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		upstreamstest.SSEEvent(w, `{"jsonrpc":"2.0","id":`+upstreamstest.RequestID(body)+`,"error":{"code":-32602,"message":"no"}}`)
	}))
	b, bURL := upstreamstest.StartListenBackend(t)
	ls := New(newTestSource(t, modernConfig("a", refusing+"/mcp"), modernConfig("b", bURL)))
	c := upstreamstest.ListenVia(ls, `"L"`, `{"toolsListChanged":true}`, nil)
	c.Next(t) // the acknowledgement
	mcptest.WaitFor(t, "the refused stream gone, b's open", func() bool {
		feeds, _ := ls.subscribers()
		ob, _ := b.Counts()
		return feeds == 1 && ob == 1
	})
	b.Notify(upstreamstest.ToolsChanged)
	upstreamstest.WantChanged(t, c.Next(t), `"L"`)
	c.Stop(t)
}
