package pins

import (
	"fmt"
	"io"
	"sort"
)

// Drift is one item whose current definition differs from its pin, or that carries invisible
// characters.
type Drift struct {
	Backend string
	Kind    Kind
	Key     string // "" for instructions
	Classes Set
	// Pinned and Current are the fingerprints ("" when there is no pin, or the item is no
	// longer listed).
	Pinned, Current string
	// Findings are the invisible code points in the current definition.
	Findings []Finding
}

// Diff compares every item of every backend in pinned and current and returns the drift,
// sorted by backend, kind (Kinds order) and key. Items that match their pin and carry no
// invisible characters are left out.
func Diff(pinned, current *Lock) []Drift {
	names := map[string]bool{}
	for n := range pinned.Backends {
		names[n] = true
	}
	for n := range current.Backends {
		names[n] = true
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	var out []Drift
	for _, name := range sorted {
		pb, cb := pinned.Backends[name], current.Backends[name]
		for _, kind := range Kinds() {
			keys := map[string]bool{}
			for _, k := range pb.Keys(kind) {
				keys[k] = true
			}
			for _, k := range cb.Keys(kind) {
				keys[k] = true
			}
			ks := make([]string, 0, len(keys))
			for k := range keys {
				ks = append(ks, k)
			}
			sort.Strings(ks)
			for _, key := range ks {
				p, c := pb.Get(kind, key), cb.Get(kind, key)
				s := Classify(p, c)
				if s.Empty() {
					continue
				}
				d := Drift{Backend: name, Kind: kind, Key: key, Classes: s}
				if p != nil {
					d.Pinned = p.Fingerprint
				}
				if c != nil {
					d.Current = c.Fingerprint
					d.Findings = c.Findings
				}
				out = append(out, d)
			}
		}
	}
	return out
}

// WriteDiff prints drift for a reviewer, one block per item, in Diff's order, every name
// quoted and escaped as in the lock file. The format is stable: tests compare it byte for byte.
func WriteDiff(w io.Writer, drift []Drift) error {
	if len(drift) == 0 {
		_, err := fmt.Fprintln(w, "no drift: every listed definition matches its pin")
		return err
	}
	for _, d := range drift {
		item := string(d.Kind)
		if d.Kind != KindInstructions {
			item += " " + yamlQuote(d.Key)
		}
		fmt.Fprintf(w, "%s %s: %s\n", yamlQuote(d.Backend), item, d.Classes)
		if d.Pinned != "" {
			fmt.Fprintf(w, "  pinned:  %s\n", d.Pinned)
		}
		if d.Current != "" {
			fmt.Fprintf(w, "  current: %s\n", d.Current)
		}
		for _, f := range d.Findings {
			where := "in value"
			if f.InName {
				where = "in member name"
			}
			fmt.Fprintf(w, "  %s %s ×%d at %s %s, near: %s\n", f.Kind, f.CodePoint, f.Count, yamlQuote(f.Path), where, f.Excerpt)
		}
	}
	_, err := fmt.Fprintf(w, "%d item(s) drifted\n", len(drift))
	return err
}
