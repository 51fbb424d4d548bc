package pre2026

import (
	"context"
	"crypto/sha256"
	"encoding/json"

	"github.com/mcp-gateway/gateway/mcphttp"
)

// A backend's URL-mode elicitation (docs/protocol.md §9.5). A 2025-11-25 client answers it with
// accept as soon as its user was sent to the page: in that revision's URL mode accept means
// consent to go there, not that the outside flow is done. A backend that asks again until its
// flow finishes would get the same accept round after round and the call would use up
// legacy.maxRounds within a fraction of a second, before any user could finish. So when the
// backend asks again for exactly the pages the client just accepted, the edge does not ask the
// client again: it waits (with keep-alive comments on the response) and retries the backend with
// the same answers and the backend's new requestState, without counting a round, first soon
// after and then further apart (mcphttp.PacedWait), for at most legacy.askTimeout from
// the client's accept, as the gateway's own approval page waits for its decision. The call
// holds its in-flight slot meanwhile, as an ask does: that is the caller's bound. When the
// wait ends with the backend still asking, the call ends with an error that says so.

// pageWait is what a call waits on after its client accepted URL-mode elicitations.
type pageWait struct {
	// responses are the client's answers, sent again with each retry.
	responses json.RawMessage
	// pages are the accepted URL-mode elicitations: inputRequests key → digest of the URL
	// (the wait keeps no more of the backend's result than it compares).
	pages map[string][32]byte
	// wait paces the retries and gives up legacy.askTimeout after the client's accept.
	wait *mcphttp.PacedWait
}

// waitForPages is the wait of a round whose client answered URL-mode elicitations (urls,
// as urlPages read them) with responses: nil unless it accepted at least one of them.
func waitForPages(q *clientReq, urls map[string][32]byte, responses json.RawMessage) *pageWait {
	if len(urls) == 0 {
		return nil
	}
	var answers map[string]struct {
		Action string `json:"action"`
	}
	if json.Unmarshal(responses, &answers) != nil {
		return nil
	}
	pages := make(map[string][32]byte, len(urls))
	for key, url := range urls {
		if answers[key].Action == "accept" {
			pages[key] = url
		}
	}
	if len(pages) == 0 {
		return nil
	}
	return &pageWait{responses: responses, pages: pages, wait: mcphttp.NewPacedWait(q.e.now, q.e.now().Add(q.e.cfg.AskTimeout))}
}

// urlPages reads the URL-mode elicitations of an input_required result (inputRequests key →
// digest of the URL) and its requestState; only reports whether every entry is one.
func urlPages(q *clientReq, result []byte) (pages map[string][32]byte, state string, only bool) {
	reqs, state, err := q.inputRequired(result)
	if err != nil {
		return nil, "", false
	}
	pages = make(map[string][32]byte, len(reqs))
	only = true
	for _, r := range reqs {
		var p struct {
			Mode string `json:"mode"`
			URL  string `json:"url"`
		}
		if r.Method != "elicitation/create" || json.Unmarshal(r.Params, &p) != nil || p.Mode != "url" || p.URL == "" {
			only = false
			continue
		}
		pages[r.Key] = sha256.Sum256([]byte(p.URL))
	}
	return pages, state, only
}

// again reports whether asked (an input_required result) asks for exactly the pages w waits on,
// and returns its requestState for the retry.
func (w *pageWait) again(q *clientReq, asked []byte) (string, bool) {
	if w == nil || asked == nil {
		return "", false
	}
	pages, state, only := urlPages(q, asked)
	if !only || len(pages) != len(w.pages) {
		return "", false
	}
	for key, url := range pages {
		if w.pages[key] != url {
			return "", false
		}
	}
	return state, true
}

// pause waits before the next retry of w, with keep-alive comments on the response: false when
// w's bound passed (nothing more to wait for) or the request ended (ctx).
func (w *pageWait) pause(ctx context.Context, q *clientReq) bool {
	q.c.KeepAlive(true)
	defer q.c.KeepAlive(false)
	return w.wait.Pause(ctx, q.in.Waited)
}
