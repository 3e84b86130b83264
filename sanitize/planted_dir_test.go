package sanitize_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The planted directory: four Junior-shaped exports in
// testdata/planted-dir, as a directory run sees them, and the values they
// plant in testdata/planted-dir.json. Both are written by plantedDir below;
// TestPlantedDirIsCurrent keeps the files and the code in step, and
// AGENTVCR_WRITE_PLANTED_DIR=1 rewrites the files.
//
// Every person, address and number here is made up. The secrets are
// obviously fake (FAKE in their text) but keep the shape a detector must
// catch.
//
// The classes, one or more values each:
//   - names beside their own emails (first.last@, first_last@,
//     firstlast@, f.last@), the same name elsewhere as "First Last",
//     first_last_cv.pdf, a LinkedIn slug, an access-review file name;
//   - names that are an identity only in another file of the directory;
//   - names only in emails, and emails only in base64;
//   - names with no email anywhere, in free text, Latin, Cyrillic (with
//     their inflected forms) and Greek;
//   - emails on internationalised domains, punycode and Unicode;
//   - an AWS secret key on the line after its key id; passwords as
//     command arguments (curl -u, --user, --password=, -p); Authorization
//     header lines;
//   - a GCP service-account document and an AWS credentials file;
//   - phones as JSON numbers and strings under phone, mobile and tel;
//   - a GitHub contents API result with a base64 CODEOWNERS;
//   - SSNs, dates of birth and passport numbers beside their words;
//   - street addresses, measured only (the stretch class).

const plantedDirEnv = "AGENTVCR_WRITE_PLANTED_DIR"

// plantedName is a person's name the output must not hold in any form.
type plantedName struct {
	Name string `json:"name"`
	// Class is how the directory shows the person: "identity" (an identity
	// of the file that names them), "other-file" (an identity only in
	// another file), "beside-email" (with their own email somewhere in the
	// directory), "email-only" (their name only as an email's local part),
	// "free-text" (no email and no identity anywhere).
	Class  string `json:"class"`
	Script string `json:"script"`
	// Form says the name is an inflected form of another planted name.
	FormOf string `json:"formOf,omitempty"`
	// SurnameAlone hunts the surname as a word on its own too; only for
	// surnames no fake-name list holds, so a fake cannot be taken for it.
	SurnameAlone bool `json:"surnameAlone,omitempty"`
}

// plantedValueOf is any other value the output must not hold.
type plantedValueOf struct {
	Class string `json:"class"`
	Value string `json:"value"`
	What  string `json:"what,omitempty"`
}

type plantedDirValues struct {
	Comment string           `json:"comment"`
	Names   []plantedName    `json:"names"`
	Values  []plantedValueOf `json:"values"`
	// Measured are values the issue lists as a stretch: the test reports
	// how many survive, and does not fail on them.
	Measured []plantedValueOf `json:"measured"`
}

// The people of the directory.
type pdPerson struct {
	id, name, handle, email, subject, tenant string
	web                                      bool
}

var (
	pdMarguerite = pdPerson{id: "6f1c2e40-7a3b-4c55-9d10-2b8e4f6a0c11", name: "Marguerite Olabode", handle: "marguerite.o",
		email: "marguerite.olabode@quillfeather.io", subject: "U07MOLAB01", tenant: "T07QUILLF1"}
	pdDeclan = pdPerson{id: "0b7d9e21-5c44-4f3a-8e02-7d6c5b4a3f22", name: "Declan Farrow", handle: "declan",
		email: "declan.farrow@quillfeather.io", subject: "U07DFARR02", tenant: "T07QUILLF1"}
	pdAnselm = pdPerson{id: "9c2a4b60-1d8e-4e77-a3b1-5f0e2d9c8b33", name: "Anselm Breuer", handle: "anselm",
		email: "anselm.breuer@quillfeather.io", subject: "dashboard:5f2c9e01ab34d6e7", web: true}
	pdRowan = pdPerson{id: "3e8f1a72-9b0c-4d66-b5e4-8a1c7f2e6d44", name: "Rowan Pellegrini", handle: "rowanp",
		email: "rowan.pellegrini@quillfeather.io", subject: "U07RPELL03", tenant: "T07QUILLF1"}
	pdSolveig = pdPerson{id: "5a9b3c84-2e1f-4a88-9c7d-1b6e4a3f5c55", name: "Solveig Marsh", handle: "solveig",
		email: "solveig.marsh@quillfeather.io", subject: "dashboard:8e41d07c92fa3b15", web: true}
)

// Secrets: obviously fake, in the shapes detectors know.
const (
	pdAWSKeyID        = "AKIAFAKEQ7NW3RZT4MPL"
	pdAWSSecret       = "Xk9FAKEr/T2xQp8Lm4Vn7Bc1Zs6Hd3Ky5Ge0NaUo"
	pdCredDefaultID   = "AKIAFAKE2DQ5LHWR6VJN"
	pdCredDefaultKey  = "fAKe7wQ2/Rt9Lm3Xp8Vn4Bc6Zs1Hd5Ky0Ge/NaUq"
	pdCredProfileID   = "ASIAFAKE6MPL2XKQ7RTW"
	pdCredProfileKey  = "Fake0Ro/9Lm3Xp8Vn4Bc6Zs1Hd5Ky2Ge7NaUqWtE"
	pdCredSession     = "FwoGZXIvYXdzEFAKEaDN7qR2vLx9Kp4Wm8Tz3Hb6Jc1Yf5Gd0Se7Ua2Xo9Pi4Lk8Nw3Mq6Vr1Bt5Cy0Dz7Eh2Fj9Gk4Hl8Im3Jn6Ko1Lp5Mq0Nr"
	pdBearer          = "qf_live_9Qm2xT7vLp4Rk8Wn3Zc6Hb1Yd5Fj0GsFAKE"
	pdBearerTrace     = "9f8e7d6c5b4a39281706f5e4d3c2b1a0FAKE7q6p5o4n"
	pdBasicPlain      = "deploy:FakePass2026!"
	pdCurlPassword    = "Pa55word!"
	pdUserPassword    = "G7!mKp2#Lw9qFAKE"
	pdDumpPassword    = "Wint3r-Sun!42-FAKE"
	pdSSHPassPassword = "L0ng-Tr4il#9-FAKE"
	pdDockerPassword  = "Harbor-Fake-77!"
	pdGCPKeyID        = "fa4e0c1d9b8a7f6e5d4c3b2a190817f6e5d4c3b2"
	pdGCPClientID     = "104729384756102938475"
	pdGCPClientEmail  = "billing-sync@quillfeather-prod-7731.iam.gserviceaccount.com"
)

// pdGCPPrivateKey is a PEM block of random bytes: not a key, in a key's
// shape, with FAKE in its first line.
func pdGCPPrivateKey() (pem, chunk string) {
	rng := rand.New(rand.NewPCG(23, 1984))
	raw := make([]byte, 1190)
	for i := range raw {
		raw[i] = byte(rng.IntN(256))
	}
	body := "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQFAKEKEYFORTESTSONLY" + base64.StdEncoding.EncodeToString(raw)
	var b strings.Builder
	b.WriteString("-----BEGIN PRIVATE KEY-----\n")
	for len(body) > 64 {
		b.WriteString(body[:64] + "\n")
		body = body[64:]
	}
	b.WriteString(body + "\n-----END PRIVATE KEY-----\n")
	lines := strings.Split(b.String(), "\n")
	return b.String(), lines[6][8:56]
}

func pdBasic() string { return base64.StdEncoding.EncodeToString([]byte(pdBasicPlain)) }

func pdCodeowners() string {
	return `# Ownership for quillfeather/ledger. Reviews are requested automatically.
*                       @quillfeather/platform
/billing/               @tobias-wren tobias_wren@ambertrail.co
/docs/                  @inescarvalho inescarvalho@quillfeather.io
/infra/                 @jkowalski jakub.kowalski@quillfeather.io
/services/payments/     @maren-holloway @r-okafor
/.github/               @marguerite-olabode
`
}

// githubBase64 encodes as GitHub's contents API does: standard alphabet,
// padded, a newline after every 60 characters and at the end.
func githubBase64(s string) string {
	enc := base64.StdEncoding.EncodeToString([]byte(s))
	var b strings.Builder
	for len(enc) > 60 {
		b.WriteString(enc[:60] + "\n")
		enc = enc[60:]
	}
	b.WriteString(enc + "\n")
	return b.String()
}

func pdValues() *plantedDirValues {
	v := &plantedDirValues{Comment: "Planted values of testdata/planted-dir, written by planted_dir_test.go (" + plantedDirEnv +
		"=1 rewrites them). Every person, address and number is made up; every secret is fake, with FAKE in it, in the shape a detector must catch."}
	name := func(class, script string, surnameAlone bool, names ...string) {
		for _, n := range names {
			v.Names = append(v.Names, plantedName{Name: n, Class: class, Script: script, SurnameAlone: surnameAlone})
		}
	}
	form := func(script, of string, forms ...string) {
		for _, f := range forms {
			v.Names = append(v.Names, plantedName{Name: f, Class: "free-text", Script: script, FormOf: of})
		}
	}
	name("identity", "latin", false, pdRowan.name, pdSolveig.name)
	name("other-file", "latin", false, pdMarguerite.name, pdAnselm.name)
	name("other-file", "latin", true, pdDeclan.name)
	name("beside-email", "latin", true, "Maren Holloway", "Tobias Wren", "Rafael Okafor")
	name("beside-email", "latin", false, "Ines Carvalho", "Hedda Lindgren", "Marta Keller", "Cosmin Varga", "Jakub Kowalski")
	name("email-only", "latin", false, "Ivan Petrov", "Olga Smirnova")
	name("free-text", "latin", false, "Tunde Bakare", "Imogen Hale", "Oskar Lindqvist", "Lucía Ferrer", "Niamh Brennan",
		"Bogdan Ilić", "Chiara Montanari", "Kwame Asante", "Yusuf Demir", "Astrid Solberg", "Elif Yıldırım", "Quentin Marchetti",
		"Thabo Nkosi", "Mirela Popescu", "Henrik Aasen", "Łukasz Wróblewski", "Ngozi Eze", "Ruth Abernathy")
	name("free-text", "latin", true, "Priyanka Deshmukh", "Hamish Calloway", "Matthias Vogelsang", "Daniela Cifuentes",
		"Aoife Gallagher", "Beatriz Saldanha", "Farida Haddad", "Joaquín Echeverría")
	name("free-text", "cyrillic", false, "Иван Петров", "Ольга Смирнова")
	form("cyrillic", "Иван Петров", "Ивану Петрову", "Ивана Петрова")
	form("cyrillic", "Ольга Смирнова", "Ольге Смирновой")
	name("free-text", "greek", false, "Νίκος Αλεξίου", "Μαρία Κωνσταντίνου")
	form("greek", "Νίκος Αλεξίου", "Νίκο Αλεξίου")

	val := func(class, what string, values ...string) {
		for _, x := range values {
			v.Values = append(v.Values, plantedValueOf{Class: class, Value: x, What: what})
		}
	}
	for _, p := range []pdPerson{pdMarguerite, pdDeclan, pdAnselm, pdRowan, pdSolveig} {
		val("email", "an identity's email", p.email)
		val("identity", "an identity's subject id", p.subject)
	}
	val("slack id", "the workspace", pdMarguerite.tenant)
	val("email", "first.last", "maren.holloway@quillfeather.io", "hedda.lindgren@quillfeather.io", "cosmin.varga@ambertrail.co")
	val("email", "first_last", "tobias_wren@ambertrail.co")
	val("email", "firstlast", "inescarvalho@quillfeather.io")
	val("email", "f.last", "r.okafor@quillfeather.io")
	val("email", "only in base64", "jakub.kowalski@quillfeather.io")
	val("email", "IDN, punycode", "ivan.petrov@xn--e1afmkfd.xn--p1ai", "m.keller@xn--bcher-kva.ch")
	val("email", "IDN, Unicode", "ivan.petrov@пример.рф", "olga.smirnova@пример.рф")
	val("handle", "a GitHub handle in base64", "jkowalski")
	val("secret", "AWS key id, its secret on the next line", pdAWSKeyID)
	val("secret", "AWS secret on the line after its key id", pdAWSSecret)
	val("secret", "curl -u user:password", pdCurlPassword)
	val("secret", "curl --user user:password", pdUserPassword)
	val("secret", "--password=", pdDumpPassword)
	val("secret", "sshpass -p", pdSSHPassPassword)
	val("secret", "docker login -p", pdDockerPassword)
	val("secret", "Authorization: Bearer", pdBearer)
	val("secret", "Authorization: Bearer, a header line of curl -v", pdBearerTrace)
	val("secret", "Authorization: Basic", pdBasic())
	val("secret", "Authorization: Basic, decoded", "FakePass2026!")
	_, chunk := pdGCPPrivateKey()
	val("secret", "GCP service account private_key", chunk)
	val("secret", "GCP service account private_key_id", pdGCPKeyID)
	val("secret", "GCP service account client_id", pdGCPClientID)
	val("secret", "GCP service account client_email", pdGCPClientEmail)
	val("secret", "AWS credentials file, default profile", pdCredDefaultID, pdCredDefaultKey)
	val("secret", "AWS credentials file, named profile", pdCredProfileID, pdCredProfileKey, pdCredSession)
	val("phone", `JSON number under "phone"`, "4915112345670")
	val("phone", `JSON number under "tel"`, "61491570156")
	val("phone", `JSON number under "mobile"`, "12025550143")
	val("phone", `national string under "mobile"`, "07700 900461")
	val("ssn", "SSN beside its word", "123-45-6789", "531-72-4086")
	val("dob", "date of birth beside its word", "1984-03-12", "12 March 1984", "07/22/1991")
	val("passport", "passport number beside its word", "C4J7R9K2P", "912803457")
	v.Measured = []plantedValueOf{
		{Class: "address", Value: "221 Larkspur Lane"},
		{Class: "address", Value: "Kastanienallee 17"},
		{Class: "address", Value: "18 Cromer Road"},
		{Class: "address", Value: "NR3 1JB"},
	}
	return v
}

// pdObj is a JSON object that keeps its keys in order and escapes as
// JavaScript's JSON.stringify does (no \u003c for <).
type pdObj []pdKV

type pdKV struct {
	k string
	v any
}

func (o pdObj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(pdJS(f.k))
		b.WriteByte(':')
		b.Write(pdJS(f.v))
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// pdJS is JSON.stringify of v.
func pdJS(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// pdASCII escapes every character beyond ASCII as Python's json.dumps
// does by default.
func pdASCII(js []byte) string {
	var b strings.Builder
	for _, r := range string(js) {
		switch {
		case r < 0x80:
			b.WriteRune(r)
		case r <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			r -= 0x10000
			fmt.Fprintf(&b, `\u%04x\u%04x`, 0xd800+r>>10, 0xdc00+r&0x3ff)
		}
	}
	return b.String()
}

type pdTool struct {
	name string
	args pdObj
	// text is the tool's text result; value, if set, a JSON result.
	text  string
	value any
}

type pdDoc struct {
	surface, conversation string
	identities            []pdPerson
	rows                  []any
	seq, turns            int
	clock                 int64
	// ascii writes the documents nested in payload.message as Python
	// does, every non-ASCII character \u-escaped.
	ascii bool
}

func (d *pdDoc) row(typ string, schema int, key any, payload pdObj) {
	d.rows = append(d.rows, pdObj{{"createdAtMs", d.clock}, {"historyVersion", 0}, {"idempotencyKey", key},
		{"payload", payload}, {"schemaVersion", schema}, {"seq", d.seq}, {"type", typ}})
	d.seq++
	d.clock += 137
}

func (d *pdDoc) nested(v pdObj) string {
	if d.ascii {
		return pdASCII(pdJS(v))
	}
	return string(pdJS(v))
}

// turn writes the rows one turn of Junior writes: the person's message,
// the turn's start, the model history (context, instruction, tool calls and
// their results, reply) and the delivered reply.
func (d *pdDoc) turn(who pdPerson, text, reply string, tools ...pdTool) {
	d.turns++
	slack := d.surface == "slack"
	var msgID, userID string
	var author, actor pdObj
	if slack {
		msgID = fmt.Sprintf("17901%05d.000%03d", d.turns*37, d.turns*100)
		userID = who.subject
		author = pdObj{{"fullName", who.name}, {"isBot", false}, {"userId", userID}, {"userName", who.handle}}
		actor = pdObj{{"platform", "slack"}, {"teamId", who.tenant}, {"userId", userID}, {"userName", who.handle}, {"fullName", who.name}, {"email", who.email}}
	} else {
		msgID = fmt.Sprintf("api-msg:%024x", d.turns*104729)
		userID = who.subject
		author = pdObj{{"email", who.email}, {"userId", userID}, {"userName", who.name}}
		actor = pdObj{{"email", who.email}, {"userName", who.name}, {"platform", "web"}, {"userId", userID}}
	}
	meta := pdObj{{"author", author}, {"source", map[bool]string{true: "slack", false: "web"}[slack]}, {"replied", false}, {"explicitMention", true}}
	if slack {
		meta = append(meta, pdKV{"slackTs", msgID})
	}
	turnID := "turn_" + strings.NewReplacer(":", "_", ".", "_").Replace(msgID)
	d.row("message", 1, "message:"+msgID, pdObj{{"messageId", msgID}, {"role", "user"}, {"text", text}, {"meta", meta}, {"authorIdentityId", who.id}})
	surface := "api"
	if slack {
		surface = "slack"
	}
	d.row("turn_started", 1, "turn:"+turnID+":started", pdObj{{"turnId", turnID}, {"surface", surface}, {"inputMessageIds", []string{msgID}}})
	d.row("user_message", 2, nil, pdObj{{"message", d.nested(pdObj{{"content", []any{pdObj{{"type", "text"}, {"text", fmt.Sprintf(
		"<runtime-turn-context>\n<context>\n<actor>\n- user_name: %s\n- user_id: %s\n</actor>\n</context>\n</runtime-turn-context>", who.name, userID)}}}},
		{"timestamp", d.clock}})}, {"provenance", pdObj{{"authority", "context"}}}})
	instruction := "<current-instruction>\n" + text + "\n</current-instruction>"
	if slack {
		instruction = fmt.Sprintf("<current-instruction author_id=%q author_name=%q slack_ts=%q>\n%s\n</current-instruction>",
			userID, who.name, msgID, strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(text))
	}
	d.row("user_message", 2, nil, pdObj{{"message", d.nested(pdObj{{"content", []any{pdObj{{"type", "text"}, {"text", instruction}}}}, {"timestamp", d.clock}})},
		{"provenance", pdObj{{"authority", "instruction"}, {"actor", actor}}}})
	for i, tool := range tools {
		callID := fmt.Sprintf("call-%08x-%d", d.turns*1000+i, i)
		d.row("tool_execution_started", 1, nil, pdObj{{"toolName", tool.name}, {"toolCallId", callID}})
		d.row("assistant_message", 2, nil, d.assistant("toolUse", pdObj{{"type", "text"}, {"text", "Checking."}},
			pdObj{{"type", "toolCall"}, {"id", callID}, {"name", tool.name}, {"arguments", tool.args}}))
		part := pdObj{{"type", "text"}, {"text", tool.text}}
		if tool.value != nil {
			part = pdObj{{"type", "json"}, {"value", tool.value}}
		}
		d.row("tool_result", 2, nil, pdObj{{"message", d.nested(pdObj{{"toolCallId", callID}, {"toolName", tool.name},
			{"content", []any{part}}, {"details", pdObj{}}, {"isError", false}, {"timestamp", d.clock}})}, {"toolCallId", callID}})
	}
	replyID := turnID + ":assistant:1"
	d.row("assistant_message", 2, "message:"+replyID+":agent", d.assistant("stop",
		pdObj{{"type", "thinking"}, {"thinking", ""}, {"thinkingSignature", ""}}, pdObj{{"type", "text"}, {"text", reply}}))
	d.row("message_handled", 1, "message:"+msgID+":handled", pdObj{{"messageId", msgID}})
	bot := pdObj{{"author", pdObj{{"isBot", true}, {"userName", "junior"}}}, {"source", meta[1].v}}
	d.row("message", 1, "message:"+replyID, pdObj{{"messageId", replyID}, {"role", "assistant"}, {"text", reply}, {"meta", bot}})
	d.row("message_handled", 1, "message:"+replyID+":handled", pdObj{{"messageId", replyID}})
	d.row("turn_completed", 1, "turn:"+turnID+":terminal", pdObj{{"turnId", turnID}, {"outcome", "success"}})
	d.clock += 5000
}

func (d *pdDoc) assistant(stop string, content ...any) pdObj {
	usage := pdObj{{"input", 274}, {"output", 75}, {"cacheRead", 7296}, {"cacheWrite", 0}, {"totalTokens", 7645}}
	return pdObj{{"model", "xai/grok-4.5"}, {"usage", usage}, {"message", d.nested(pdObj{{"content", content}, {"api", "anthropic-messages"},
		{"provider", "vercel-ai-gateway"}, {"model", "xai/grok-4.5"}, {"usage", usage}, {"stopReason", stop}, {"timestamp", d.clock}})},
		{"provider", "vercel-ai-gateway"}}
}

func (d *pdDoc) bytes() []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(append(d.header(), pdKV{"events", d.rows})); err != nil {
		panic(err)
	}
	return b.Bytes()
}

// compact writes the document on one line, a row at a time: quicker for
// a large one.
func (d *pdDoc) compact() []byte {
	head := pdJS(d.header())
	var b bytes.Buffer
	b.Write(head[:len(head)-1])
	b.WriteString(`,"events":[`)
	for i, r := range d.rows {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(pdJS(r))
	}
	b.WriteString("]}\n")
	return b.Bytes()
}

func (d *pdDoc) header() pdObj {
	var ids []any
	for _, p := range d.identities {
		provider := "slack"
		if p.web {
			provider = "dashboard"
		}
		ids = append(ids, pdObj{{"id", p.id}, {"kind", "user"}, {"provider", provider}, {"providerTenantId", p.tenant},
			{"providerSubjectId", p.subject}, {"displayName", p.name}, {"handle", p.handle}, {"email", p.email},
			{"emailNormalized", p.email}, {"emailVerified", true}, {"createdAtMs", 1789000000000}, {"updatedAtMs", 1789500000000}})
	}
	return pdObj{{"version", 1}, {"surface", d.surface},
		{"exporter", pdObj{{"tool", "agentvcr"}, {"version", "0.9.0"}, {"profile", "junior"}, {"conversationId", d.conversation},
			{"exportedAt", "2026-09-21T09:00:00Z"}}},
		{"identities", ids}}
}

// plantedDir returns the files of testdata/planted-dir by name, and
// testdata/planted-dir.json.
func plantedDir() (map[string][]byte, []byte) {
	files := map[string][]byte{}

	// A Slack thread about a budget: free-text names, a name beside its
	// email, a password in curl -u, an AWS key pair over two lines, the
	// CODEOWNERS in base64, Cyrillic names and IDN emails.
	budget := &pdDoc{surface: "slack", conversation: "slack:C07BUDGET1:1790100000.000100", clock: 1790100000000,
		identities: []pdPerson{pdMarguerite, pdDeclan}}
	budget.turn(pdDeclan,
		"<@U07JUNIOR0> can you pull the Q3 budget sheet and ask Tunde Bakare about the budget, cc Imogen Hale? "+
			"Maren Holloway (maren.holloway@quillfeather.io) owns the forecast; her CV is still in the drive as maren_holloway_cv.pdf, please move it.",
		"The Q3 sheet is saved as q3.csv. Tunde Bakare is the budget owner; I have not contacted Imogen Hale.",
		pdTool{name: "bash", args: pdObj{{"command", "curl -sS -u someone@example.org:" + pdCurlPassword + " https://finance.quillfeather.io/api/v2/budget/q3.csv -o q3.csv && wc -l q3.csv"}},
			text: "  % Total    % Received % Xferd  Average Speed   Time\n100 18244  100 18244    0     0  91220      0 --:--:--\n412 q3.csv\n"})
	budget.turn(pdMarguerite,
		"Before that: the finance bot's old key is still in the runbook, pasted here so you can rotate it:\n\n"+
			pdAWSKeyID+"\n"+pdAWSSecret+"\n\nAlso Oskar Lindqvist and Lucía Ferrer want the numbers by Friday; I'm meeting with Oskar Lindqvist at 3.",
		"I can't rotate keys myself. Oskar Lindqvist and Lucía Ferrer will get the numbers by Friday.")
	budget.turn(pdDeclan, "Who owns the billing and infra code in ledger?",
		"CODEOWNERS routes /billing/ to Tobias Wren and /docs/ to Ines Carvalho; Jakub Kowalski owns /infra/, and Maren Holloway with Rafael Okafor own payments.",
		pdTool{name: "githubGetContents", args: pdObj{{"owner", "quillfeather"}, {"repo", "ledger"}, {"path", ".github/CODEOWNERS"}},
			text: string(pdJS(pdObj{{"name", "CODEOWNERS"}, {"path", ".github/CODEOWNERS"}, {"sha", "3d1f0c9e8b7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e"},
				{"size", len(pdCodeowners())}, {"url", "https://api.github.com/repos/quillfeather/ledger/contents/.github/CODEOWNERS?ref=main"},
				{"html_url", "https://github.com/quillfeather/ledger/blob/main/.github/CODEOWNERS"},
				{"git_url", "https://api.github.com/repos/quillfeather/ledger/git/blobs/3d1f0c9e8b7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e"},
				{"download_url", "https://raw.githubusercontent.com/quillfeather/ledger/main/.github/CODEOWNERS"},
				{"type", "file"}, {"content", githubBase64(pdCodeowners())}, {"encoding", "base64"},
				{"_links", pdObj{{"self", "https://api.github.com/repos/quillfeather/ledger/contents/.github/CODEOWNERS?ref=main"},
					{"git", "https://api.github.com/repos/quillfeather/ledger/git/blobs/3d1f0c9e8b7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e"},
					{"html", "https://github.com/quillfeather/ledger/blob/main/.github/CODEOWNERS"}}}}))})
	budget.turn(pdDeclan,
		"Передай Ивану Петрову, что бюджет готов. Иван Петров вернётся в понедельник, а без Ивана Петрова мы не закроем квартал. "+
			"Его почта ivan.petrov@xn--e1afmkfd.xn--p1ai (или ivan.petrov@пример.рф).",
		"Хорошо, напишу Ивану Петрову на ivan.petrov@пример.рф.")
	files["slack-budget-thread.json"] = budget.bytes()

	// A web conversation of an access review: file names and a LinkedIn
	// slug made of names, a candidate's SSN, birth date, passport and
	// address, a directory lookup with phones as numbers, and two
	// credential documents.
	pem, _ := pdGCPPrivateKey()
	gcp := pdJS(pdObj{{"type", "service_account"}, {"project_id", "quillfeather-prod-7731"}, {"private_key_id", pdGCPKeyID},
		{"private_key", pem}, {"client_email", pdGCPClientEmail}, {"client_id", pdGCPClientID},
		{"auth_uri", "https://accounts.google.com/o/oauth2/auth"}, {"token_uri", "https://oauth2.googleapis.com/token"},
		{"auth_provider_x509_cert_url", "https://www.googleapis.com/oauth2/v1/certs"},
		{"client_x509_cert_url", "https://www.googleapis.com/robot/v1/metadata/x509/billing-sync%40quillfeather-prod-7731.iam.gserviceaccount.com"},
		{"universe_domain", "googleapis.com"}})
	var gcpIndented bytes.Buffer
	json.Indent(&gcpIndented, gcp, "", "  ")
	awsCreds := "[default]\naws_access_key_id = " + pdCredDefaultID + "\naws_secret_access_key = " + pdCredDefaultKey +
		"\n\n[quillfeather-billing]\naws_access_key_id = " + pdCredProfileID + "\naws_secret_access_key = " + pdCredProfileKey +
		"\naws_session_token = " + pdCredSession + "\nregion = eu-west-1\n"
	review := &pdDoc{surface: "web", conversation: "local:web:4be2c71d09a8f3e6", clock: 1790200000000, identities: []pdPerson{pdAnselm}}
	review.turn(pdAnselm,
		"Prepare the quarterly access review. Start from access_review_Rafael_Okafor_Hedda_Lindgren.xlsx; Rafael is r.okafor@quillfeather.io and "+
			"Hedda is hedda.lindgren@quillfeather.io. Marguerite Olabode signed off last quarter. Loop in cosmin.varga@ambertrail.co for the contractor accounts.",
		"Draft ready: Rafael Okafor and Hedda Lindgren keep admin; Marguerite Olabode's sign-off from last quarter is attached.",
		pdTool{name: "readFile", args: pdObj{{"path", "hr/candidates/tobias_wren.md"}},
			text: "# Candidate: Tobias Wren\n\nEmail: tobias_wren@ambertrail.co\nLinkedIn: https://www.linkedin.com/in/tobias-wren-4b2a1\n" +
				"DOB: 1984-03-12\nSSN 123-45-6789\nPassport No: C4J7R9K2P\nAddress: 221 Larkspur Lane, Apt 4B, Portland, OR 97205\n\n" +
				"References: Ines Carvalho (inescarvalho@quillfeather.io), Marta Keller (m.keller@xn--bcher-kva.ch)\n"},
		pdTool{name: "hrDirectoryLookup", args: pdObj{{"team", "finance-platform"}},
			value: pdObj{{"people", []any{
				pdObj{{"name", "Ines Carvalho"}, {"email", "inescarvalho@quillfeather.io"}, {"title", "Staff Engineer"}, {"phone", json.Number("4915112345670")}, {"tel", json.Number("61491570156")}},
				pdObj{{"name", "Tobias Wren"}, {"email", "tobias_wren@ambertrail.co"}, {"title", "Contractor"}, {"mobile", json.Number("12025550143")}},
				pdObj{{"name", "Marta Keller"}, {"email", "m.keller@xn--bcher-kva.ch"}, {"title", "Auditor"}, {"mobile", "07700 900461"}},
			}}, {"count", 3}}})
	review.turn(pdAnselm,
		"HR flagged two things. The form says born 12 March 1984, which doesn't match what HR has for Oskar Lindqvist; his date of birth 07/22/1991 is on the scan, "+
			"with social security number 531-72-4086 and passport 912803457. Lucía Ferrer moved to Kastanienallee 17, 10435 Berlin. "+
			"Ольга Смирнова (olga.smirnova@пример.рф) approved; send the summary to Ольге Смирновой.",
		"Noted: the birth date mismatch for Oskar Lindqvist goes back to HR, and the summary goes to Ольге Смирновой.")
	review.turn(pdAnselm, "Check which service accounts the billing sync uses.",
		"The billing sync uses the billing-sync service account and the quillfeather-billing AWS profile. Both keys should be rotated.",
		pdTool{name: "bash", args: pdObj{{"command", "cat ~/.config/gcloud/billing-sync.json; cat ~/.aws/credentials"}},
			text: gcpIndented.String() + "\n" + awsCreds})
	files["web-access-review.json"] = review.bytes()

	// A Slack incident thread, its nested documents written by Python:
	// names whose identity is in another file, passwords in commands, header
	// lines, Greek names.
	ops := &pdDoc{surface: "slack", conversation: "slack:C07OPSINC2:1790300000.000100", clock: 1790300000000, identities: []pdPerson{pdRowan}, ascii: true}
	ops.turn(pdRowan,
		"Paging anselm breuer: the ledger deploy is stuck. Breuer, Anselm is on call per the rota. With Chiara Montanari and Kwame Asante on the bridge. "+
			"Cosmin Varga wrote cosmin_varga_notes.md last night, have a look.",
		"Looking. Chiara Montanari and Kwame Asante are on the bridge; I read cosmin_varga_notes.md.",
		pdTool{name: "bash", args: pdObj{{"command", "sshpass -p '" + pdSSHPassPassword + "' ssh bastion 'sudo journalctl -u ledger --since -1h | tail -n 3'"}},
			text: "ledger[4121]: job export-q3 stuck waiting for lock\nledger[4121]: retrying in 30s\nledger[4121]: job export-q3 stuck waiting for lock\n"},
		pdTool{name: "bash", args: pdObj{{"command", "cat ~/notes/ledger-debug.sh"}},
			text: "#!/bin/sh\n# what we ran last night\ncurl --user 'svc-export:" + pdUserPassword + "' https://ledger.quillfeather.io/admin/health\n" +
				"curl -H \"Authorization: Bearer " + pdBearer + "\" https://ledger.quillfeather.io/api/jobs\n" +
				"# curl -v said:\n# > GET /api/jobs HTTP/2\n# > Host: ledger.quillfeather.io\n# > Authorization: Bearer " + pdBearerTrace + "\n" +
				"mysqldump -h db.quillfeather.io -u billing --password='" + pdDumpPassword + "' ledger > /tmp/ledger.sql\n" +
				"docker login -u quillbot -p '" + pdDockerPassword + "' registry.quillfeather.io\n"},
		pdTool{name: "httpTrace", args: pdObj{{"id", "req-7781"}},
			text: "GET /api/v1/exports HTTP/1.1\nHost: ledger.quillfeather.io\nAuthorization: Basic " + pdBasic() + "\nUser-Agent: curl/8.5.0\nAccept: */*\n\n" +
				"HTTP/1.1 423 Locked\nContent-Type: application/json\n\n{\"error\":\"export-q3 holds the lock\"}\n"})
	ops.turn(pdRowan,
		"Ο Νίκος Αλεξίου και η Μαρία Κωνσταντίνου θα αναλάβουν τη βάρδια. Ενημερώστε τον Νίκο Αλεξίου αν αλλάξει κάτι. "+
			"Elif Yıldırım and Bogdan Ilić will write the postmortem; Hamish Calloway reviews. Dr. Ngozi Eze from the vendor joins at 14:00.",
		"Summary: Anselm Breuer restarted the ledger workers after export-q3 released its lock. Elif Yıldırım and Bogdan Ilić own the postmortem, "+
			"Hamish Calloway reviews, and Dr. Ngozi Eze joins at 14:00.")
	files["slack-ops-incident.json"] = ops.bytes()

	// Planning notes on the web: many names in prose among capitalised
	// product phrases, names of people from the other files, an address.
	notes := &pdDoc{surface: "web", conversation: "local:web:91d3f0a2c7e85b46", clock: 1790400000000, identities: []pdPerson{pdSolveig}}
	notes.turn(pdSolveig,
		"Notes from Monday Standup: we moved the assistant from Chat Completions to the Responses API. Priyanka Deshmukh will update the Web API client, "+
			"which now builds with Go Modules. Every Pull Request runs the Release Checklist in Merge Queue. Thanks, Niamh Brennan, for the Google Sheets export.",
		"Got it. Priyanka Deshmukh owns the Web API client update; Niamh Brennan did the Google Sheets export.")
	notes.turn(pdSolveig,
		"Matthias Vogelsang asked whether Hugging Face models can run on Cloud Run; Astrid Solberg says yes, behind Feature Flags. "+
			"Jakub Kowalski approved the Service Account change. Talk to Yusuf Demir from Data Platform, or ping Daniela Cifuentes.",
		"Matthias Vogelsang's question is answered: yes, on Cloud Run behind Feature Flags, per Astrid Solberg. Jakub Kowalski approved the change.")
	notes.turn(pdSolveig,
		"Quentin Marchetti and Aoife Gallagher own the North America rollout; Thabo Nkosi covers New York and San Francisco. Mirela Popescu is on leave, "+
			"so Henrik Aasen covers for her. Declan Farrow's timesheet is in declan_farrow_timesheet.csv. Tobias Wren's references checked out.",
		"Rollout owners noted: Quentin Marchetti and Aoife Gallagher, with Thabo Nkosi for New York and San Francisco; Henrik Aasen covers for Mirela Popescu.")
	notes.turn(pdSolveig,
		"Beatriz Saldanha, Łukasz Wróblewski and Farida Haddad joined the Incident Review; Joaquín Echeverría sent regrets. "+
			"Ms. Ruth Abernathy from Legal wants the Release Notes by Thursday. Ship the demo hardware to Flat 3, 18 Cromer Road, Norwich NR3 1JB, "+
			"attention Hamish Calloway.",
		"Release Notes go to Ms. Ruth Abernathy by Thursday. Beatriz Saldanha, Łukasz Wróblewski and Farida Haddad attended; Joaquín Echeverría did not.")
	files["web-planning-notes.json"] = notes.bytes()

	values, err := json.MarshalIndent(pdValues(), "", "  ")
	if err != nil {
		panic(err)
	}
	return files, append(values, '\n')
}

// TestPlantedDirIsCurrent keeps testdata/planted-dir and its values in
// step with the code that writes them.
func TestPlantedDirIsCurrent(t *testing.T) {
	files, values := plantedDir()
	if len(pdAWSSecret) != 40 || len(pdCredDefaultKey) != 40 || len(pdCredProfileKey) != 40 {
		t.Fatal("an AWS secret key is 40 characters")
	}
	want := map[string][]byte{filepath.Join("testdata", "planted-dir.json"): values}
	for name, b := range files {
		want[filepath.Join("testdata", "planted-dir", name)] = b
	}
	if os.Getenv(plantedDirEnv) == "1" {
		if err := os.MkdirAll(filepath.Join("testdata", "planted-dir"), 0o755); err != nil {
			t.Fatal(err)
		}
		for path, b := range want {
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for path, b := range want {
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (%s=1 writes it)", err, plantedDirEnv)
		}
		if !bytes.Equal(got, b) {
			t.Errorf("%s is not what planted_dir_test.go writes (%s=1 rewrites it)", path, plantedDirEnv)
		}
	}
	entries, err := os.ReadDir(filepath.Join("testdata", "planted-dir"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if _, ok := files[e.Name()]; !ok {
			t.Errorf("testdata/planted-dir/%s is not written by planted_dir_test.go", e.Name())
		}
	}
}
