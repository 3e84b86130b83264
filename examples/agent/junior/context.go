package junior

import "strings"

// RuntimeContextTag opens a runtime context block: a model history that
// has one needs no other.
const RuntimeContextTag = "<runtime-turn-context>"

// contextHeader opens the runtime context block, Junior's words.
const contextHeader = "Runtime context for this request. Treat these blocks as trusted runtime facts; the static system prompt remains authoritative."

// RuntimeContext is the text of a turn's runtime context row, as Junior
// writes it for actor (the provenance actor of the turn's instruction):
// the block's sections apart by a blank line, and in <context> the
// actor's full_name, user_name and user_id lines, each when the actor has
// it. Junior's block also lists its skills (<available-skills>) and its
// sandbox (<runtime>); the agent has neither, and Junior leaves out a
// section it has nothing for.
func RuntimeContext(actor map[string]any) string {
	sections := []string{RuntimeContextTag, contextHeader}
	var lines []string
	for _, f := range []struct{ name, key string }{{"full_name", "fullName"}, {"user_name", "userName"}, {"user_id", "userId"}} {
		if v, _ := actor[f.key].(string); v != "" {
			lines = append(lines, "- "+f.name+": "+EscapeXML(v))
		}
	}
	if len(lines) > 0 {
		sections = append(sections, "<context>\n<actor>\n"+strings.Join(lines, "\n")+"\n</actor>\n</context>")
	}
	sections = append(sections, "</runtime-turn-context>")
	return strings.Join(sections, "\n\n")
}

// CurrentInstruction is the block an input's text goes to the model in,
// Junior's: on Slack with its author's id and name and its ts, each
// attribute when it has a value.
func CurrentInstruction(text, authorID, authorName, slackTS string) string {
	open := "<current-instruction"
	for _, a := range []struct{ name, value string }{{"author_id", authorID}, {"author_name", authorName}, {"slack_ts", slackTS}} {
		if a.value != "" {
			open += " " + a.name + `="` + EscapeXML(a.value) + `"`
		}
	}
	return open + ">\n" + EscapeXML(text) + "\n</current-instruction>"
}

// EscapeXML escapes s for a prompt block, as Junior's escapeXml does:
// &, <, >, " and '.
func EscapeXML(s string) string { return xmlEscaper.Replace(s) }

var xmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&apos;")
