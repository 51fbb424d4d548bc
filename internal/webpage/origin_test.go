package webpage_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/mcp-gateway/gateway/internal/testsupport/browsertest"
	"github.com/mcp-gateway/gateway/internal/webpage"
)

// TestFromPageAnySpellingOfBase: a decision POST from the pages carries the Origin a browser
// serialises for them, which is one spelling of the pages' origin, and the configured base URL
// may be written in another: with its scheme's default port, in capitals, an internationalised
// name in Unicode, an IPv6 address uncompressed, a port with a leading zero. Each is the same
// origin, and the pages' own forms are taken. Before, Origin was compared with the base's
// scheme and authority as written, so with baseURL https://gw.example.com:443 every Approve,
// Deny and Connect was refused as coming from another site. Other origins stay refused.
func TestFromPageAnySpellingOfBase(t *testing.T) {
	for _, tt := range []struct {
		base, origin string
		same         bool
	}{
		{"https://gw.example.com", "https://gw.example.com", true},
		{"https://gw.example.com:443", "https://gw.example.com", true},
		{"https://gw.example.com:443/team-a", "https://gw.example.com", true},
		{"http://localhost:80", "http://localhost", true},
		{"https://gw.example.com:0443", "https://gw.example.com", true},
		{"https://gw.example.com:08443", "https://gw.example.com:8443", true},
		{"HTTPS://GW.Example.COM", "https://gw.example.com", true},
		{"https://bücher.example", "https://xn--bcher-kva.example", true},
		{"https://BÜCHER.example", "https://xn--bcher-kva.example", true},
		{"http://[0:0:0:0:0:0:0:1]:8080", "http://[::1]:8080", true},
		{"http://[::1]:8080", "http://[::1]:8080", true},
		{"https://my_host.example", "https://my_host.example", true},

		{"https://gw.example.com", "https://gw.example.com:8443", false},
		{"https://gw.example.com:8443", "https://gw.example.com", false},
		{"https://gw.example.com", "http://gw.example.com", false},
		{"https://gw.example.com:443", "https://gw.example.com:80", false},
		{"http://gw.example.com:80", "http://gw.example.com:443", false},
		{"https://gw.example.com", "https://other.example.com", false},
		{"https://gw.example.com", "https://gw.example.com.evil.example", false},
		{"https://bücher.example", "https://bucher.example", false},
		{"https://gw.example.com", "null", false},
		{"https://gw.example.com", "", false},
		{"https://gw.example.com", "https://", false},
		{"https://gw.example.com", "ftp://gw.example.com", false},
		{"https://gw.example.com", "https://gw.example.com:99999", false},
		{"http://[::1]:8080", "http://[::1%25lo]:8080", false},
	} {
		h := http.Header{"Origin": {tt.origin}, "Sec-Fetch-Site": {"same-origin"}}
		if got := webpage.FromPage(h, tt.base); got != tt.same {
			t.Errorf("base %s, Origin %q: from the page %v, want %v", tt.base, tt.origin, got, tt.same)
		}
	}
}

// TestFromPageSpellingsInBrowser: in a real browser, a form of a page reached at a spelling of
// its origin other than the one the browser serialises (an IPv6 address uncompressed, a port
// with a leading zero, capitals) posts with the browser's Origin, and FromPage, given the
// spelling the page was reached at as its base, takes it.
func TestFromPageSpellingsInBrowser(t *testing.T) {
	l, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	type post struct {
		origin string
		taken  bool
	}
	posts := make(chan post, 1)
	base := make(chan string, 1)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		webpage.SetSecurityHeaders(w.Header())
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if r.Method == http.MethodPost {
			posts <- post{r.Header.Get("Origin"), webpage.FromPage(r.Header, <-base)}
			_, _ = w.Write([]byte(`<!DOCTYPE html><title>done</title><p id="done">done</p>`))
			return
		}
		_, _ = w.Write([]byte(`<!DOCTYPE html><title>page</title><form method="post" action="/decide"><button id="go">Go</button></form>`))
	}))
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)

	tab := browsertest.Tab(t, browsertest.New(t))
	for _, spelling := range []string{
		"http://[0:0:0:0:0:0:0:1]:" + port,
		"http://[::1]:0" + port,
		"HTTP://[0::1]:" + port,
	} {
		browsertest.Step(t, tab, "open "+spelling, chromedp.Navigate(spelling+"/"))
		browsertest.WaitFor(t, tab, "#go")
		base <- spelling
		browsertest.ClickOn(t, tab, "#go")
		select {
		case p := <-posts:
			if !p.taken {
				t.Errorf("a form of the page at %s, posted with Origin %q, was refused as another site's", spelling, p.origin)
			}
		case <-time.After(browsertest.StepTimeout):
			t.Fatalf("no POST from the page at %s", spelling)
		}
		browsertest.WaitFor(t, tab, "#done")
	}
}
