package webpage

import (
	"net/http"
	"time"
)

// ReadForm reads the form of r, at most max bytes. The gateway gives every request body a time
// to arrive (a read deadline set before any handler runs); once the form is read that deadline
// is lifted, so that a page at work past it keeps its connection: net/http reads to the body's
// end after the handler, and that read would fail on a passed deadline.
func ReadForm(w http.ResponseWriter, r *http.Request, max int64) error {
	r.Body = http.MaxBytesReader(w, r.Body, max)
	if err := r.ParseForm(); err != nil {
		return err
	}
	_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
	return nil
}
