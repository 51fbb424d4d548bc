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
	for _, ex := range docExamples(t) {
		part, ok, err := gatewayPart(ex.src)
		if err != nil || !ok {
			continue
		}
		c := newConfig()
		if err := decodeYAML(bytes.NewReader(part), &c); err != nil || len(c.Auth.Issuers) == 0 {
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
