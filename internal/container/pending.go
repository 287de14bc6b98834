package container

import "os"

// Pending is an output written over a long time (a CPU profile): its
// bytes go to NAME.tmp, renamed to NAME by Commit once complete, so a full
// disk or a crash never leaves a truncated file at NAME. The first write
// error is kept and returned by Commit (writers such as runtime/pprof drop
// them).
type Pending struct {
	path string
	f    *os.File
	err  error
}

// Create starts the output path.
func Create(path string) (*Pending, error) {
	f, err := openTemp(path+TmpSuffix, 0o666)
	if err != nil {
		return nil, err
	}
	if err := f.Truncate(0); err != nil {
		f.Close()
		return nil, err
	}
	return &Pending{path: path, f: f}, nil
}

func (p *Pending) Write(b []byte) (int, error) {
	if p.err != nil {
		return 0, p.err
	}
	n, err := p.f.Write(b)
	p.err = err
	return n, err
}

// Abort closes and removes the temporary.
func (p *Pending) Abort() {
	p.f.Close()
	os.Remove(p.f.Name())
}

// Commit syncs and closes the temporary and renames it to the output's
// path; on any error (a write's included) the temporary is removed.
func (p *Pending) Commit() error {
	err := p.err
	if err == nil {
		err = p.f.Sync()
	}
	if cerr := p.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(p.f.Name(), p.path)
	}
	if err != nil {
		os.Remove(p.f.Name())
	}
	return err
}
