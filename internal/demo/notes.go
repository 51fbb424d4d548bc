package demo

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Limits that keep the in-memory notes store bounded.
const (
	maxNotes     = 1000
	maxTitleLen  = 200
	maxBodyLen   = 64 << 10
	noteURIBase  = "note://"
	noteIndexURI = "note://index"
)

// Errors of the notes backend; tools report them as isError results.
var (
	ErrNoteNotFound = errors.New("note not found")
	ErrNoteInvalid  = errors.New("invalid note")
	ErrNotesFull    = errors.New("note store is full")
)

// Note is one stored note.
type Note struct {
	// ID is the note's identifier, a decimal number assigned in order.
	ID string `json:"id"`
	// Title is a one-line title.
	Title string `json:"title"`
	// Body is the note's text.
	Body string `json:"body,omitempty"`
	// Created is when the note was added.
	Created time.Time `json:"created"`
}

// noteStore keeps notes in memory. Its state lives in the backend process,
// which is what makes the server's protocol stateless: every request names
// the note it means.
type noteStore struct {
	mu    sync.Mutex
	next  int
	notes map[string]Note
	now   func() time.Time
}

func (s *noteStore) add(title, body string) (Note, error) {
	title = strings.TrimSpace(title)
	if title == "" || len(title) > maxTitleLen || strings.ContainsAny(title, "\r\n") || len(body) > maxBodyLen {
		return Note{}, fmt.Errorf("%w: title must be 1..%d characters on one line, body at most %d bytes", ErrNoteInvalid, maxTitleLen, maxBodyLen)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.notes) >= maxNotes {
		return Note{}, fmt.Errorf("%w (%d notes)", ErrNotesFull, maxNotes)
	}
	s.next++
	n := Note{ID: strconv.Itoa(s.next), Title: title, Body: body, Created: s.now().UTC()}
	s.notes[n.ID] = n
	return n, nil
}

func (s *noteStore) get(id string) (Note, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, ok := s.notes[id]
	if !ok {
		return Note{}, fmt.Errorf("%w: %q", ErrNoteNotFound, id)
	}
	return n, nil
}

func (s *noteStore) delete(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.notes[id]; !ok {
		return fmt.Errorf("%w: %q", ErrNoteNotFound, id)
	}
	delete(s.notes, id)
	return nil
}

// search returns the notes whose title or body contains query, ignoring
// case, in id order; an empty query matches every note.
func (s *noteStore) search(query string) []Note {
	q := strings.ToLower(query)
	s.mu.Lock()
	out := make([]Note, 0, len(s.notes))
	for _, n := range s.notes {
		if strings.Contains(strings.ToLower(n.Title), q) || strings.Contains(strings.ToLower(n.Body), q) {
			out = append(out, n)
		}
	}
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b Note) int {
		x, _ := strconv.Atoi(a.ID)
		y, _ := strconv.Atoi(b.ID)
		return x - y
	})
	return out
}

type notesServer struct {
	store *noteStore
	mcp   *mcp.Server
}

type titleBodyIn struct {
	Title string `json:"title" jsonschema:"a one-line title"`
	Body  string `json:"body,omitempty" jsonschema:"the note's text"`
}

type idIn struct {
	ID string `json:"id" jsonschema:"the note's id, as returned by add_note or list_notes"`
}

type queryIn struct {
	Query string `json:"query" jsonschema:"text to look for in titles and bodies, ignoring case"`
}

type noInput struct{}

type notesOut struct {
	Notes []Note `json:"notes"`
}

func newNotesServer(logger *slog.Logger, d deps) *mcp.Server {
	ns := &notesServer{store: &noteStore{notes: map[string]Note{}, now: d.now}}
	ns.mcp = mcp.NewServer(&mcp.Implementation{Name: NotesName, Version: Version}, &mcp.ServerOptions{
		Logger:       logger,
		Instructions: "A notebook: add, list, search, read and delete short notes. Notes are also resources note://{id}.",
	})
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)}
	mcp.AddTool(ns.mcp, &mcp.Tool{Name: "add_note", Description: "Adds a note and returns it with its id.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: new(false), OpenWorldHint: new(false)}}, ns.addNote)
	mcp.AddTool(ns.mcp, &mcp.Tool{Name: "list_notes", Description: "Lists all notes, oldest first.", Annotations: readOnly}, ns.listNotes)
	mcp.AddTool(ns.mcp, &mcp.Tool{Name: "search_notes", Description: "Finds notes whose title or body contains the query.", Annotations: readOnly}, ns.searchNotes)
	mcp.AddTool(ns.mcp, &mcp.Tool{Name: "get_note", Description: "Returns one note with its body.", Annotations: readOnly}, ns.getNote)
	mcp.AddTool(ns.mcp, &mcp.Tool{Name: "delete_note", Description: "Deletes a note for good.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: new(true), IdempotentHint: true, OpenWorldHint: new(false)}}, ns.deleteNote)
	ns.mcp.AddResource(&mcp.Resource{URI: noteIndexURI, Name: "index", Description: "Every note's id and title.", MIMEType: "text/markdown"}, ns.readIndex)
	ns.mcp.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "note://{id}", Name: "note", Description: "One note as Markdown.", MIMEType: "text/markdown"}, ns.readNote)
	ns.mcp.AddPrompt(&mcp.Prompt{Name: "summarize_notes", Description: "Asks for a summary of the notes, optionally only those matching a query.",
		Arguments: []*mcp.PromptArgument{{Name: "query", Description: "only notes containing this text"}}}, ns.summarize)
	return ns.mcp
}

func (ns *notesServer) addNote(_ context.Context, _ *mcp.CallToolRequest, in titleBodyIn) (*mcp.CallToolResult, Note, error) {
	n, err := ns.store.add(in.Title, in.Body)
	if err != nil {
		return nil, Note{}, err
	}
	// Listing each note as a resource lets clients browse them; go-sdk
	// sends resources/list_changed to listeners.
	ns.mcp.AddResource(&mcp.Resource{URI: noteURIBase + n.ID, Name: n.Title, MIMEType: "text/markdown"}, ns.readNote)
	return textResult(fmt.Sprintf("Added note %s: %s", n.ID, n.Title)), n, nil
}

func (ns *notesServer) listNotes(context.Context, *mcp.CallToolRequest, noInput) (*mcp.CallToolResult, notesOut, error) {
	notes := ns.store.search("")
	return textResult(titles(notes)), notesOut{Notes: withoutBodies(notes)}, nil
}

func (ns *notesServer) searchNotes(_ context.Context, _ *mcp.CallToolRequest, in queryIn) (*mcp.CallToolResult, notesOut, error) {
	notes := ns.store.search(in.Query)
	return textResult(titles(notes)), notesOut{Notes: withoutBodies(notes)}, nil
}

func (ns *notesServer) getNote(_ context.Context, _ *mcp.CallToolRequest, in idIn) (*mcp.CallToolResult, Note, error) {
	n, err := ns.store.get(in.ID)
	if err != nil {
		return nil, Note{}, err
	}
	return textResult(markdown(n)), n, nil
}

func (ns *notesServer) deleteNote(_ context.Context, _ *mcp.CallToolRequest, in idIn) (*mcp.CallToolResult, any, error) {
	if err := ns.store.delete(in.ID); err != nil {
		return nil, nil, err
	}
	ns.mcp.RemoveResources(noteURIBase + in.ID)
	return textResult("Deleted note " + in.ID), nil, nil
}

func (ns *notesServer) readIndex(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
		{URI: req.Params.URI, MIMEType: "text/markdown", Text: titles(ns.store.search(""))},
	}}, nil
}

// readNote serves note://{id}; a missing note is the spec's
// resource-not-found, -32602 (§5.3).
func (ns *notesServer) readNote(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	id, _ := strings.CutPrefix(req.Params.URI, noteURIBase)
	n, err := ns.store.get(id)
	if err != nil {
		return nil, mcp.ResourceNotFoundError(req.Params.URI)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
		{URI: req.Params.URI, MIMEType: "text/markdown", Text: markdown(n)},
	}}, nil
}

func (ns *notesServer) summarize(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	notes := ns.store.search(req.Params.Arguments["query"])
	var b strings.Builder
	b.WriteString("Summarize these notes in a few bullet points, naming each note's id.\n")
	if len(notes) == 0 {
		b.WriteString("\n(There are no notes.)\n")
	}
	for _, n := range notes {
		b.WriteString("\n" + markdown(n))
	}
	return &mcp.GetPromptResult{
		Description: fmt.Sprintf("Summary of %d notes", len(notes)),
		Messages:    []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: b.String()}}},
	}, nil
}

func textResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func markdown(n Note) string {
	return fmt.Sprintf("# %s\n\nNote %s, created %s.\n\n%s\n", n.Title, n.ID, n.Created.Format(time.RFC3339), n.Body)
}

func titles(notes []Note) string {
	if len(notes) == 0 {
		return "No notes."
	}
	var b strings.Builder
	for _, n := range notes {
		fmt.Fprintf(&b, "- %s: %s\n", n.ID, n.Title)
	}
	return b.String()
}

func withoutBodies(notes []Note) []Note {
	out := make([]Note, len(notes))
	for i, n := range notes {
		n.Body = ""
		out[i] = n
	}
	return out
}
