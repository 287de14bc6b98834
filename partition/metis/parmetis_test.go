//go:build cgo

package metis

import (
	"fmt"
	"hash/crc32"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/mpi"
	"github.com/supergcn/supergcn/mpi/mpitest"
	"github.com/supergcn/supergcn/partition"
)

// TestParMetisMPI re-runs this test binary under `mpirun -np 2`
// (mpitest.Launch); the two ranks partition graphs with ParMETIS
// (PT-Scotch) and print a checksum of the gathered owner array, which must
// be the same on both.
func TestParMetisMPI(t *testing.T) {
	if mpitest.Ranks() > 0 {
		parmetisRank(t)
		return
	}
	out, timedOut, err := mpitest.Launch(t, 2, "^TestParMetisMPI$", 3*time.Minute)
	if timedOut || err != nil {
		t.Fatalf("mpirun -np 2 (timed out: %v): %v\n%s", timedOut, err, out)
	}
	sums := regexp.MustCompile(`PARMETIS rank (\d) (\w+) owners ([0-9a-f]+)`).FindAllStringSubmatch(string(out), -1)
	byCase := map[string][]string{}
	for _, m := range sums {
		byCase[m[2]] = append(byCase[m[2]], m[3])
	}
	if len(byCase) != 2 {
		t.Fatalf("expected 2 cases from each of 2 ranks:\n%s", out)
	}
	for name, s := range byCase {
		if len(s) != 2 || s[0] != s[1] {
			t.Fatalf("case %s: ranks disagree on the owner array: %v\n%s", name, s, out)
		}
	}
	t.Logf("%s", strings.TrimSpace(string(out)))
}

// parmetisRank is the body each MPI rank runs.
func parmetisRank(t *testing.T) {
	if _, err := mpi.InitThread(mpi.ThreadMultiple); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := mpi.Finalize(); err != nil {
			t.Error(err)
		}
	}()
	world := mpi.World()
	rank, size := world.Rank(), world.Size()
	run := func(f func() error) {
		t.Helper()
		if err := mpi.Serialize(f); err != nil {
			t.Fatalf("rank %d: %v", rank, err)
		}
	}

	// Clique ring: the ring arcs are the cut to find.
	g := cliqueRing(8, 12)
	var owner []int32
	run(func() (err error) {
		owner, err = ParMetis(world.Fortran(), rank, size, g, 8, Options{Weights: WeightsNone, Seed: 1})
		return err
	})
	st, err := partition.ComputeStats(g, owner, 8, nil)
	mustNoErr(t, err)
	rnd, err := partition.ComputeStats(g, partition.Random(g.NumRows, 8, 1), 8, nil)
	mustNoErr(t, err)
	if st.EdgeCut*4 > rnd.EdgeCut || st.NodeImbalance > 1.1 {
		t.Fatalf("rank %d: clique ring cut %d (random %d), imbalance %.3f", rank, st.EdgeCut, rnd.EdgeCut, st.NodeImbalance)
	}
	fmt.Printf("PARMETIS rank %d ring owners %08x cut %d imbalance %.3f\n", rank, ownerSum(owner), st.EdgeCut, st.NodeImbalance)

	// Two constraints (degree, train) folded into one weight.
	g = randomGraph(2000, 5, 21)
	mask := make([]uint8, 2000)
	for v := 0; v < len(mask); v += 3 {
		mask[v] = graph.InTrain
	}
	run(func() (err error) {
		owner, err = ParMetis(world.Fortran(), rank, size, g, 4, Options{Weights: WeightsDegreeTrain, TrainMask: mask})
		return err
	})
	mustNoErr(t, partition.ValidateOwner(owner, 2000, 4))
	fmt.Printf("PARMETIS rank %d weighted owners %08x\n", rank, ownerSum(owner))

	// A bad argument on one rank only: every rank returns an error, none hangs.
	vd := partition.NodeRanges(4, size)
	nloc := int(vd[rank+1] - vd[rank])
	ptr := make([]int32, nloc+1)
	if rank == 1 {
		ptr = ptr[:nloc] // wrong length
	}
	run(func() error {
		if _, err := ParMetisDistributed(world.Fortran(), vd, ptr, nil, nil, 1, 2, Options{}); err == nil {
			return fmt.Errorf("bad row offsets on rank 1 accepted")
		}
		return nil
	})
}

func ownerSum(owner []int32) uint32 {
	b := make([]byte, 0, 4*len(owner))
	for _, p := range owner {
		b = append(b, byte(p), byte(p>>8), byte(p>>16), byte(p>>24))
	}
	return crc32.ChecksumIEEE(b)
}

// TestParMetisWithoutMPI: without MPI the call fails cleanly.
func TestParMetisWithoutMPI(t *testing.T) {
	if mpitest.Ranks() > 0 {
		t.Skip("runs outside MPI only")
	}
	if _, err := ParMetis(0, 0, 1, cliqueRing(2, 3), 2, Options{}); err == nil || !strings.Contains(err.Error(), "not initialized") {
		t.Fatalf("got %v", err)
	}
}
