package render

import (
	"strings"
	"unicode"
)

// zeroWidth breaks a mention or a link without showing: GitHub links "@name" and
// "http://…" in the text, not "@&#8203;name".
const zeroWidth = "&#8203;"

// Text is s as inline markdown that renders as the same characters and nothing
// else: on one line, HTML and markdown syntax escaped (a | cannot split a table
// row, a ` cannot open a code span, a < cannot open a tag), @-mentions and
// autolinks broken by a zero-width space, control and bidi characters dropped.
// Every value a PR could influence (cell and unit names, file names, notes)
// reaches report.md and the PR comment through it or Code.
func Text(s string) string {
	var b strings.Builder
	rs := []rune(s)
	for i, r := range rs {
		switch {
		case r == '\n' || r == '\r' || r == '\t':
			b.WriteByte(' ')
		case hidden(r):
			// dropped: they reorder or break what the reader sees
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '&':
			b.WriteString("&amp;")
		case r == '"':
			b.WriteString("&quot;")
		case r == '@':
			b.WriteString("@" + zeroWidth)
		case r == ':' && strings.HasPrefix(string(rs[i+1:]), "//"):
			b.WriteString(":" + zeroWidth)
		case r == '.' && i >= 3 && strings.EqualFold(string(rs[i-3:i]), "www"):
			b.WriteString(zeroWidth + ".")
		case strings.ContainsRune("\\`*_[]|!~$#", r):
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Code is s as a code span (where markdown shows as it is) when s holds nothing
// that could end the span or the table row it is in (a backtick, a pipe, a line
// break), no @, < or > and no URL, and no control or bidi character; else s as
// escaped Text. Cell, unit, function and file names are usually spans.
func Code(s string) string {
	if s != "" && !strings.Contains(s, "://") && !strings.ContainsFunc(s, func(r rune) bool {
		return strings.ContainsRune("`|@<>", r) || hidden(r)
	}) {
		return "`" + s + "`"
	}
	return Text(s)
}

// hidden reports a control, bidi or line-separator character: they reorder or
// break what the reader sees.
func hidden(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) || r == '\u2028' || r == '\u2029'
}
