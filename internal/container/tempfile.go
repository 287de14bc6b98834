package container

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// openTemp opens tmp, a temporary in the output's directory, for writing
// (created with perm when missing) without ever writing through a link: a
// symbolic link planted at tmp (O_NOFOLLOW) or a file with other hard
// links, or not a regular file, is refused with a *TempLinkError and left
// as it is, so that nobody who can write the directory makes a run
// overwrite another file.
func openTemp(tmp string, perm os.FileMode) (*os.File, error) {
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|syscall.O_NOFOLLOW, perm)
	if errors.Is(err, syscall.ELOOP) {
		return nil, &TempLinkError{Path: tmp, What: "a symbolic link"}
	}
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	what := ""
	if !st.Mode().IsRegular() {
		what = "not a regular file"
	} else if sys, ok := st.Sys().(*syscall.Stat_t); ok && sys.Nlink > 1 {
		what = "a file with other hard links"
	}
	if what != "" {
		f.Close()
		return nil, &TempLinkError{Path: tmp, What: what}
	}
	return f, nil
}

// TempLinkError refuses an output whose temporary name is taken by a link.
type TempLinkError struct{ Path, What string }

func (e *TempLinkError) Error() string {
	return fmt.Sprintf("%s is %s: refusing to write the output through it (remove it)", e.Path, e.What)
}

// checkTemp refuses, before any work, a temporary name openTemp would
// refuse; a missing one is fine.
func checkTemp(tmp string) error {
	st, err := os.Lstat(tmp)
	if err != nil {
		return nil
	}
	switch sys, ok := st.Sys().(*syscall.Stat_t); {
	case st.Mode()&os.ModeSymlink != 0:
		return &TempLinkError{Path: tmp, What: "a symbolic link"}
	case !st.Mode().IsRegular():
		return &TempLinkError{Path: tmp, What: "not a regular file"}
	case ok && sys.Nlink > 1:
		return &TempLinkError{Path: tmp, What: "a file with other hard links"}
	}
	return nil
}
