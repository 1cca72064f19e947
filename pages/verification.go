package pages

import (
	"errors"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/sell"
	"github.com/assaykit/assay/snapshot"
)

// verificationData is the verification page's data.
type verificationData struct {
	ID     string
	Result *claims.Result
	Facts  []factView
	// Receipt is the stored receipt's JSON ("" when none); Order its
	// order.
	Receipt  string
	OrderID  string
	JWKS     string
	Tier     string
	Problem  string
	Action   string
	Evidence string
}

type factView struct {
	claims.AtomicFact
	Evidence []evidenceView
}

type evidenceView struct {
	claims.Evidence
	Domain  string
	Capture string
	// Why says whether it counted and why (the quality reason).
	Why string
}

// maxMarkedText bounds the text of a captured page shown (the page stays
// small on a phone).
const maxMarkedText = 60_000

// maxCaptureBytes bounds the content read for a captured page.
const maxCaptureBytes = 8 << 20

func (s *site) verification(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("verification_id")
	tok := strings.TrimSpace(r.Header.Get(httpgate.HeaderOrderToken))
	if r.Method == http.MethodPost {
		tok = strings.TrimSpace(r.PostFormValue("order_token"))
	} else if v := r.URL.Query().Get("order_token"); v != "" {
		tok = strings.TrimSpace(v)
	}
	signedIn := s.signedIn(r)
	form := verificationData{ID: id, Action: r.URL.Path}
	if tok == "" {
		s.render(w, r, http.StatusUnauthorized, "token-form", "Open a verification", signedIn, form)
		return
	}
	rec, ord, err := s.app.Verification(r.Context(), id, sell.ReadAccess{OrderToken: tok})
	switch {
	case errors.Is(err, claims.ErrNotFound):
		form.Problem = "No verification answers to this order token. Check that the token is the X-Agentic-Order-Token of the order that paid for verification " + id + "."
		s.render(w, r, http.StatusNotFound, "token-form", "Verification not found", signedIn, form)
		return
	case err != nil:
		s.fail(w, r, err)
		return
	}
	d := verificationData{ID: id, Result: rec.Result, Tier: rec.Tier, JWKS: s.jwksPath}
	if ord != nil {
		d.OrderID = ord.ID
		if s.app.Cashier != nil {
			if b, err := s.app.Cashier.Ledger().Receipt(r.Context(), ord.ID); err == nil {
				d.Receipt = string(b)
			} else if !errors.Is(err, payment.ErrReceiptNotFound) {
				s.log.WarnContext(r.Context(), "pages: receipt read failed", "order", ord.ID, "err", err)
			}
		}
	}
	byID := map[string]claims.Evidence{}
	for _, e := range rec.Result.Evidence {
		byID[e.ID] = e
	}
	for _, f := range rec.Result.AtomicFacts {
		fv := factView{AtomicFact: f}
		for _, eid := range f.EvidenceIDs {
			e, ok := byID[eid]
			if !ok {
				continue
			}
			ev := evidenceView{Evidence: e, Why: e.QualityReason}
			if u, err := url.Parse(e.URL); err == nil {
				ev.Domain = strings.TrimPrefix(u.Hostname(), "www.")
			}
			if e.SnapshotID != nil && s.p.opts.Snapshots != nil {
				ev.Capture = "/captures/" + url.PathEscape(*e.SnapshotID) + "?" + url.Values{"quote": {e.Excerpt}}.Encode()
			}
			fv.Evidence = append(fv.Evidence, ev)
		}
		d.Facts = append(d.Facts, fv)
	}
	w.Header().Set("Vary", "Accept")
	s.render(w, r, http.StatusOK, "verification", "Verification: "+string(rec.Result.Status), signedIn, d)
}

// captureData is the captured page's data.
type captureData struct {
	Snapshot *snapshot.Snapshot
	// Parts is the page's text cut around the marked quote.
	Parts  []textPart
	Quote  string
	Found  bool
	NoText string
}

type textPart struct {
	Text   string
	Marked bool
}

func (s *site) capture(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("snapshot_id")
	quote := r.URL.Query().Get("quote")
	if len(quote) > 4000 {
		quote = quote[:4000]
	}
	snap, blob, err := s.p.opts.Snapshots.Open(r.Context(), id)
	if err != nil {
		if errors.Is(err, snapshot.ErrNotFound) || errors.Is(err, snapshot.ErrNoContent) {
			if snap, gerr := s.p.opts.Snapshots.Get(r.Context(), id); gerr == nil {
				s.render(w, r, http.StatusOK, "capture", "Captured page", s.signedIn(r),
					captureData{Snapshot: snap, Quote: quote, NoText: "This capture kept no content (status: " + string(snap.Status) + ")."})
				return
			}
			s.errorPage(w, r, http.StatusNotFound, "Capture not found", "No captured page has this id; it may have been purged after its retention period.")
			return
		}
		s.fail(w, r, err)
		return
	}
	defer blob.Close()
	body, err := io.ReadAll(io.LimitReader(blob, maxCaptureBytes))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	ct := ""
	if snap.ContentType != nil {
		ct = *snap.ContentType
	}
	d := captureData{Snapshot: snap, Quote: quote}
	text := ""
	if n := snapshot.Normalize(body, ct); n != nil {
		text = n.Text
	}
	if text == "" {
		d.NoText = "This capture has no text to show (content type " + ct + ")."
	} else {
		d.Parts, d.Found = markQuote(text, quote, maxMarkedText)
	}
	s.render(w, r, http.StatusOK, "capture", "Captured page", s.signedIn(r), d)
}

// markQuote cuts text into parts with the quote's occurrence marked: the
// quote's words in order, whatever the case and the punctuation and
// spacing between them; an ellipsis in the quote is a gap (each part is
// marked). The text shown is bounded to about limit bytes, around the
// first mark.
func markQuote(text, quote string, limit int) ([]textPart, bool) {
	var res []*regexp.Regexp
	for _, part := range regexp.MustCompile(`\[?(…|\.\.\.)\]?`).Split(quote, -1) {
		words := strings.FieldsFunc(part, func(c rune) bool { return !unicode.IsLetter(c) && !unicode.IsDigit(c) })
		if len(words) == 0 {
			continue
		}
		for i, w := range words {
			words[i] = regexp.QuoteMeta(w)
		}
		re, err := regexp.Compile(`(?i)` + strings.Join(words, `[^\p{L}\p{N}]+`))
		if err == nil {
			res = append(res, re)
		}
	}
	var spans [][2]int
	pos := 0
	for _, re := range res {
		a, b, ok := findWhole(re, text, pos)
		if !ok {
			spans = nil
			break
		}
		spans = append(spans, [2]int{a, b})
		pos = b
	}
	start, end := 0, len(text)
	if len(text) > limit {
		center := 0
		if len(spans) > 0 {
			center = spans[0][0]
		}
		start = max(0, center-limit/4)
		end = min(len(text), start+limit)
		for start > 0 && !isBoundary(text, start) {
			start--
		}
		for end < len(text) && !isBoundary(text, end) {
			end++
		}
	}
	var parts []textPart
	at := start
	for _, sp := range spans {
		if sp[0] < at || sp[1] > end {
			continue
		}
		parts = append(parts, textPart{Text: text[at:sp[0]]}, textPart{Text: text[sp[0]:sp[1]], Marked: true})
		at = sp[1]
	}
	if start > 0 {
		parts = append([]textPart{{Text: "… "}}, parts...)
	}
	parts = append(parts, textPart{Text: text[at:end]})
	if end < len(text) {
		parts = append(parts, textPart{Text: " …"})
	}
	return parts, len(spans) > 0
}

// findWhole finds re in text from pos where it starts and ends on whole
// words ("845" is not in "8453").
func findWhole(re *regexp.Regexp, text string, pos int) (int, int, bool) {
	for pos <= len(text) {
		loc := re.FindStringIndex(text[pos:])
		if loc == nil {
			return 0, 0, false
		}
		a, b := pos+loc[0], pos+loc[1]
		before, _ := utf8.DecodeLastRuneInString(text[:a])
		after, _ := utf8.DecodeRuneInString(text[b:])
		if !isWordRune(before) && !isWordRune(after) {
			return a, b, true
		}
		_, size := utf8.DecodeRuneInString(text[a:])
		pos = a + max(size, 1)
	}
	return 0, 0, false
}

func isWordRune(r rune) bool {
	return r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r))
}

func isBoundary(s string, i int) bool { return i == 0 || i == len(s) || s[i]&0xC0 != 0x80 }
