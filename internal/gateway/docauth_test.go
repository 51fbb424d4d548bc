package gateway

import (
	"bytes"
	"testing"
)

// TestDocExampleAuthBlocksValid: every auth: block of the documentation's examples that names
// its issuers is a valid one (issuers, DPoP settings, scope settings, policy rules against
// those issuers), as the gateway checks it at start-up, so an operator who copies one starts
// from something the gateway accepts. Examples without issuers are fragments of another
// setting and are left to TestDocExamplesMatchSchema.
func TestDocExampleAuthBlocksValid(t *testing.T) {
	checked := 0
	for _, ex := range decodedDocExamples(t) {
		c := ex.c
		if len(c.Auth.Issuers) == 0 {
			continue
		}
		c.applyDefaults()
		checked++
		if err := c.Auth.Validate(); err != nil {
			t.Errorf("%s: the gateway refuses its auth block:\n%v", ex.where, err)
		}
	}
	if checked < 5 {
		t.Errorf("only %d examples with issuers: the extraction lost some", checked)
	}
}

// decodedDocExample is a documentation example's gateway configuration, decoded as serve
// decodes it, before defaults.
type decodedDocExample struct {
	where string
	c     Config
}

// decodedDocExamples are the documentation's examples that hold a gateway configuration which
// decodes; one that does not is TestDocExamplesMatchSchema's to report.
func decodedDocExamples(t *testing.T) []decodedDocExample {
	t.Helper()
	var out []decodedDocExample
	for _, ex := range docExamples(t) {
		part, ok, err := gatewayPart(ex.src)
		if err != nil || !ok {
			continue
		}
		c := newConfig()
		if err := decodeYAML(bytes.NewReader(part), &c); err != nil {
			continue
		}
		out = append(out, decodedDocExample{ex.where, c})
	}
	return out
}
