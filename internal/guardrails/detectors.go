package guardrails

import "strings"

// Guardrail is one of the built-in guardrails: a family of detectors with one switch.
type Guardrail uint8

// The guardrails. Their names label metrics and audit lines.
const (
	// Schema validates tool arguments against the tool's inputSchema and structuredContent
	// against its outputSchema.
	Schema Guardrail = iota
	// Secrets finds credentials: cloud keys, code-host and chat tokens, API keys, private key
	// blocks, JWTs, passwords in connection strings, high-entropy tokens.
	Secrets
	// PII finds personal data: e-mail addresses, phone numbers, payment cards, IBANs.
	PII
	// Injection finds what a result may use to steer the model: invisible and bidirectional
	// characters, instruction-like text aimed at the model, links to hosts not allowed.
	Injection
	numGuardrails
)

var guardrailNames = [numGuardrails]string{"schema", "secrets", "pii", "injection"}

// String is the guardrail's name.
func (g Guardrail) String() string { return guardrailNames[g] }

// Guardrails returns the names of every guardrail, the closed set of the guardrail label.
func Guardrails() []string { return append([]string(nil), guardrailNames[:]...) }

// Detector is one detector of a guardrail. Its name is the kind a finding names (in audit
// lines, metrics, the _meta annotation and a redaction's marker, [REDACTED:<name>]).
type Detector uint8

// The detectors. The order is the documentation's.
const (
	DetInvalidArguments Detector = iota
	DetInvalidStructuredContent
	DetAWSAccessKey
	DetAWSSecretKey
	DetGCPAPIKey
	DetGCPOAuthToken
	DetAzureStorageKey
	DetAzureSASToken
	DetAzureClientSecret
	DetGitHubToken
	DetGitLabToken
	DetSlackToken
	DetSlackWebhook
	DetStripeKey
	DetOpenAIKey
	DetAnthropicKey
	DetPrivateKey
	DetJWT
	DetConnectionString
	DetHighEntropy
	DetEmail
	DetPhone
	DetPaymentCard
	DetIBAN
	DetInvisible
	DetBidi
	DetInstructions
	DetLink
	numDetectors
)

// detectorInfo is what the package knows of a detector: its name and guardrail.
type detectorInfo struct {
	name string
	g    Guardrail
}

var detectorTable = [numDetectors]detectorInfo{
	DetInvalidArguments:         {"invalid-arguments", Schema},
	DetInvalidStructuredContent: {"invalid-structured-content", Schema},
	DetAWSAccessKey:             {"aws-access-key", Secrets},
	DetAWSSecretKey:             {"aws-secret-key", Secrets},
	DetGCPAPIKey:                {"gcp-api-key", Secrets},
	DetGCPOAuthToken:            {"gcp-oauth-token", Secrets},
	DetAzureStorageKey:          {"azure-storage-key", Secrets},
	DetAzureSASToken:            {"azure-sas-token", Secrets},
	DetAzureClientSecret:        {"azure-client-secret", Secrets},
	DetGitHubToken:              {"github-token", Secrets},
	DetGitLabToken:              {"gitlab-token", Secrets},
	DetSlackToken:               {"slack-token", Secrets},
	DetSlackWebhook:             {"slack-webhook", Secrets},
	DetStripeKey:                {"stripe-key", Secrets},
	DetOpenAIKey:                {"openai-key", Secrets},
	DetAnthropicKey:             {"anthropic-key", Secrets},
	DetPrivateKey:               {"private-key", Secrets},
	DetJWT:                      {"jwt", Secrets},
	DetConnectionString:         {"connection-string", Secrets},
	DetHighEntropy:              {"high-entropy", Secrets},
	DetEmail:                    {"email", PII},
	DetPhone:                    {"phone", PII},
	DetPaymentCard:              {"payment-card", PII},
	DetIBAN:                     {"iban", PII},
	DetInvisible:                {"invisible", Injection},
	DetBidi:                     {"bidi", Injection},
	DetInstructions:             {"instructions", Injection},
	DetLink:                     {"link", Injection},
}

// String is the detector's name.
func (d Detector) String() string { return detectorTable[d].name }

// Guardrail is the guardrail the detector belongs to.
func (d Detector) Guardrail() Guardrail { return detectorTable[d].g }

// Detectors returns the names of every detector, the closed set of the detector label.
func Detectors() []string {
	out := make([]string, numDetectors)
	for i := range detectorTable {
		out[i] = detectorTable[i].name
	}
	return out
}

// detectorByName returns the detector named name.
func detectorByName(name string) (Detector, bool) {
	for i := range detectorTable {
		if detectorTable[i].name == name {
			return Detector(i), true
		}
	}
	return 0, false
}

// detSet is a set of detectors.
type detSet uint64

func (s detSet) has(d Detector) bool    { return s&(1<<d) != 0 }
func (s detSet) with(d Detector) detSet { return s | 1<<d }
func (s detSet) any(o detSet) bool      { return s&o != 0 }
func setOf(ds ...Detector) (s detSet) {
	for _, d := range ds {
		s = s.with(d)
	}
	return s
}
func (s detSet) empty() bool { return s == 0 }

// Action is what a rule does with a finding. Actions are ordered by strength: a message is
// treated with the strongest action among its findings.
type Action uint8

// The actions, weakest first.
const (
	// Off: the detector does not run.
	Off Action = iota
	// Log: the finding is counted and written to the audit log; the message passes.
	Log
	// Flag: Log, and the result carries a _meta annotation naming the finding (results only).
	Flag
	// Redact: the matched text is replaced with a typed marker, [REDACTED:<detector>].
	Redact
	// Block: the message is refused; the client gets a tool error (tools/call) or a JSON-RPC
	// error naming the guardrail, the detector and where, never the matched text.
	Block
)

var actionNames = [...]string{"off", "log", "flag", "redact", "block"}

// String is the action's name in configuration.
func (a Action) String() string { return actionNames[a] }

// Actions returns the names of the actions a finding can be counted with (not off).
func Actions() []string { return append([]string(nil), actionNames[1:]...) }

// The actions each kind of setting accepts, in the order documentation lists them: a schema
// check (validate.*) neither flags nor redacts, a detector on arguments does not flag (nothing
// carries the annotation to the backend), a detector on results takes every action.
var (
	schemaActions   = []Action{Off, Log, Block}
	argumentActions = []Action{Off, Log, Redact, Block}
	resultActions   = []Action{Off, Log, Flag, Redact, Block}
)

// SchemaActions, ArgumentActions and ResultActions are the names of the actions a schema
// check, a detector on arguments and a detector on results accept: what Config.Validate
// accepts, for the configuration's documentation and schema.
func SchemaActions() []string   { return actionList(schemaActions) }
func ArgumentActions() []string { return actionList(argumentActions) }
func ResultActions() []string   { return actionList(resultActions) }

func actionList(as []Action) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.String()
	}
	return out
}

// wantActions is how a refusal names the actions a setting accepts: "off, log or block".
func wantActions(as []Action) string {
	names := actionList(as)
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

func parseAction(s string) (Action, bool) {
	for i, n := range actionNames {
		if strings.EqualFold(n, s) {
			return Action(i), true
		}
	}
	return 0, false
}
