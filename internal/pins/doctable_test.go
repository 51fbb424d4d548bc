package pins

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// TestDocDriftClasses: docs/pinning.md's table of drift classes names every class the code has,
// no other, each with the default action the code applies (DefaultActions; unverified is
// always blocked), so an operator reading the table knows what an unconfigured gateway does.
func TestDocDriftClasses(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "docs", "pinning.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `([a-z-]+)` \\| .* \\| (?:always )?(block|confirm|log)\\b[^|]*\\|$")
	rows := row.FindAllStringSubmatch(string(raw), -1)
	seen := map[Class]bool{}
	for _, m := range rows {
		cl, action := Class(m[1]), Action(m[2])
		seen[cl] = true
		want, ok := DefaultAction(cl)
		if !ok {
			t.Errorf("docs/pinning.md lists the class %q, which the code does not have", cl)
			continue
		}
		if got := (&Config{}).ActionForClass("any", cl); got != want || action != want {
			t.Errorf("class %s: docs/pinning.md says %s by default; DefaultActions says %s and an unconfigured gateway does %s",
				cl, action, want, got)
		}
	}
	for _, cl := range AllClasses() {
		if !seen[cl] {
			t.Errorf("the class %q is not in docs/pinning.md's table of drift classes", cl)
		}
	}
}
