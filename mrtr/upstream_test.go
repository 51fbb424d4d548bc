package mrtr

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// tokenOf extracts requestState from a JSON object.
func tokenOf(t *testing.T, obj json.RawMessage) string {
	t.Helper()
	var v struct {
		RequestState *string `json:"requestState"`
	}
	if err := json.Unmarshal(obj, &v); err != nil || v.RequestState == nil {
		t.Fatalf("no requestState in %s (%v)", obj, err)
	}
	return *v.RequestState
}

func TestWrapUpstream(t *testing.T) {
	tests := []struct {
		name       string
		result     string
		wantPrefix string // the wrapped result up to the sealed token
		wantSuffix string // the wrapped result after the sealed token
		backend    string // the backend's literal, as sealed
		hasBackend bool
	}{
		{
			name:       "state replaced, rest byte-faithful",
			result:     `{ "resultType" : "input_required", "inputRequests": {"u":{"method":"roots/list"}}, "requestState" : "b-1", "x-unknown": [1, 2] }`,
			wantPrefix: `{ "resultType" : "input_required", "inputRequests": {"u":{"method":"roots/list"}}, "requestState" : "`,
			wantSuffix: `", "x-unknown": [1, 2] }`,
			backend:    `"b-1"`, hasBackend: true,
		},
		{
			name:       "state first",
			result:     `{"requestState":"a\u002fb<>","resultType":"input_required"}`,
			wantPrefix: `{"requestState":"`,
			wantSuffix: `","resultType":"input_required"}`,
			backend:    `"a\u002fb<>"`, hasBackend: true,
		},
		{
			name:       "empty backend state kept distinct from none",
			result:     `{"resultType":"input_required","requestState":""}`,
			wantPrefix: `{"resultType":"input_required","requestState":"`,
			wantSuffix: `"}`,
			backend:    `""`, hasBackend: true,
		},
		{
			name:       "no backend state: ours is added",
			result:     `{"resultType":"input_required","inputRequests":{"k":{"method":"roots/list"}} }`,
			wantPrefix: `{"resultType":"input_required","inputRequests":{"k":{"method":"roots/list"}},"requestState":"`,
			wantSuffix: `" }`,
		},
		{
			name:       "empty object",
			result:     `{ }`,
			wantPrefix: `{"requestState":"`,
			wantSuffix: `" }`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			b := testBinding(t)
			in := stateFor(b, KindConfirm) // Kind is forced to upstream
			in.Confirmed = true
			out, err := f.codec.WrapUpstream(json.RawMessage(tc.result), in)
			if err != nil {
				t.Fatal(err)
			}
			s := string(out)
			if !strings.HasPrefix(s, tc.wantPrefix) || !strings.HasSuffix(s, tc.wantSuffix) {
				t.Fatalf("got  %s\nwant %s<token>%s", s, tc.wantPrefix, tc.wantSuffix)
			}
			tok := tokenOf(t, out)
			if tc.hasBackend && tc.backend != `""` && strings.Contains(s, tc.backend[1:len(tc.backend)-1]) {
				t.Fatal("backend state visible to the client")
			}
			st, err := f.codec.Open(tok, b)
			if err != nil {
				t.Fatalf("Open wrapped state: %v", err)
			}
			if st.Kind != KindUpstream || !st.Confirmed || st.UpstreamState != tc.backend || st.HasUpstreamState != tc.hasBackend {
				t.Fatalf("opened %+v, want upstream confirmed state %q (has=%v)", st, tc.backend, tc.hasBackend)
			}
		})
	}
}

func TestWrapUpstreamRejects(t *testing.T) {
	f := newFixture(t)
	for _, in := range []string{
		``, `[]`, `"x"`, `{"requestState":1}`, `{"requestState":null}`,
		`{"requestState":"a","requestState":"b"}`, `{"a":1} {}`, `{"a":`,
	} {
		t.Run(in, func(t *testing.T) {
			if _, err := f.codec.WrapUpstream(json.RawMessage(in), stateFor(testBinding(t), KindUpstream)); !errors.Is(err, ErrUpstreamResult) {
				t.Fatalf("got %v, want ErrUpstreamResult", err)
			}
		})
	}
}

func TestRetryParams(t *testing.T) {
	up := &State{Kind: KindUpstream, UpstreamState: `"b\"1"`, HasUpstreamState: true}
	upNone := &State{Kind: KindUpstream}
	confirm := &State{Kind: KindConfirm}
	tests := []struct {
		name   string
		params string
		st     *State
		want   string
	}{
		{"upstream state restored", `{"name":"t","arguments":{"a":1},"inputResponses":{"k":{"action":"accept"}},"requestState":"v1.gw.x"}`, up,
			`{"name":"t","arguments":{"a":1},"inputResponses":{"k":{"action":"accept"}},"requestState":"b\"1"}`},
		{"upstream without state: removed (last)", `{"name":"t", "inputResponses":{}, "requestState":"v1.gw.x"}`, upNone,
			`{"name":"t", "inputResponses":{}}`},
		{"upstream without state: removed (first)", `{"requestState":"v1.gw.x", "name":"t"}`, upNone,
			`{"name":"t"}`},
		{"upstream without state: removed (only)", `{ "requestState":"v1.gw.x" }`, upNone,
			`{  }`},
		{"confirm strips both", `{"name":"t","requestState":"v1.gw.x","arguments":{"x":[1]},"inputResponses":{"c":{}},"_meta":{"p":1}}`, confirm,
			`{"name":"t","arguments":{"x":[1]},"_meta":{"p":1}}`},
		{"confirm strips both, adjacent last", `{"name":"t","inputResponses":{"c":{}},"requestState":"v1.gw.x"}`, confirm,
			`{"name":"t"}`},
		{"nothing to strip", `{"name":"t"}`, confirm, `{"name":"t"}`},
		// The page's approval answers the gateway too: answers a client adds to that retry
		// (ones the backend would ask for later) reach no backend, unseen by the person.
		{"approval strips both", `{"name":"t","arguments":{},"inputResponses":{"io.mcp-gateway/confirm":{"action":"accept"},"which":{"action":"accept","content":{"path":"/etc"}}},"requestState":"v1.gw.x"}`,
			&State{Kind: KindApproval}, `{"name":"t","arguments":{}}`},
		{"nested keys untouched", `{"arguments":{"requestState":"keep","inputResponses":1},"requestState":"v1"}`, confirm,
			`{"arguments":{"requestState":"keep","inputResponses":1}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := RetryParams(json.RawMessage(tc.params), tc.st)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
			if !json.Valid(got) {
				t.Fatalf("invalid JSON %s", got)
			}
		})
	}
}

func TestRetryParamsRejects(t *testing.T) {
	for _, in := range []string{``, `null`, `{"requestState":"a","requestState":"b"}`, `{"inputResponses":{},"inputResponses":{}}`} {
		t.Run(in, func(t *testing.T) {
			if _, err := RetryParams(json.RawMessage(in), &State{Kind: KindConfirm}); !errors.Is(err, ErrInvalidParams) {
				t.Fatalf("got %v, want ErrInvalidParams", err)
			}
		})
	}
}

// TestUpstreamRoundTrip follows a backend round trip through the gateway:
// wrap the backend's result, open the client's retry, forward the original.
func TestUpstreamRoundTrip(t *testing.T) {
	f := newFixture(t)
	b := testBinding(t)
	backendResult := `{"resultType":"input_required","inputRequests":{"gh_user":{"method":"elicitation/create","params":{"mode":"form","message":"GitHub user?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}}},"requestState":"opaque-backend-state"}`
	wrapped, err := f.codec.WrapUpstream(json.RawMessage(backendResult), stateFor(b, KindUpstream))
	if err != nil {
		t.Fatal(err)
	}
	retry := `{"name":"github__create_issue","arguments":{"labels":["p1"],"title":"bug"},"inputResponses":{"gh_user":{"action":"accept","content":{"name":"octocat"}}},"requestState":"` + tokenOf(t, wrapped) + `"}`
	st, err := f.codec.Open(tokenOf(t, json.RawMessage(retry)), b)
	if err != nil {
		t.Fatal(err)
	}
	fwd, err := RetryParams(json.RawMessage(retry), st)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"name":"github__create_issue","arguments":{"labels":["p1"],"title":"bug"},"inputResponses":{"gh_user":{"action":"accept","content":{"name":"octocat"}}},"requestState":"opaque-backend-state"}`
	if string(fwd) != want {
		t.Fatalf("forwarded %s\nwant      %s", fwd, want)
	}
}

// TestUpstreamStateKeptByteForByte: a backend's requestState is opaque, so it goes back as
// the literal the backend's JSON spelt, whatever decoding would make of it: a lone or
// reversed surrogate escape (decoded to U+FFFD), escapes of characters that need none,
// escapes in either case of hex, raw bytes that are not UTF-8, and raw separators.
func TestUpstreamStateKeptByteForByte(t *testing.T) {
	f := newFixture(t)
	b := testBinding(t)
	for _, lit := range []string{
		`"\ud800"`, `"x\udc00y"`, `"\udc00\ud800"`, `"\ud83d\ude00"`, `"\uD83D\uDE00"`,
		`"\u0041\/\u002F"`, `"\"\\\b\f\n\r\t"`, `"<>&\u003c"`, "\"\xff\xfe\"", "\"\u2028\u2029\"",
		`"\u0000"`,
	} {
		t.Run(lit, func(t *testing.T) {
			res := `{"resultType":"input_required","requestState":` + lit + `}`
			wrapped, err := f.codec.WrapUpstream(json.RawMessage(res), stateFor(b, KindUpstream))
			if err != nil {
				t.Fatal(err)
			}
			st, err := f.codec.Open(tokenOf(t, wrapped), b)
			if err != nil {
				t.Fatal(err)
			}
			retry := `{"name":"t","requestState":"` + tokenOf(t, wrapped) + `"}`
			fwd, err := RetryParams(json.RawMessage(retry), st)
			if err != nil {
				t.Fatal(err)
			}
			if want := `{"name":"t","requestState":` + lit + `}`; string(fwd) != want {
				t.Fatalf("forwarded %q\nwant      %q", fwd, want)
			}
		})
	}
}

// TestUpstreamStateSealedBeforeLiterals: a state sealed by a gateway that kept the decoded
// string (no flagRawUpstream) still opens, its string re-encoded, so a round trip begun
// before an upgrade completes after it.
func TestUpstreamStateSealedBeforeLiterals(t *testing.T) {
	in := State{Kind: KindUpstream, Method: MethodToolsCall, UpstreamState: `b"1`, HasUpstreamState: true}
	raw, err := in.marshal()
	if err != nil {
		t.Fatal(err)
	}
	raw[2] &^= flagRawUpstream
	var out State
	if err := out.unmarshal(raw); err != nil {
		t.Fatal(err)
	}
	if out.UpstreamState != `"b\"1"` || !out.HasUpstreamState {
		t.Fatalf("opened %q (has=%v), want the literal %q", out.UpstreamState, out.HasUpstreamState, `"b\"1"`)
	}
	// What a replica of an earlier release opens is what this one seals whenever it can: a
	// literal encoding its string spells again is sealed as that string, without the flag.
	for lit, flagged := range map[string]bool{`"b-1"`: false, `"b\"1"`: false, `""`: false,
		`"\ud800"`: true, `"a\/b"`: true, `"\u0041"`: true, "\"\xff\"": true} {
		st := State{Kind: KindUpstream, Method: MethodToolsCall, UpstreamState: lit, HasUpstreamState: true}
		b, err := st.marshal()
		if err != nil {
			t.Fatal(err)
		}
		if got := b[2]&flagRawUpstream != 0; got != flagged {
			t.Errorf("%s sealed with flagRawUpstream %v, want %v", lit, got, flagged)
		}
		var back State
		if err := back.unmarshal(b); err != nil || back.UpstreamState != lit {
			t.Errorf("%s opened as %q (%v)", lit, back.UpstreamState, err)
		}
	}
	raw[2] = flagRawUpstream // a literal without a state is no state this gateway seals
	if err := out.unmarshal(raw); err == nil {
		t.Fatal("flagRawUpstream without flagHasUpstream opened")
	}
}
