package era

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestNormalizeClientCaps(t *testing.T) {
	tests := []struct{ name, in, want, written string }{
		{"absent", ``, `{}`, ""},
		{"empty", `{}`, `{}`, ""},
		{"2025-06-18 elicitation", `{"elicitation":{}}`, `{"elicitation":{"form":{}}}`, ""},
		{"2025-11-25 form and url", `{"elicitation":{"form":{},"url":{}}}`, `{"elicitation":{"form":{},"url":{}}}`, ""},
		{"url only", `{"elicitation":{"url":{}}}`, `{"elicitation":{"url":{}}}`, ""},
		{"form members dropped", `{"elicitation":{"form":{"applyDefaults":true}}}`, `{"elicitation":{"form":{}}}`, ""},
		{"mode not an object", `{"elicitation":{"url":true}}`, `{"elicitation":{"form":{}}}`, ""},
		{"roots listChanged", `{"roots":{"listChanged":true}}`, `{"roots":{}}`, ""},
		{"sampling", `{"sampling":{}}`, `{"sampling":{}}`, ""},
		{"sampling tools context", `{"sampling":{"tools":{},"context":{},"x":1}}`, `{"sampling":{"context":{},"tools":{}}}`, ""},
		{"dropped members", `{"tasks":{"requests":{}},"experimental":{"a":{}},"extensions":{"io.modelcontextprotocol/tasks":{}},"x":{}}`, `{}`, ""},
		{"not objects", `{"roots":true,"sampling":null,"elicitation":[]}`, `{}`, ""},
		{"everything, any order", ` {"sampling":{"tools":{}} , "roots":{"listChanged":false},"elicitation":{}}`,
			`{"elicitation":{"form":{}},"roots":{},"sampling":{"tools":{}}}`, ""},
		// Written before elicitation had modes: any elicitation object is elicitation, form.
		{"url only, written for 2025-06-18", `{"elicitation":{"url":{}}}`, `{"elicitation":{"form":{}}}`, V20250618},
		{"form and url, written for 2025-06-18", `{"elicitation":{"form":{},"url":{}}}`, `{"elicitation":{"form":{}}}`, V20250618},
		{"url only, written for 2024-11-05", `{"elicitation":{"url":{}}}`, `{"elicitation":{"form":{}}}`, "2024-11-05"},
		{"url only, written for 2025-11-25", `{"elicitation":{"url":{}}}`, `{"elicitation":{"url":{}}}`, V20251125},
		{"url only, written for no revision", `{"elicitation":{"url":{}}}`, `{"elicitation":{"url":{}}}`, "latest"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := NormalizeClientCaps(json.RawMessage(tt.in), tt.written)
			if err != nil || string(got) != tt.want {
				t.Fatalf("got %s, %v; want %s", got, err, tt.want)
			}
			again, err := NormalizeClientCaps(got, tt.written)
			if err != nil || string(again) != string(got) {
				t.Fatalf("not idempotent: %s -> %s, %v", got, again, err)
			}
		})
	}
	for _, bad := range []string{`[]`, `"x"`, `null`, `1`, `{"a":1,"a":2}`, `{"elicitation":{}`, `{} {}`} {
		if got, err := NormalizeClientCaps(json.RawMessage(bad), V20251125); err == nil {
			t.Errorf("NormalizeClientCaps(%s) = %s, want an error", bad, got)
		}
	}
	all := ClientCaps{true, true, true, true, true, true}.JSON()
	if len(all) > MaxClientCapsBytes {
		t.Fatalf("the largest normalised capabilities take %d bytes", len(all))
	}
}

func TestDeclares(t *testing.T) {
	caps := json.RawMessage(`{"elicitation":{"form":{}},"sampling":{"tools":{}}}`)
	for cap, want := range map[string]bool{CapElicitationForm: true, CapElicitationURL: false, CapSampling: true,
		CapSamplingTools: true, CapSamplingContext: false, CapRoots: false, "elicitation": false, "": false} {
		if got := Declares(caps, cap); got != want {
			t.Errorf("Declares(%q) = %v, want %v", cap, got, want)
		}
	}
	if !Declares(json.RawMessage(`{"elicitation":{}}`), CapElicitationForm) {
		t.Error("elicitation:{} should declare form mode")
	}
	for _, bad := range []string{``, `{}`, `[1]`, `{"roots":{}`, `{"roots":{},"roots":{}}`} {
		for _, cap := range []string{CapRoots, CapSampling, CapElicitationForm} {
			if Declares(json.RawMessage(bad), cap) {
				t.Errorf("Declares(%s, %q) = true", bad, cap)
			}
		}
	}
}

func TestClientCapsForVersion(t *testing.T) {
	all := ClientCaps{true, true, true, true, true, true}
	if got := all.ForVersion(V20251125); got != all {
		t.Errorf("2025-11-25 lost %+v", got)
	}
	got := all.ForVersion(V20250618)
	if got.ElicitationURL || got.SamplingTools || !got.ElicitationForm || !got.Sampling || !got.SamplingContext || !got.Roots {
		t.Errorf("2025-06-18 kept %+v", got)
	}
	if j := string(got.JSON()); strings.Contains(j, "url") || strings.Contains(j, "tools") {
		t.Errorf("2025-06-18 JSON %s", j)
	}
	// 2025-03-26 has no elicitation at all: sampling (with context) and roots stay.
	got = all.ForVersion(V20250326)
	if got != (ClientCaps{Roots: true, Sampling: true, SamplingContext: true}) {
		t.Errorf("2025-03-26 kept %+v", got)
	}
	// Before 2025-11-25 sampling had no context flag: includeContext came with sampling itself.
	for _, v := range []string{V20250618, V20250326} {
		if got := (ClientCaps{Sampling: true}).ForVersion(v); !got.Has(CapSamplingContext) {
			t.Errorf("%s sampling without the later context flag: %+v, want context read", v, got)
		}
		if got := (ClientCaps{SamplingContext: true}).ForVersion(v); got.Has(CapSamplingContext) || got.Sampling {
			t.Errorf("%s no sampling: %+v", v, got)
		}
	}
	if got := (ClientCaps{Sampling: true}).ForVersion(V20251125); got.Has(CapSamplingContext) {
		t.Errorf("2025-11-25 sampling without context: %+v, want context not declared", got)
	}
}

func TestNegotiateVersion(t *testing.T) {
	served := []string{V20251125, V20250618}
	tests := []struct {
		requested string
		served    []string
		want      string
	}{
		{V20251125, served, V20251125},
		{V20250618, served, V20250618},
		// Older than every served revision: the nearest served, not the newest.
		{V20250326, served, V20250618},
		{"2024-11-05", append(served, V20250326), V20250326},
		{"2024-10-07", append(served, V20250326), V20250326},
		{V20250326, append(served, V20250326), V20250326},
		{V20260728, served, V20251125},
		{"2025-01-01", []string{V20250618, V20251125}, V20250618},
		// Between served revisions: the newest the client can read, not one newer than it asked.
		{"2025-05-01", append(served, V20250326), V20250326},
		{"2025-09-01", append(served, V20250326), V20250618},
		{"2026-01-01", append(served, V20250326), V20251125},
		{"2025-09-01", []string{V20250326, V20251125, V20250618}, V20250618},
		{"2024-1-005", served, V20251125},
		{"0000-00-00x", served, V20251125},
		{"", served, V20251125},
		{"garbage", []string{V20250618}, V20250618},
		{V20251125, nil, ""},
	}
	for _, tt := range tests {
		if got := NegotiateVersion(tt.requested, tt.served); got != tt.want {
			t.Errorf("NegotiateVersion(%q, %v) = %q, want %q", tt.requested, tt.served, got, tt.want)
		}
	}
}

// TestSamplingNeedsEachItAsksFor: a sampling request that offers tools and includes context
// needs both sub-capabilities; a client that declared only one of them is not asked it, which
// it could not answer as asked.
func TestSamplingNeedsEachItAsksFor(t *testing.T) {
	both := `{"k":{"method":"sampling/createMessage","params":{"messages":[],"maxTokens":1,"includeContext":"thisServer","tools":[]}}}`
	reqs, err := InputRequests(V20251125, json.RawMessage(both))
	if err != nil {
		t.Fatal(err)
	}
	for caps, want := range map[string]bool{
		`{"sampling":{}}`: false, `{"sampling":{"tools":{}}}`: false, `{"sampling":{"context":{}}}`: false,
		`{"sampling":{"tools":{},"context":{}}}`: true,
	} {
		if got := Declares(json.RawMessage(caps), reqs[0].Capability); got != want {
			t.Errorf("%s declares %s: %v, want %v", caps, reqs[0].Capability, got, want)
		}
	}
}
