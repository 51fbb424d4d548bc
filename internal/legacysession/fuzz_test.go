package legacysession

import (
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/seal"
)

// mintedIDs were minted once by Mint with the test ring (k1, k2; k1 alone for the last) at
// start, for alice. The fuzz engine runs the target in several processes, so the ids it is
// checked against must be the same in all of them rather than minted afresh.
var mintedIDs = []string{
	"s1.v1.k2.rr2AAjEnlRu4hyg4AfdFyV_aaKHAxnGCk-6M4YeXjEJMHs8UMiugFpASGJuxl90l2psncuNAZX0UTPsVuzsifJqgyxclatvzFA3PVWBIX2CLU-4cRg12Gu19aJza3cOxMwZocMiYQYTt3PFwL44",
	"s1.v1.k2.f0qYsdAavzjoumpDGog8bVMaWJzEhw0ebAh1yJqpVdCLgINzLvYIk6XZzdvDfcicLxvlp8QP2-r5UFMU_O7A47S92v7mwhDNAkWaXSTrXZ8TBQ1_3KKk1xC8tLLqyPY3m9T-KSUM9GZppxLTwDI",
	"s1.v1.k2.kISJtw6L7A4LbEHsy8N8dnnoaTtNtQE4ux8VWYepgDCUBs2BgTHBcwBtRqBojWeKj9babNszXgnMXuc_jLkMOYIAaZNId6LBFXC14w0vf-ASQVkyC2FahJbmjbSDDpNICjFTP0lJUjzi-cmTIrI",
	"s1.v1.k1.2SaDHK-1YMysB1jXQbHBwrPglrym9f1KTuYtijg7dT2x7headOSKechSSt0ALmAPx75BPGJYIKtYUei7UO7iMq9xrsCGVcRlkovJmtlLm-6nx6rjg_yXXWY6UrNb-Tok3iIzQC1JdCA0wjmEGuM",
}

// FuzzOpen: Open never panics, every refusal carries one of the closed set of reasons, and
// nothing opens but an id Mint gave out.
func FuzzOpen(f *testing.F) {
	clk := &clock{start}
	c := New(ring(f, testKey("k1", 1), testKey("k2", 2)), time.Hour, clk.now)
	minted := map[string]bool{}
	for _, id := range mintedIDs {
		if _, err := c.Open(id, alice); err != nil {
			f.Fatalf("a minted id does not open: %v", err)
		}
		minted[id] = true
		f.Add(id)
		f.Add(id[:len(id)-1])
		f.Add(strings.Replace(id, "k2", "k1", 1))
	}
	other, _ := ring(f, testKey("k1", 1)).Sealer(seal.PurposeRequestState).Seal([]byte("x"))
	for _, s := range []string{"", Prefix, Prefix + other, "s1.v1.k1.AAAA", "s1.v1..", "s1.v1.k3." + strings.Repeat("A", 200)} {
		f.Add(s)
	}
	reasons := map[string]bool{ReasonMalformed: true, ReasonTampered: true, ReasonUnknownKey: true, ReasonExpired: true, ReasonPrincipal: true}
	f.Fuzz(func(t *testing.T, id string) {
		s, err := c.Open(id, alice)
		if err == nil {
			if !minted[id] {
				t.Fatalf("an id Mint never gave out opened: %q -> %+v", id, s)
			}
			return
		}
		oe, ok := err.(*OpenError)
		if !ok || !reasons[oe.Reason] {
			t.Fatalf("error %v is not an OpenError of a known reason", err)
		}
	})
}
