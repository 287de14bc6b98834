package affinity

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path"
	"strconv"
	"strings"
)

// Quota is a cgroup's CPU bandwidth limit.
type Quota struct {
	CPUs float64 // quota / period; 0: no limit
	File string  // the file that set it (the tightest along the cgroup's ancestors)
	Dir  string  // the cgroup directory (ranks in the same one share the quota)
}

// CgroupQuota returns this process's CPU quota: the tightest cpu.max
// (cgroup v2) or cpu.cfs_quota_us / cpu.cfs_period_us (cgroup v1 cpu
// controller) from its cgroup up to the hierarchy's root. fsys is the file
// system rooted at "/" (os.DirFS("/")); paths inside it have no leading
// slash. A system without cgroups, or without a cpu controller, has no
// quota (a zero Quota and no error); a file present but malformed is an
// error naming it.
func CgroupQuota(fsys fs.FS) (Quota, error) {
	dir, mount, v2, err := cpuCgroupDir(fsys)
	if err != nil || dir == "" {
		return Quota{}, err
	}
	var q Quota
	for d := dir; ; d = path.Dir(d) {
		cpus, file, err := readQuota(fsys, d, v2)
		if err != nil {
			return Quota{}, err
		}
		if cpus > 0 && (q.CPUs == 0 || cpus < q.CPUs) {
			q = Quota{CPUs: cpus, File: "/" + file, Dir: "/" + dir}
		}
		if d == mount || !strings.HasPrefix(d, mount+"/") {
			break
		}
	}
	return q, nil
}

// readQuota reads the quota of cgroup directory d (0: none).
func readQuota(fsys fs.FS, d string, v2 bool) (float64, string, error) {
	if v2 {
		file := path.Join(d, "cpu.max")
		b, err := readOptional(fsys, file)
		if b == nil {
			return 0, file, err
		}
		f := strings.Fields(string(b))
		if len(f) == 0 || len(f) > 2 {
			return 0, file, fmt.Errorf("/%s:1: %q is not \"QUOTA PERIOD\"", file, strings.TrimSpace(string(b)))
		}
		period := "100000"
		if len(f) == 2 {
			period = f[1]
		}
		if f[0] == "max" {
			return 0, file, nil
		}
		c, err := ratio(f[0], period)
		if err != nil {
			return 0, file, fmt.Errorf("/%s:1: %v", file, err)
		}
		return c, file, nil
	}
	qf, pf := path.Join(d, "cpu.cfs_quota_us"), path.Join(d, "cpu.cfs_period_us")
	qb, err := readOptional(fsys, qf)
	if qb == nil {
		return 0, qf, err
	}
	quota := strings.TrimSpace(string(qb))
	if quota == "-1" {
		return 0, qf, nil
	}
	pb, err := fs.ReadFile(fsys, pf)
	if err != nil {
		return 0, qf, fmt.Errorf("/%s: %w", pf, err)
	}
	c, err := ratio(quota, strings.TrimSpace(string(pb)))
	if err != nil {
		return 0, qf, fmt.Errorf("/%s:1: %v", qf, err)
	}
	return c, qf, nil
}

// ratio parses quota and period (microseconds) into CPUs.
func ratio(quota, period string) (float64, error) {
	q, err1 := strconv.ParseInt(quota, 10, 64)
	p, err2 := strconv.ParseInt(period, 10, 64)
	if err1 != nil || err2 != nil || q <= 0 || p <= 0 {
		return 0, fmt.Errorf("quota %q and period %q are not positive microseconds", quota, period)
	}
	c := float64(q) / float64(p)
	if math.IsInf(c, 0) {
		return 0, fmt.Errorf("quota %q is out of range", quota)
	}
	return c, nil
}

// cpuCgroupDir finds the directory (relative to fsys) of this process's
// cgroup that holds its CPU quota: the cgroup v1 cpu controller's when one
// is mounted, else the cgroup v2 unified hierarchy's, and the hierarchy's
// mount point. It returns "" when there is neither.
func cpuCgroupDir(fsys fs.FS) (dir, mount string, v2 bool, err error) {
	cg, err := readOptional(fsys, "proc/self/cgroup")
	if cg == nil {
		return "", "", false, err
	}
	mi, err := readOptional(fsys, "proc/self/mountinfo")
	if mi == nil {
		return "", "", false, err
	}
	var v1Path, v2Path string
	hasV2 := false
	for i, line := range strings.Split(string(cg), "\n") {
		if line == "" {
			continue
		}
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			return "", "", false, fmt.Errorf("/proc/self/cgroup:%d: %q is not ID:CONTROLLERS:PATH", i+1, line)
		}
		switch {
		case f[0] == "0" && f[1] == "":
			v2Path, hasV2 = f[2], true
		case hasController(f[1], "cpu"):
			v1Path = f[2]
		}
	}
	for i, line := range strings.Split(string(mi), "\n") {
		if line == "" {
			continue
		}
		root, mount, fstype, super, ok := parseMountinfo(line)
		if !ok {
			return "", "", false, fmt.Errorf("/proc/self/mountinfo:%d: not a mountinfo line", i+1)
		}
		switch {
		case v1Path != "" && fstype == "cgroup" && hasController(super, "cpu"):
			return join(mount, root, v1Path), strings.TrimPrefix(mount, "/"), false, nil
		case v1Path == "" && hasV2 && fstype == "cgroup2":
			return join(mount, root, v2Path), strings.TrimPrefix(mount, "/"), true, nil
		}
	}
	return "", "", false, nil
}

// join is the directory of cgroup path p under a mount of the hierarchy's
// root at mount (paths relative to "/").
func join(mount, root, p string) string {
	rel, ok := strings.CutPrefix(p, root)
	switch {
	case root == "/":
		rel = p
	case !ok: // the cgroup lies outside the mounted subtree (another namespace's view): the mount's own quota
		rel = "/"
	}
	return strings.TrimPrefix(path.Join(mount, rel), "/")
}

// hasController reports whether the comma-separated list has c.
func hasController(list, c string) bool {
	for _, x := range strings.Split(list, ",") {
		if x == c {
			return true
		}
	}
	return false
}

// parseMountinfo returns the root, mount point, file system type and super
// options of a /proc/self/mountinfo line.
func parseMountinfo(line string) (root, mount, fstype, super string, ok bool) {
	f := strings.Fields(line)
	sep := -1
	for i := 6; i < len(f); i++ {
		if f[i] == "-" {
			sep = i
			break
		}
	}
	if sep < 0 || sep+1 >= len(f) {
		return "", "", "", "", false
	}
	if sep+3 < len(f) {
		super = f[sep+3]
	}
	return unescape(f[3]), unescape(f[4]), f[sep+1], super, true
}

// unescape undoes mountinfo's octal escapes (\040 for a space).
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// readOptional reads file from fsys: nil and no error when it does not
// exist, nil and an error naming it when it cannot be read.
func readOptional(fsys fs.FS, file string) ([]byte, error) {
	b, err := fs.ReadFile(fsys, file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("/%s: %w", file, err)
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}
