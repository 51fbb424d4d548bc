package mcphttp

import (
	"context"
	"errors"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/upstreams"
)

// Only listed names are forwarded (stage bind-headers). Policy rules, tool sets, confirmation
// rules, step-up scopes, rate limits, interceptors and guardrails all match names exactly; a
// backend that looks a tool or prompt up case-insensitively, trims it or folds Unicode would run
// its delete_repo for a call to "Delete_Repo", "delete_repo " or "ｄelete_repo", which no rule
// for delete_repo judged. So a tools/call or prompts/get (and a completion whose ref names a
// prompt) goes on only when its backend-side name is exactly one its backend's list shows this
// caller: the list the catalog holds for the caller (its own, for a backend whose lists are
// private), else one fetched now, once for all callers waiting on it. Any other name is an
// unknown tool or prompt (-32602), the answer a name the policy hides gets, and nothing is
// forwarded. A list that cannot be fetched fails the call: the name cannot be checked.

// listedEntry returns target's entry in its backend's tools list as x's caller sees it (see
// listedToolHeaders): the held list's when there is one, else a list fetched now. A name the
// list does not show is refused as an unknown tool.
func listedEntry(x *request, target upstreams.Target) (*upstreams.ToolHeaders, error) {
	// The held list first: the trace headers a fetch passes on are made only for a fetch.
	th, err := listedToolHeaders(x, target, false)
	if err == nil && th == nil {
		th, err = listedToolHeaders(x, target, true)
	}
	if err != nil {
		return nil, unlistedError(upstreams.KindTool, err)
	}
	return th, nil
}

// checkListedPrompt refuses a prompts/get, or a completion of a prompt's argument, whose prompt
// is not exactly one its backend's prompts list shows x's caller.
func checkListedPrompt(x *request, target upstreams.Target) error {
	q := listQuery(x, target, true)
	if err := x.s.backends.PromptListed(x.ctx, &q, target); err != nil {
		return unlistedError(upstreams.KindPrompt, err)
	}
	return nil
}

// unlistedError is the answer when the name check of a kind's item fails with err: an unknown
// tool or prompt for a name the list does not show; for a list that could not be fetched, the
// fetch's error, saying that the call was not forwarded because of it.
func unlistedError(kind upstreams.Kind, err error) error {
	if errors.Is(err, upstreams.ErrUnknownName) {
		return errUnknownName(kindNoun(kind))
	}
	e := mapError(err)
	if e.RPC == nil || e.Status == 499 {
		return err
	}
	list := "tools/list"
	if kind == upstreams.KindPrompt {
		list = "prompts/list"
	}
	out := *e
	out.RPC = jsonrpc.NewError(e.RPC.Code, e.RPC.Message+" (its "+list+
		", which the gateway reads to check the name); the call was not forwarded")
	return &out
}

// resourceSpelling is how a resource URI or template the request x routes to (resources/read, a
// completion of a template) is written toward its backend: the spelling the backend listed for
// its normal form, or a URI under a template respelt as the backend spelt the template, else
// its URI form (catalog.ResourceSpelling; docs/protocol.md). Any other
// request sends its name as it is ("").
func resourceSpelling(x *request, target upstreams.Target) string {
	if x.route.kind != upstreams.KindResource {
		return ""
	}
	return resourceSpeller(x)(x.ctx, target)
}

// resourceSpeller returns resourceSpelling's lookup for any resource URI of x's caller: a
// listen's subscriptions go to their backends in the spelling a read of the same URI goes in
// (upstreams.ListenCaller.Spell). What it needs of x's decoded request is taken now, so it may
// be called after x is shed. A lookup may fetch the lists a URI is spelt from, its backend's
// resources/templates/list and resources/list (catalog.ResourceSpelling), plain-ASCII URIs
// included. It fetches them at most once per backend, for the first URI of that backend:
// later URIs of that backend are spelt from what that fetch left in the catalog (their URI
// form if nothing), so a listen naming many URIs costs a backend whose lists fail one request
// per list, not one per URI. Not for concurrent use.
func resourceSpeller(x *request) func(context.Context, upstreams.Target) string {
	base := listQuery(x, upstreams.Target{}, true)
	var fetched map[string]bool // the backends a lookup was let fetch for
	return func(ctx context.Context, target upstreams.Target) string {
		q := base
		q.SubjectToken = x.subjectToken(target.Upstream)
		q.SubjectKey = x.caller.keyOf(q.SubjectToken)
		q.Fetch = !fetched[target.Upstream]
		if fetched == nil {
			fetched = make(map[string]bool, 1)
		}
		fetched[target.Upstream] = true
		return x.s.backends.ResourceSpelling(ctx, &q, target)
	}
}
