package webpage

import (
	"net/http"
	"time"
)

// ReadForm reads the form of r, at most max bytes. The gateway gives every request body a time
// to arrive (a read deadline set before any handler runs); once the form is read that deadline
// is lifted, because net/http then reads on in the background to notice a client that leaves,
// and a deadline passing there would cancel a page still at work.
func ReadForm(w http.ResponseWriter, r *http.Request, max int64) error {
	r.Body = http.MaxBytesReader(w, r.Body, max)
	if err := r.ParseForm(); err != nil {
		return err
	}
	_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
	return nil
}
