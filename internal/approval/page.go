package approval

import (
	"embed"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/mcp-gateway/gateway/internal/webpage"
)

//go:embed templates/page.html
var templateFiles embed.FS

var pageTemplate = webpage.Templates("page.html", templateFiles, "templates/page.html")

// pageData is what the template renders. Kind is "ask" (the call and its two forms), "confirm"
// (the call and the confirmation step's two forms), "outcome" or "refused".
type pageData struct {
	Kind, Title, Message string
	// Note, on a confirmation step, is said below its forms (nothing above them may move them).
	Note string
	// Style is the inline style sheet; Call the call shown.
	Style template.CSS
	Call  *callView
	// User is who is signed in; CSRF the decision forms' token; Action where they post.
	User         *webpage.User
	CSRF, Action string
	// Verdict is the recorded decision of an outcome page.
	Verdict Verdict
	// SignInAgain, on a refusal, links to a fresh sign-in for the same call.
	SignInAgain string
}

// callView is a call as the page shows it.
type callView struct {
	// Tool is the client-facing name, UpstreamTool the backend's (Renamed when they differ),
	// Upstream the backend, Subject and Issuer the caller, Client the client's name for itself.
	Tool, UpstreamTool, Upstream, Subject, Issuer, Client webpage.Name
	Renamed                                               bool
	// Title and Description are the tool's, with hidden characters made visible; Pinned says
	// they are the pinned ones, Drift how the live definition differs from the pin.
	Title, Description webpage.Text
	Pinned             bool
	Drift              string
	Args               Value
	ArgsBytes          int
	// Forwarded are the call's other params members the backend receives (Call.Forwarded),
	// nil when there are none.
	Forwarded            *Value
	ExpiresIn, ExpiresAt string
	// Hidden counts the characters made visible; LookAlike says a name looks like another,
	// ValueLookAlike that a word of the arguments does; RTL that a string or member name of
	// the arguments holds right-to-left text, which the page also shows in the order sent.
	Hidden                         int
	LookAlike, ValueLookAlike, RTL bool
}

func (s *Service) view(c Call) (*callView, error) {
	args, err := RenderArguments(c.Arguments)
	if err != nil {
		return nil, err
	}
	left := max(c.Expiry.Sub(s.now()), 0).Round(time.Second)
	v := &callView{
		Tool: webpage.NameOf(c.Tool), UpstreamTool: webpage.NameOf(c.UpstreamTool), Upstream: webpage.NameOf(c.Upstream), Renamed: c.Tool != c.UpstreamTool,
		Subject: webpage.NameOf(c.Subject), Issuer: webpage.NameOf(c.Issuer), Client: webpage.NameOf(c.Client),
		Title: webpage.Visible(c.Title), Description: webpage.Visible(c.Description), Pinned: c.Pinned,
		Drift: strings.ReplaceAll(c.Drift, ",", ", "), Args: args, ArgsBytes: len(c.Arguments),
		ExpiresIn: humanDuration(left), ExpiresAt: c.Expiry.UTC().Format("15:04:05 UTC"),
	}
	if len(c.Forwarded) > 0 {
		fwd, err := RenderArguments(c.Forwarded)
		if err != nil {
			return nil, err
		}
		v.Forwarded = &fwd
		v.Hidden += countHidden(fwd)
		v.ValueLookAlike = hasLookAlike(fwd)
		v.RTL = hasRTL(fwd)
	}
	v.Hidden += countHidden(args) + v.Title.Hidden + v.Description.Hidden
	v.ValueLookAlike = v.ValueLookAlike || hasLookAlike(args)
	v.RTL = v.RTL || hasRTL(args)
	for _, n := range []webpage.Name{v.Tool, v.UpstreamTool, v.Upstream, v.Subject, v.Issuer, v.Client} {
		v.Hidden += n.Hidden
		v.LookAlike = v.LookAlike || n.Flagged()
	}
	return v, nil
}

func (s *Service) askPage(c Call, sess *session, step byte, note string) (pageData, error) {
	v, err := s.view(c)
	if err != nil {
		return pageData{}, err
	}
	p := pageData{Kind: "ask", Title: "Approve this tool call?", Call: v, User: webpage.UserOf(sess),
		CSRF: csrfToken(sess, c.ID, step), Action: s.callPath(c.ID)}
	if step == stepConfirm {
		// The same title length and nothing more above the forms: the confirmation's Deny
		// takes the place where Approve was (where a value is unfolded, the call's text).
		p.Kind, p.Title, p.Note = "confirm", "Approve: are you sure?", note
		v.unfold()
	}
	return p, nil
}

// unfold shows every text of the call whole, for the confirmation step: its control records the
// approval, so no part of what will run (a command's tail after 240 harmless characters) may be
// behind a "Show all" the user did not open.
func (v *callView) unfold() {
	for _, n := range []*webpage.Name{&v.Tool, &v.UpstreamTool, &v.Upstream, &v.Subject, &v.Issuer, &v.Client} {
		n.Folded = false
	}
	v.Title.Folded, v.Description.Folded = false, false
	unfoldValue(&v.Args)
	if v.Forwarded != nil {
		unfoldValue(v.Forwarded)
	}
}

func unfoldValue(v *Value) {
	v.Text.Folded = false
	for i := range v.Members {
		v.Members[i].Key.Folded = false
		unfoldValue(&v.Members[i].Value)
	}
	for i := range v.Items {
		unfoldValue(&v.Items[i])
	}
}

func (s *Service) outcomePage(c Call, sess *session, v Verdict, note string) pageData {
	p := pageData{Kind: "outcome", User: webpage.UserOf(sess), Verdict: v, Message: note}
	switch v {
	case Approved:
		p.Title = "Approved"
		if note == "" {
			p.Message = "The call will run once, when your client continues. You can close this page."
		}
	case Denied:
		p.Title = "Denied"
		if note == "" {
			p.Message = "The call will not run. You can close this page."
		}
	default:
		p.Title = "Not decided"
	}
	if cv, err := s.view(c); err == nil {
		p.Call = cv
	}
	return p
}

// MaxPageBytes bounds the HTML of a call's page at its largest, the confirmation step, where
// every value is shown whole: what one view costs the replica that renders it and the browser
// that shows it. The page marks each character a person could not otherwise see (a control,
// a zero-width or direction-changing character) one by one, and shows right-to-left text twice,
// so arguments that fit a record (MaxRecordBytes) could make a page of tens of megabytes, each
// view taking seconds of a core and hundreds of megabytes to render, as often as their caller
// opens it. A call whose page would be larger is refused when it is asked (Service.Ask), as
// one too large to keep is; ordinary arguments of the largest record fit with room to spare.
const MaxPageBytes = 8 << 20

// errPageTooLarge stops rendering a page past MaxPageBytes.
var errPageTooLarge = errors.New("approval: page too large")

// pageBudget counts a page's bytes as it is rendered, and stops it past MaxPageBytes.
type pageBudget struct{ left int }

func (b *pageBudget) Write(p []byte) (int, error) {
	if b.left -= len(p); b.left < 0 {
		return 0, errPageTooLarge
	}
	return len(p), nil
}

// fitsPage reports whether the page can show call c within MaxPageBytes, at its confirmation
// step, to its caller signed in (the name a session adds is at most a few hundred bytes). It
// renders the page once, stopping at the bound: the cost of one view, at most, when the call
// is asked. A call whose arguments the page cannot show at all does not fit either.
func (s *Service) fitsPage(c Call) bool {
	p, err := s.askPage(c, &session{Issuer: c.Issuer, Subject: c.Subject}, stepConfirm, "")
	if err != nil {
		return false
	}
	p.Style = template.CSS(webpage.Style)
	return pageTemplate.Execute(&pageBudget{left: MaxPageBytes}, p) == nil
}

// render writes the page (webpage.Render).
func (s *Service) render(w http.ResponseWriter, status int, p pageData) {
	p.Style = template.CSS(webpage.Style)
	webpage.Render(w, s.log, pageTemplate, status, p)
}

func humanDuration(d time.Duration) string {
	if d <= 0 {
		return "expired"
	}
	m, sec := int(d/time.Minute), int(d%time.Minute/time.Second)
	if m == 0 {
		return fmt.Sprintf("%d s", sec)
	}
	return fmt.Sprintf("%d min %d s", m, sec)
}

func countHidden(v Value) int {
	n := v.Text.Hidden
	for _, m := range v.Members {
		n += m.Key.Hidden + countHidden(m.Value)
	}
	for _, it := range v.Items {
		n += countHidden(it)
	}
	return n
}

// hasRTL reports whether a string or member name of v holds right-to-left text (Text.RTL).
func hasRTL(v Value) bool {
	if v.Text.RTL {
		return true
	}
	for _, m := range v.Members {
		if m.Key.RTL || hasRTL(m.Value) {
			return true
		}
	}
	return slices.ContainsFunc(v.Items, hasRTL)
}

func hasLookAlike(v Value) bool {
	if v.LookAlike != "" {
		return true
	}
	for _, m := range v.Members {
		if m.KeyLookAlike != "" || hasLookAlike(m.Value) {
			return true
		}
	}
	return slices.ContainsFunc(v.Items, hasLookAlike)
}
