package graph

import (
	"bufio"
	"strings"
)

// ReadNpzArray reads one array of the .npz archive at path whole, with
// its shape: the first of names it holds, or its only array when it holds
// none of them (np.savez(path, a) stores a as arr_0). An array of Python
// objects (a pickle) is refused, never loaded.
func ReadNpzArray(path string, names ...string) (*NpyArray, error) {
	z, err := openNpz(path)
	if err != nil {
		return nil, err
	}
	defer z.Close()
	name := z.first(names...)
	if all := z.names(); name == "" && len(all) == 1 {
		name = all[0]
	}
	if name == "" {
		return nil, errorf(path, 0, "no array named %s, and %d arrays (%s): save one, or name it %s", strings.Join(names, " or "), len(z.names()), strings.Join(z.names(), ", "), names[0])
	}
	full := path + ":" + name + ".npy"
	if h, err := readNpyHeaderRaw(z.rawHeader(z.members[name]), full); err == nil {
		if err := refusePickle(full, h.descr); err != nil {
			return nil, err
		}
	}
	a, err := z.open(name)
	if err != nil {
		return nil, err
	}
	defer a.Close()
	arr, err := a.elems(0, a.n)
	if err != nil {
		return nil, err
	}
	arr.Shape = a.Shape
	return arr, nil
}

// WriteNpy writes a (float32, int32, int64 …) array as a NumPy .npy file
// through path.tmp and a rename.
func WriteNpy(path string, a NpyData) error {
	return writeFileAtomic(path, func(w *bufio.Writer) error { return encodeNpy(w, a) })
}
