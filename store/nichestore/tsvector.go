package nichestore

import (
	"cmp"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5/pgtype"
)

// PostgreSQL's search vectors built in Go, for the bulk import's COPY
// (import.go). niche_evaluations.tsv and tsp are filled by a trigger
// (migration 0036) with
//
//	tsv = setweight(to_tsvector('simple', st), 'A') ||
//	      setweight(to_tsvector('simple', sb), 'B') ||
//	      setweight(to_tsvector('simple', sc), 'C')
//	tsp = to_tsvector('simple', st || ' ' || sp)
//
// unless the insert gives them. Parsing the text there was two thirds of
// the server's time in an import's COPY; a vector sent in binary is only
// checked. Written by hand because the result must be exactly the
// server's, which holds for text whose every word PostgreSQL's default
// parser reads as one token, itself (pgWord); for any other text
// searchVectors gives nothing and the trigger computes the vectors.
// TestSearchVectorsAreTheServers compares them with the server's.

// Limits of a tsvector (PostgreSQL's tsearch/ts_type.h): positions
// above maxTSPos are clamped, a lexeme keeps at most maxTSPositions
// positions, words of maxTSWord bytes or more are dropped. Text reaching
// any of them is left to the server.
const (
	maxTSPos       = 16383
	maxTSPositions = 255
	maxTSWord      = 2046
)

// searchVectors returns tsv and tsp of the search columns st, sp, sb and
// sc as migration 0036's trigger computes them, or ok false when the text
// is not one searchVectors can vouch for (then the server computes them).
func searchVectors(st, sp, sb, sc string) (tsv, tsp pgtype.TSVector, ok bool) {
	var b vectorBuilder
	if !b.add(st, pgtype.TSVectorWeightA) || !b.add(sb, pgtype.TSVectorWeightB) || !b.add(sc, pgtype.TSVectorWeightC) {
		return tsv, tsp, false
	}
	if tsv, ok = b.vector(); !ok {
		return tsv, tsp, false
	}
	b.reset()
	if !b.add(st, pgtype.TSVectorWeightD) || !b.add(sp, pgtype.TSVectorWeightD) {
		return tsv, tsp, false
	}
	tsp, ok = b.vector()
	return tsv, tsp, ok
}

// vectorBuilder collects the words of one vector with their positions:
// each word of each added text takes the next position, as to_tsvector
// numbers the words of one text and || shifts the right operand's
// positions past the left one's last (for text of ordinary words, with
// no position skipped, both are the count of words so far).
type vectorBuilder struct {
	words []posWord
}

// posWord is a word at a position; key is its first eight bytes, big
// endian, which order most words without comparing strings.
type posWord struct {
	key  uint64
	word string
	pos  pgtype.TSVectorPosition
}

func (b *vectorBuilder) reset() { b.words = b.words[:0] }

// add appends the words of text (single spaces between them, as the
// search columns are) with weight w; false when a word is not a pgWord
// or the positions run past maxTSPos.
func (b *vectorBuilder) add(text string, w pgtype.TSVectorWeight) bool {
	for rest := text; rest != ""; {
		var word string
		word, rest, _ = strings.Cut(rest, " ")
		if word == "" {
			continue
		}
		if !pgWord(word) || len(b.words) >= maxTSPos {
			return false
		}
		var key uint64
		for i := range 8 {
			key <<= 8
			if i < len(word) {
				key |= uint64(word[i])
			}
		}
		b.words = append(b.words, posWord{key, word, pgtype.TSVectorPosition{Position: uint16(len(b.words) + 1), Weight: w}})
	}
	return true
}

// vector returns the words as a tsvector: lexemes in byte order (the
// server's order), each with its positions in increasing order.
func (b *vectorBuilder) vector() (pgtype.TSVector, bool) {
	slices.SortFunc(b.words, func(x, y posWord) int {
		if x.key != y.key {
			return cmp.Compare(x.key, y.key)
		}
		if len(x.word) > 8 || len(y.word) > 8 {
			if c := strings.Compare(x.word, y.word); c != 0 {
				return c
			}
		}
		return cmp.Compare(x.pos.Position, y.pos.Position)
	})
	v := pgtype.TSVector{Valid: true, Lexemes: make([]pgtype.TSVectorLexeme, 0, len(b.words))}
	positions := make([]pgtype.TSVectorPosition, len(b.words))
	for i, pw := range b.words {
		positions[i] = pw.pos
		if i > 0 && pw.key == b.words[i-1].key && pw.word == b.words[i-1].word {
			l := &v.Lexemes[len(v.Lexemes)-1]
			l.Positions = positions[i-len(l.Positions) : i+1]
			if len(l.Positions) > maxTSPositions {
				return v, false
			}
			continue
		}
		v.Lexemes = append(v.Lexemes, pgtype.TSVectorLexeme{Word: pw.word, Positions: positions[i : i+1]})
	}
	return v, true
}

// lexemes returns the distinct lexemes of a and b, in byte order (both
// are, each lexeme once).
func lexemes(a, b pgtype.TSVector) []string {
	out := make([]string, 0, len(a.Lexemes)+len(b.Lexemes))
	i, j := 0, 0
	for i < len(a.Lexemes) || j < len(b.Lexemes) {
		switch {
		case j == len(b.Lexemes) || i < len(a.Lexemes) && a.Lexemes[i].Word < b.Lexemes[j].Word:
			out = append(out, a.Lexemes[i].Word)
			i++
		case i == len(a.Lexemes) || b.Lexemes[j].Word < a.Lexemes[i].Word:
			out = append(out, b.Lexemes[j].Word)
			j++
		default:
			out = append(out, a.Lexemes[i].Word)
			i, j = i+1, j+1
		}
	}
	return out
}

// pgWord reports whether PostgreSQL's default text search parser reads w
// as one token that the simple configuration keeps as it is: lower-case
// ASCII letters and digits, except that a digit, an e and a digit in a
// row may start a number in scientific notation (1e5) that ends the
// token (12e34abc is read as 12e34 and abc): such a word is vouched for
// only when it is that number. Other words (any other character, one too
// long) are left to the server.
func pgWord(w string) bool {
	if len(w) == 0 || len(w) >= maxTSWord {
		return false
	}
	digits := false
	for i := range len(w) {
		c := w[i]
		switch {
		case '0' <= c && c <= '9':
			digits = true
		case 'a' <= c && c <= 'z':
		default:
			return false
		}
	}
	if !digits {
		return true
	}
	for i := 1; i+1 < len(w); i++ {
		if w[i] == 'e' && isDigit(w[i-1]) && isDigit(w[i+1]) {
			return sciNumber(w)
		}
	}
	return true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// sciNumber reports whether w is digits, an e and digits.
func sciNumber(w string) bool {
	before, after, ok := strings.Cut(w, "e")
	return ok && before != "" && after != "" && strings.Trim(before, "0123456789") == "" && strings.Trim(after, "0123456789") == ""
}
